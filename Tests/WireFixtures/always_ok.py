# Answers every request 200 with as little work as a server can do: the ceiling of the
# wire itself for `simkit bench --wire` (it keeps no rule, so the checkers find plenty).
import json, sys
gen = {}
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    op = m["op"]
    if op == "request":
        d = m["device"]
        if m["kind"] == "register":
            gen[d] = gen.get(d, 0) + 1
            r = {"re": m["seq"], "status": "ok", "servedAt": m["now"], "credential": {"device": d, "generation": gen[d]},
                 "record": {"owner": m["attestedApp"] or 0, "generation": gen[d]}}
        else:
            r = {"re": m["seq"], "status": "ok", "servedAt": m["now"],
                 "record": {"owner": m["attestedApp"] or 0, "generation": gen[d]} if d in gen else None}
    elif op == "rotate":
        r = {"re": m["seq"], "outcome": "rotated"}
    elif op in ("hello", "reset"):
        gen = {}
        r = {"re": m["seq"], "protocol": 1, "ok": True}
    else:
        r = {"re": m["seq"], "applied": True}
    out.write(json.dumps(r) + "\n")
    out.flush()
