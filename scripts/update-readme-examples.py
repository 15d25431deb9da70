#!/usr/bin/env python3
"""Rewrites the expected output of a page's ```console blocks from real runs.

For each page (README.md by default; any docs/*.md page; --all for README.md and every
docs/*.md), runs every `$ simkit ARGS` line in page order in one fresh folder for that page
(with `scenarios` linked to the package's), exactly as ReadmeExamplesTests does, and puts
what each printed under it. A block cut short with a last line `…` keeps as many lines as it
had. `$ echo $?` lines get the previous command's exit status. Review the diff before
committing: the test then holds the page to it.

Usage: scripts/update-readme-examples.py [PAGE.md ...] [--all] [path/to/simkit]
       (pages relative to the package root or the current folder; simkit defaults to
       .build/debug/simkit)
"""
import glob, os, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pages, simkit = [], os.path.join(root, ".build/debug/simkit")
for arg in sys.argv[1:]:
    if arg == "--all":
        pages += [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    elif arg in ("-h", "--help"):
        print(__doc__); sys.exit(0)
    elif arg.endswith(".md"):
        path = arg if os.path.exists(arg) else os.path.join(root, arg)
        if not os.path.exists(path):
            sys.exit(f"no such page: {arg}")
        pages.append(os.path.abspath(path))
    else:
        simkit = arg
simkit = os.path.abspath(simkit)
if not pages:
    pages = [os.path.join(root, "README.md")]


def update(page):
    lines = open(page, encoding="utf-8").read().split("\n")
    out, inside, status = [], False, None
    work = tempfile.mkdtemp(prefix="simkit-readme-")
    os.symlink(os.path.join(root, "scenarios"), os.path.join(work, "scenarios"))
    i = 0
    while i < len(lines):
        line = lines[i]
        if not inside:
            out.append(line); inside = line == "```console"; i += 1; continue
        if line == "```":
            out.append(line); inside = False; i += 1; continue
        if line.startswith("$ simkit "):
            # The old expected lines run to the next command, `$ echo $?` or the block's end.
            j = i + 1
            while j < len(lines) and not (lines[j].startswith("$ ") or lines[j] == "```"):
                j += 1
            old = lines[i + 1:j]
            keep = len(old) - 1 if old and old[-1] == "…" else None
            r = subprocess.run([simkit] + line[len("$ simkit "):].split(" "), cwd=work, capture_output=True, text=True)
            status = r.returncode
            got = r.stdout.split("\n")
            if got and got[-1] == "":
                got.pop()
            out.append(line)
            out.extend(got[:keep] + ["…"] if keep is not None else got)
            i = j; continue
        if line == "$ echo $?":
            out.append(line); out.append(str(status)); i += 2; continue
        out.append(line); i += 1
    open(page, "w", encoding="utf-8").write("\n".join(out))
    print(f"updated {os.path.relpath(page, root)} from {simkit}")


for page in pages:
    update(page)
