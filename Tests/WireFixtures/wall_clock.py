# The example server, but every request answered while the wall clock's millisecond is
# odd gets device_unknown: valid on the wire, not a function of the messages.
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "PythonServer"))
import server

class WallClock(server.Server):
    def handle(self, m):
        out = super().handle(m)
        if m["kind"] == "check" and time.time_ns() // 1_000_000 % 2 == 1:
            out["status"] = "device_unknown"
            out.pop("stoppedSince", None)
        return out

server.serve_stdio(WallClock())
