#!/usr/bin/env python3
# The README's operator command blocks, for the walk-through that runs them as written
# (tests/release/walk-inside.sh, on Debian 12 in the release tier) and for the docs test that
# holds the two together.
#
# In the README's operator sections every fenced ```sh block is a command an operator runs,
# and the line before it says what the walk does with it:
#   <!-- walk: ID -->              the walk runs it (walk_block ID)
#   <!-- walk: skip: REASON -->    it cannot run on Debian 12 in a container, and REASON says why
# Output, configuration and queries are indented blocks, not ```sh.
#
#   readme-blocks.py --block ID README      the text of block ID, for the walk
#   readme-blocks.py --list README          the IDs in the walk's order
#   readme-blocks.py --check README WALK    the docs test: every sh block of an operator section
#                                           is marked, every skip says why, and WALK runs each ID
#                                           once, in the walk's order, and no ID the README lacks
import re
import sys

# The operator sections, in the order the walk runs them: from install to purge, so Fleets (which
# needs the service) before Uninstall, whose purge is the end. The README has Fleets last.
WALK_ORDER = ["Install", "Try it safely", "Configure", "Operate", "Fleets", "Uninstall and roll back"]
MARKER = re.compile(r"^<!-- walk: (?:skip: (?P<reason>.*\S)|(?P<id>[a-z0-9][a-z0-9-]*)) -->$")
FENCE = re.compile(r"^```(\S*)\s*$")
SHELLS = {"sh", "bash", "shell", "console"}


def parse(path):
    """The fenced blocks of the operator sections: dicts of section, line, lang, text, id, reason,
    and the errors found on the way (a marker that marks nothing, a block without one)."""
    blocks, errors = [], []
    section, marker, fence = None, None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if fence is not None:
            if line.startswith("```"):
                blocks.append(fence)
                fence = None
            else:
                fence["text"].append(line)
            continue
        if line.startswith("## "):
            section = line[3:].strip()
        m = FENCE.match(line)
        if m:
            fence = {"section": section, "line": n, "lang": m.group(1), "text": [],
                     "id": marker.group("id") if marker else None,
                     "reason": marker.group("reason") if marker else None,
                     "marked": marker is not None}
            marker = None
            continue
        if line.startswith("<!-- walk"):
            if marker is not None:
                errors.append(f"{path}:{n}: a walk marker after another, with no block between")
            marker = MARKER.match(line)
            if not marker:
                errors.append(f"{path}:{n}: not a walk marker: {line} "
                              "(<!-- walk: ID --> or <!-- walk: skip: REASON -->)")
            continue
        if marker is not None and line.strip():
            errors.append(f"{path}:{marker_line(lines, n)}: a walk marker not right before a ```sh block")
            marker = None
    if fence is not None:
        errors.append(f"{path}:{fence['line']}: a fenced block that does not end")
    ops = []
    for b in blocks:
        b["text"] = "\n".join(b["text"]) + "\n"
        operator = b["section"] in WALK_ORDER
        if b["marked"] and not operator:
            errors.append(f"{path}:{b['line']}: a walk marker outside the operator sections ({b['section']})")
        if not operator:
            continue
        if b["lang"] not in SHELLS:
            if b["marked"]:
                errors.append(f"{path}:{b['line']}: a walk marker on a ```{b['lang']} block: the walk runs sh")
            continue
        if b["lang"] != "sh":
            errors.append(f"{path}:{b['line']}: an operator's command block is ```sh, not ```{b['lang']}")
        if not b["marked"]:
            errors.append(f"{path}:{b['line']}: a command block in \"{b['section']}\" without a walk marker: "
                          "<!-- walk: ID --> and a walk_block ID in the walk, or <!-- walk: skip: WHY -->")
        elif b["reason"] is not None and len(b["reason"].split()) < 4:
            errors.append(f"{path}:{b['line']}: a skipped block must say why it cannot run on Debian 12 "
                          f"(\"{b['reason']}\")")
        ops.append(b)
    return ops, errors


def marker_line(lines, n):
    for i in range(n - 1, 0, -1):
        if lines[i - 1].startswith("<!-- walk"):
            return i
    return n


def walk_ids(ops):
    ids = [b for b in ops if b["id"]]
    return [b["id"] for b in sorted(ids, key=lambda b: (WALK_ORDER.index(b["section"]), b["line"]))]


def check(readme, walk):
    ops, errors = parse(readme)
    seen = {}
    for b in ops:
        if b["id"]:
            if b["id"] in seen:
                errors.append(f"{readme}:{b['line']}: block ID {b['id']} also at line {seen[b['id']]}")
            seen[b["id"]] = b["line"]
    sections = {b["section"] for b in ops}
    for s in WALK_ORDER:
        if s not in sections:
            errors.append(f"{readme}: no command block in the operator section \"{s}\" (renamed?)")
    run = []
    with open(walk, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^\s*walk_block\s+([a-z0-9-]+)", line)
            if m:
                run.append((m.group(1), n))
    want = walk_ids(ops)
    for i, n in run:
        if i not in seen:
            errors.append(f"{walk}:{n}: walk_block {i}: the README has no such block")
    for i in want:
        count = sum(1 for r, _ in run if r == i)
        if count != 1:
            errors.append(f"{readme}:{seen[i]}: block {i} is run {count} times by {walk}, not once")
    got = [r for r, _ in run if r in seen]
    if not errors and got != want:
        errors.append(f"{walk} runs the blocks as {' '.join(got)}; the README's order is {' '.join(want)}")
    for e in errors:
        print(e)
    if errors:
        return 1
    skipped = [b for b in ops if b["reason"]]
    print(f"ok: {len(want)} command blocks run by the walk, {len(skipped)} skipped with a reason:")
    for b in skipped:
        print(f"  {readme}:{b['line']} ({b['section']}): {b['reason']}")
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--block":
        ops, errors = parse(argv[3])
        for b in ops:
            if b["id"] == argv[2]:
                sys.stdout.write(b["text"])
                return 0
        print(f"{argv[3]}: no block {argv[2]}", file=sys.stderr)
        return 1
    if len(argv) == 3 and argv[1] == "--list":
        ops, errors = parse(argv[2])
        print("\n".join(walk_ids(ops)))
        return 0
    if len(argv) == 4 and argv[1] == "--check":
        return check(argv[2], argv[3])
    print("usage: readme-blocks.py --block ID README | --list README | --check README WALK", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
