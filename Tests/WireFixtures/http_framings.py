"""A raw-socket HTTP service that answers in every framing HTTP/1.x allows, one after
another, keeping the S rules with the example server's `Server` (a state per
X-SimKit-Session header):

    python3 http_framings.py [FRAMING ...] [--idle-close-ms N] [--portal] [--huge] [--no-batch]

FRAMING (default: all of them, in turn, message by message):
  length      HTTP/1.1, Content-Length, kept alive
  chunked     HTTP/1.1, chunked in small pieces with chunk extensions and a trailer
  continue    a 100 Continue (and a 102) first, then the answer with Content-Length
  close       HTTP/1.1, Connection: close, no Content-Length: the body ends at the close
  http10      HTTP/1.0 with Content-Length and Connection: keep-alive
  http10close HTTP/1.0, no Content-Length, closed
  bare-lf     HTTP/1.1 with bare LF line ends and Content-Length
--idle-close-ms N closes a connection idle for N ms (as Node does after 5 s);
--portal answers every request after the hello and the reset with a captive portal's
200 login page (HTML, chunked); --huge answers them with 200 MiB of one-byte chunks;
--no-batch announces no batches (lock step).
Listens on a free port, printed on standard output.
"""
import json
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "PythonServer"))
import server  # noqa: E402

ALL = ["length", "chunked", "continue", "close", "http10", "http10close", "bare-lf"]
args = sys.argv[1:]
idle_ms = None
portal = "--portal" in args
huge = "--huge" in args
batch = "--no-batch" not in args
if "--idle-close-ms" in args:
    idle_ms = int(args[args.index("--idle-close-ms") + 1])
framings = [a for a in args if a in ALL] or ALL
states, lock, counter = {}, threading.Lock(), [0]


def read_request(conn, buf):
    """One request (head and Content-Length body) from conn, or None at its close."""
    while b"\r\n\r\n" not in buf[0]:
        data = conn.recv(65536)
        if not data:
            return None
        buf[0] += data
    head, rest = buf[0].split(b"\r\n\r\n", 1)
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, value = line.split(b":", 1)
        headers[name.strip().lower().decode()] = value.strip().decode()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        data = conn.recv(65536)
        if not data:
            return None
        rest += data
    buf[0] = rest[length:]
    return headers, rest[:length]


def answer(conn, framing, body):
    """Sends body in the framing; returns whether the connection stays open."""
    json_type = b"Content-Type: application/json\r\n"
    if framing == "length":
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + json_type + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return True
    if framing == "chunked":
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + json_type + b"Transfer-Encoding: chunked\r\nTrailer: X-Done\r\n\r\n")
        for i in range(0, len(body), 7):
            piece = body[i:i + 7]
            conn.sendall(b"%x;piece=%d\r\n" % (len(piece), i) + piece + b"\r\n")
        conn.sendall(b"0\r\nX-Done: yes\r\n\r\n")
        return True
    if framing == "continue":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        conn.sendall(b"HTTP/1.1 102 Processing\r\n\r\n")
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + json_type + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return True
    if framing == "close":
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + json_type + b"Connection: close\r\n\r\n" + body)
        return False
    if framing == "http10":
        conn.sendall(b"HTTP/1.0 200 OK\r\n" + json_type + b"Connection: keep-alive\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        return True
    if framing == "http10close":
        conn.sendall(b"HTTP/1.0 200 OK\r\n" + json_type + b"\r\n" + body)
        return False
    if framing == "bare-lf":
        conn.sendall(b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: %d\n\n" % len(body) + body)
        return True
    raise ValueError(framing)


def serve(conn):
    buf = [b""]
    if idle_ms is not None:
        conn.settimeout(idle_ms / 1000)
    with conn:
        while True:
            try:
                got = read_request(conn, buf)
            except socket.timeout:
                return                      # idle too long: close, as Node does
            if got is None:
                return
            headers, body = got
            session = headers.get("x-simkit-session", "")
            with lock:
                if session not in states:
                    states[session] = server.Server(batch=batch)
                state = states[session]
                framing = framings[counter[0] % len(framings)]
                counter[0] += 1
            message = json.loads(body)
            if huge and message["op"] not in ("hello", "reset"):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                block = b"1\r\nx\r\n" * 65536
                try:
                    for _ in range(200 * 16):
                        conn.sendall(block)
                except OSError:
                    pass
                return
            if portal and message["op"] not in ("hello", "reset"):
                page = b"<html><head><title>Hotel Wi-Fi</title></head><body>Please log in</body></html>"
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                             + b"%x\r\n" % len(page) + page + b"\r\n0\r\n\r\n")
                continue
            reply = json.dumps(state.message(message), separators=(",", ":")).encode()
            if not answer(conn, framing, reply):
                return


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(f"listening on http://127.0.0.1:{listener.getsockname()[1]}/simkit", flush=True)
while True:
    c, _ = listener.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
