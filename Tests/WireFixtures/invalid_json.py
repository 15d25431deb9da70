import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["op"] in ("hello", "reset"):
        print(json.dumps({"re": m["seq"], "protocol": 1, "ok": True}), flush=True)
    else:
        print("{status: ok", flush=True)
