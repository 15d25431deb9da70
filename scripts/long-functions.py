#!/usr/bin/env python3
"""Lists the Swift functions (func, init, subscript, computed var) longer than a limit.

usage: python3 scripts/long-functions.py [DIR] [--limit N]   (default: Sources, 70 lines)

A function's length runs from its declaration line to the line of its closing brace.
Braces are matched in code only: string literals (plain, multi-line and raw, with their
interpolations), line comments and nested block comments are blanked first, so a brace
in a message or a comment does not end a function early or late.
"""
import os, re, sys

DECL = re.compile(r'^\s*(?:@[\w().,: ]+\s+)*(?:(?:public|package|private|fileprivate|internal|static|mutating|nonmutating|'
                  r'override|final|class|convenience|@inlinable|@usableFromInline|nonisolated|isolated)(?:\([\w ]+\))?\s+)*'
                  r'(func\s+[^\s(<]+|init[?!]?\s*[(<]|subscript|var\s+\w+\s*:[^=]*\{\s*$)')


def code_only(text):
    """The text with every string literal's contents and every comment replaced by spaces
    (newlines kept, so line numbers hold); interpolated code inside strings is kept."""
    out = []
    i, n = 0, len(text)
    # A stack of open contexts: ('str', hashes, multiline) or ('interp', depth) or ('block', 0).
    stack = []

    def blank(ch):
        out.append('\n' if ch == '\n' else ' ')

    while i < n:
        ch = text[i]
        top = stack[-1] if stack else None
        if top and top[0] == 'block':
            if text.startswith('*/', i):
                stack.pop(); out.append('  '); i += 2
            elif text.startswith('/*', i):
                stack.append(('block', 0)); out.append('  '); i += 2
            else:
                blank(ch); i += 1
            continue
        if top and top[0] == 'str':
            _, hashes, multi = top
            close = ('"""' if multi else '"') + '#' * hashes
            if text.startswith(close, i):
                stack.pop(); out.append(close); i += len(close)
            elif text.startswith('\\' + '#' * hashes + '(', i):
                k = 2 + hashes
                stack.append(('interp', 0)); out.append(' ' * (k - 1) + '('); i += k
            elif ch == '\\' and hashes == 0:
                out.append('  ' if i + 1 < n and text[i + 1] != '\n' else ' '); i += 2 if i + 1 < n and text[i + 1] != '\n' else 1
            else:
                blank(ch); i += 1
            continue
        # Code (top level or inside an interpolation).
        if text.startswith('//', i):
            while i < n and text[i] != '\n':
                out.append(' '); i += 1
            continue
        if text.startswith('/*', i):
            stack.append(('block', 0)); out.append('  '); i += 2
            continue
        m = re.match(r'(#*)("""|")', text[i:i + 40])
        if m and (m.group(1) == '' or ch == '#'):
            hashes, quote = len(m.group(1)), m.group(2)
            stack.append(('str', hashes, quote == '"""')); out.append(m.group(0)); i += len(m.group(0))
            continue
        if top and top[0] == 'interp':
            if ch == '(':
                stack[-1] = ('interp', top[1] + 1)
            elif ch == ')':
                if top[1] == 0:
                    stack.pop(); out.append(')'); i += 1
                    continue
                stack[-1] = ('interp', top[1] - 1)
        out.append(ch); i += 1
    return ''.join(out)


def long_functions(root, limit):
    res = []
    for dp, _, fs in os.walk(root):
        for f in sorted(fs):
            if not f.endswith('.swift'):
                continue
            p = os.path.join(dp, f)
            raw = open(p, encoding='utf-8').read().split('\n')
            code = code_only('\n'.join(raw)).split('\n')
            for i, line in enumerate(code):
                m = DECL.match(line)
                if not m:
                    continue
                depth, started, j = 0, False, i
                while j < len(code):
                    for ch in code[j]:
                        if ch == '{':
                            depth += 1; started = True
                        elif ch == '}':
                            depth -= 1
                    if started and depth <= 0:
                        break
                    if not started and j > i + 3:   # a protocol requirement: no body
                        break
                    j += 1
                if started and j - i + 1 > limit:
                    res.append((j - i + 1, p, i + 1, m.group(1).strip()))
    res.sort(key=lambda r: (-r[0], r[1], r[2]))
    return res


def main():
    args = sys.argv[1:]
    limit = 70
    if '--limit' in args:
        k = args.index('--limit'); limit = int(args[k + 1]); del args[k:k + 2]
    root = args[0] if args else 'Sources'
    res = long_functions(root, limit)
    for n, p, l, name in res:
        print(f'{n:5}  {p}:{l}  {name}')
    print(len(res), f'functions over {limit} lines')


if __name__ == '__main__':
    main()
