"""A service in Python's `http.server` with its defaults: HTTP/1.0, so every answer has no
Content-Length and ends by closing the connection, one connection at a time.

    python3 python_http_server.py [--close] [--slow SECONDS]

--close: HTTP/1.1 (`protocol_version`), each answer with a `Connection: close` header and
no Content-Length, so that its body ends at the close on an HTTP/1.1 connection.
--slow SECONDS: each reply after the hello waits that long (within the reply bound), in
lock step (no batches), a thread a connection: a campaign on it is slow, and a SIGTERM
must still stop it within seconds.

listens on a free port (printed on standard output) and keeps the S rules with the
example server's `Server` (Examples/PythonServer/server.py), a state per X-SimKit-Session,
each in an SQLite file of its own in a temporary directory (S10: a `restart` message
reopens it).
"""
import json
import os
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "PythonServer"))
import server  # noqa: E402

states = {}
close = "--close" in sys.argv[1:]
slow = float(sys.argv[sys.argv.index("--slow") + 1]) if "--slow" in sys.argv else None
data = tempfile.mkdtemp(prefix="simkit-fixture-pyhttp-")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1" if close else "HTTP/1.0"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        session = self.headers.get("X-SimKit-Session", "")
        if session not in states:
            db = os.path.join(data, f"session-{len(states)}.sqlite")
            states[session] = server.Server(db) if slow is None else server.Server(db, batch=False)
        message = json.loads(body)
        if slow is not None and message.get("op") != "hello":
            time.sleep(slow)
        reply = json.dumps(states[session].transaction(message))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, *args):
        pass


httpd = (HTTPServer if slow is None else ThreadingHTTPServer)(("127.0.0.1", 0), Handler)
print(f"listening on http://127.0.0.1:{httpd.server_address[1]}/simkit", flush=True)
httpd.serve_forever()
