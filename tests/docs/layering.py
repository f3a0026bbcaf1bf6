#!/usr/bin/python3
"""daemon/ calls only down: every #include between its files goes from a file to one named
after it in docs/design.md's "Who calls whom in daemon/" list (a .h and its .c are one file
there). Fails on an include that goes up or sideways to an earlier name, or on a file the list
does not name.

    tests/docs/layering.py SOURCE_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
design = open(os.path.join(root, "docs/design.md")).read()
section = design.split("## Who calls whom in daemon/", 1)[1]
block = section.split("```", 2)[1]
# The files a line is about come first on it, after the indentation; what follows (what
# they own, "-> what they call") is for the reader.
order = []
for line in block.splitlines():
    m = re.match(r"\s*((?:[a-z][a-z-]*\.[ch](?:, )?)+)", line)
    for name in re.findall(r"([a-z][a-z-]*)\.[ch]", m.group(1) if m else ""):
        if name not in order:
            order.append(name)

daemon = os.path.join(root, "daemon")
files = {}
for f in sorted(os.listdir(daemon)):
    if f.endswith((".c", ".h")):
        files.setdefault(f[:-2], []).append(f)

bad = []
for name, parts in sorted(files.items()):
    if name not in order:
        bad.append(f"daemon/{parts[0]}: not in docs/design.md's list")
        continue
    for part in parts:
        for inc in re.findall(r'^#include "([a-z-]+)\.h"', open(os.path.join(daemon, part)).read(), re.M):
            if inc == name or inc not in files:
                continue    # its own header, or lib/'s
            if inc not in order or order.index(inc) < order.index(name):
                bad.append(f"daemon/{part} includes {inc}.h, above it in docs/design.md's list")

for b in bad:
    print(b)
print(f"{len(files)} files of daemon/, {len(bad)} includes or names out of place")
sys.exit(1 if bad else 0)
