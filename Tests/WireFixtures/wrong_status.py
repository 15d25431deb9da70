# The example server, but a query it serves is answered app_pending: a valid reply on the
# wire with the wrong status, which only the checkers can see.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "PythonServer"))
import server

class WrongStatus(server.Server):
    def handle(self, m):
        out = super().handle(m)
        if m["kind"] == "query" and out["status"] == "ok":
            out["status"] = "app_pending"
        return out

server.serve_stdio(WrongStatus())
