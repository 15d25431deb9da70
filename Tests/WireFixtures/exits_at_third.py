import json, sys
for n, line in enumerate(sys.stdin, 1):
    if n == 3:
        sys.stderr.write("exits_at_third: giving up at message 3\n")
        sys.exit(7)
    m = json.loads(line)
    print(json.dumps({"re": m["seq"], "protocol": 1, "ok": True}), flush=True)
