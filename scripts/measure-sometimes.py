#!/usr/bin/env python3
"""Measures how often each "sometimes" situation is reached per fuzz seed and prints the
table of `Sources/Invariants/SometimesRequirements.swift`.

usage: simkit fuzz --seeds 40000 --no-shrink --json /tmp/f.json
       scripts/measure-sometimes.py /tmp/f.json

For a situation reached by a share p of seeds, a campaign of n seeds misses it with chance
(1-p)^n. The table requires it from the n at which that chance is below 1e-9 for a share
of p/2 (a margin for generator changes and sampling error), rounded up to two significant
digits. Situations reached by no seed are not required (printed as 0: never).
"""
import json, math, sys

def round_up(n):
    if n < 100:
        return int(math.ceil(n / 10.0) * 10)
    scale = 10 ** (len(str(n)) - 2)
    return int(math.ceil(n / scale) * scale)

d = json.load(open(sys.argv[1]))
names = d["coverageNames"]
results = [r for r in d["results"] if len(r.get("coverage", [])) == len(names)]
n = len(results)
for i, name in enumerate(names):
    hit = sum(1 for r in results if r["coverage"][i] > 0)
    p = hit / n if n else 0
    if p == 0:
        need = 0
    elif p >= 1:
        need = 1
    else:
        need = round_up(math.ceil(math.log(1e-9) / math.log(1 - p / 2)))
    print(f'        ({need:>6}, "{name}"),   // {hit} of {n} seeds ({100 * p:.2f}%)')
