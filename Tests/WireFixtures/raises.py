"""Answers the hello and the reset, then logs 30 lines and dies of an exception raised 12
calls deep at the next message: its report must show the exception's message, not only
frames, and the messages file piped back in must end the same way."""
import json
import sys


def deep(n):
    if n == 0:
        raise ValueError("raises: the disable of app 0 is not in table apps")
    return deep(n - 1)


for n, line in enumerate(sys.stdin, 1):
    m = json.loads(line)
    if n == 3:
        for i in range(30):
            sys.stderr.write(f"raises: log line {i}\n")
        deep(12)
    print(json.dumps({"re": m["seq"], "protocol": 1, "ok": True}), flush=True)
