#!/usr/bin/env python3
"""Counts public declarations per module: lines of Sources/<Module>/**/*.swift that declare
something `public` or `open` (a type, member, extension member or typealias), outside
comments. Usage: scripts/public-surface.py [SOURCES_DIR]"""
import os, re, sys

DECL = re.compile(r'^\s*(?:@[\w(). ,:"]+\s+)*(?:public|open)\s+(?:(?:static|final|class|mutating|nonmutating|override|convenience|indirect|nonisolated|lazy|private\(set\)|internal\(set\)|package\(set\))\s+)*'
                  r'(func|var|let|init|subscript|struct|enum|class|protocol|typealias|actor|case|extension|static)\b')

def count(root):
    totals = {}
    for module in sorted(os.listdir(root)):
        path = os.path.join(root, module)
        if not os.path.isdir(path):
            continue
        n = 0
        for dirpath, _, files in os.walk(path):
            for f in files:
                if f.endswith('.swift'):
                    for line in open(os.path.join(dirpath, f), encoding='utf-8'):
                        if DECL.match(line):
                            n += 1
        totals[module] = n
    return totals

if __name__ == '__main__':
    root = sys.argv[1] if len(sys.argv) > 1 else 'Sources'
    totals = count(root)
    for module, n in totals.items():
        print(f'{n:6}  {module}')
    print(f'{sum(totals.values()):6}  total')
