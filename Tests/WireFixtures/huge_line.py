"""Answers the hello and the reset, then a 200 MiB line: SimKit must stop reading at its
bound (1 MiB) with a server-protocol verdict, never hold the whole line."""
import json
import sys

for line in sys.stdin:
    m = json.loads(line)
    if m["op"] in ("hello", "reset"):
        print(json.dumps({"re": m["seq"], "protocol": 1, "ok": True}), flush=True)
        continue
    chunk = "x" * (1 << 20)
    try:
        for _ in range(200):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.exit(0)
