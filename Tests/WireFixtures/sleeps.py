import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["op"] in ("hello", "reset"):
        print(json.dumps({"re": m["seq"], "protocol": 1, "ok": True}), flush=True)
    else:
        time.sleep(3600)
