"""The example server, but each reply after the hello waits a while (within the reply
bound): a campaign on it is slow, and a SIGTERM must still stop it within seconds.

    python3 slow.py [SECONDS]      (default 1)
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Examples", "PythonServer"))
import server  # noqa: E402

pause = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
state = server.Server(batch=False)
for line in sys.stdin:
    m = json.loads(line)
    if m["op"] != "hello":
        time.sleep(pause)
    print(json.dumps(state.message(m), separators=(",", ":")), flush=True)
