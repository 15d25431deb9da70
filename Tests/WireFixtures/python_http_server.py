"""A service in Python's `http.server` with its defaults: HTTP/1.0, so every answer has no
Content-Length and ends by closing the connection, one connection at a time.

    python3 python_http_server.py

listens on a free port (printed on standard output) and keeps the S rules with the
example server's `Server` (Examples/PythonServer/server.py), a state per X-SimKit-Session,
each in an SQLite file of its own in a temporary directory (S10: a `restart` message
reopens it).
"""
import json
import os
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, HTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "PythonServer"))
import server  # noqa: E402

states = {}
data = tempfile.mkdtemp(prefix="simkit-fixture-pyhttp-")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        session = self.headers.get("X-SimKit-Session", "")
        if session not in states:
            states[session] = server.Server(os.path.join(data, f"session-{len(states)}.sqlite"))
        reply = json.dumps(states[session].transaction(json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, *args):
        pass


httpd = HTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on http://127.0.0.1:{httpd.server_address[1]}/simkit", flush=True)
httpd.serve_forever()
