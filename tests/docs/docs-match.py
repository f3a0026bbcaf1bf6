#!/usr/bin/python3
"""The documentation says what the code does, and points only at what exists.

    tests/docs/docs-match.py SOURCE_ROOT              check the tree; exit 1 on any problem
    tests/docs/docs-match.py SOURCE_ROOT --selftest   break each check on purpose, in memory,
                                                      and fail unless every check notices

What is checked, each in both directions where both make sense:
- options: every long and short option of daemon/main.c's getopt_long() table is in
  hvtuned(8)'s SYNOPSIS (its long or its short form) and is a tag of OPTIONS (both forms);
  neither names an option the table lacks.
- config: every key lib/config.c accepts (top level, queue and device from lib/attr.c's
  allowlist, host, override, its match keys, contested) is documented in hvtuned.conf(5) where
  that group is, and each "unknown key (...)" message lists exactly the keys its parser takes.
- metrics: every hvtuned_* metric the code writes is in hvtuned.conf(5)'s metrics list, the
  list names no other, and the shipped alert rules use only metrics that are written.
- message ids: every MESSAGE_ID of daemon/messages.h has a catalog entry and a tag in
  hvtuned(8)'s MESSAGE_IDs, neither has others, and no id is defined outside messages.h.
- fields: every HVTUNED_* journal field daemon/ and lib/ write is a tag of hvtuned(8)'s
  "Journal fields", which names no other; the catalog's @FIELD@s are fields written.
- references: in the Markdown files, the man pages, the catalog, the alert rules and the
  comments of every source and test file: a path into this tree (docs/x.md, tests/..., lib/...,
  a bare x.md) names a file that exists; a Markdown link's file and #anchor exist; a
  `hvtuned(8), SECTION` names a section of that page, a `FILE.md, "Heading"` or
  `README, "Part"` a heading or a paragraph's bold lead of that file; a man page's
  "see SECTION", "SECTION below" or "see SECTION in PAGE(N)" names a section or a list entry
  of that page.
- id values: every MESSAGE_ID the docs give an operator to copy (Markdown files, man pages as
  shown, the catalog, contrib/'s alert rules), whole or cut short before an ellipsis (... or
  \u2026), is (or begins exactly one) id of daemon/messages.h; none after MESSAGE_ID stops short
  without one.
- placeholders: the man pages, as groff shows them (read as roff source when there is no
  groff), show nothing a template or a format left unfilled: {name}, {{ x }}, %(name)s, a
  printf conversion, @NAME@.
- scope: each place that sums up what hvtuned manages (hvtuned(8)'s NAME and DESCRIPTION's
  first paragraph, --help's first lines, debian/control's Description, the spec's Summary and
  %description, README's introduction) names both kinds lib/classify.c takes (storvsc, NVMe)
  and none says NVMe disks are not managed but of another vendor; hvtuned(8)'s DESCRIPTION
  and the README's introduction name each model of nvme_models; and DESCRIPTION's built-in
  policy names each setting lib/config.c's builtin_policy() and lib/policy.c's
  hvt_platform_defaults() make, and the hw queue cap, with the code's value (and NVMe for a
  setting made on NVMe disks only).

The extraction fails loudly (a problem, not a pass) when it cannot find what it parses: a
renamed parser, a table in another shape. --selftest shows that each check can fail.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

# Paths that read like this tree's but are another's: the kernel's source (lib/bitmap.c), an
# installed system's module tree (lib/modules/...).
NOT_OURS = [r"lib/bitmap\.c", r"lib/modules(/.*)?"]

# What each check read, for the summary: a check that reads nothing proves nothing.
STATS = {}

# This file: its docstring and self-test name references that must not exist.
SELF = "tests/docs/docs-match.py"

MAN8 = "docs/hvtuned.8"
MAN5 = "docs/hvtuned.conf.5"
CATALOG = "systemd/hvtuned.catalog"
RULES = "contrib/prometheus/hvtuned.rules.yml"


# What the disk holds, read once for every Tree of a run (the self-test makes many).
_READ = {}
_WALK = {}


class Tree:
    """The source tree's text, read once; the self-test changes it in memory only."""

    def __init__(self, root):
        self.root = root
        self.over = {}
        self.cache = _READ

    def text(self, rel):
        if rel in self.over:
            return self.over[rel]
        if rel not in self.cache:
            with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
                self.cache[rel] = f.read()
        return self.cache[rel]

    def exists(self, rel):
        return rel in self.over or os.path.exists(os.path.join(self.root, rel))

    def glob(self, pattern):
        return [os.path.relpath(p, self.root) for p in glob.glob(os.path.join(self.root, pattern))]

    def files(self):
        """Every file of the tree, less build directories, VCS data and fuzz corpora."""
        if self.root not in _WALK:
            _WALK[self.root] = self._walk()
        return _WALK[self.root] + [f for f in self.over if f not in _WALK[self.root]]

    def _walk(self):
        out = []
        for d, dirs, names in os.walk(self.root):
            rel = os.path.relpath(d, self.root)
            dirs[:] = sorted(n for n in dirs if (n == ".ci" or not n.startswith((".", "build", "__pycache__")))
                             and not (rel == "tests/fuzz" and n == "corpus"))
            out += [os.path.normpath(os.path.join(rel, n)) for n in sorted(names)]
        return out


# ---------------------------------------------------------------------------------------------
# C: comments out, string literals in.

_STRIPPED = {}


def c_strip_comments(text):
    """The text with every comment blanked (newlines kept, so line numbers hold)."""
    if text not in _STRIPPED:
        _STRIPPED[text] = _c_strip_comments(text)
    return _STRIPPED[text]


def _c_strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def c_comments(text):
    """The comments of a C file, one string each, with their line numbers."""
    out = []
    for m in re.finditer(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', text, re.S):
        if m.group(0).startswith("/"):
            out.append((text.count("\n", 0, m.start()) + 1, m.group(0)))
    return out


def c_strings(text):
    """Every string literal of a C file (comments out), unescaped just enough."""
    code = c_strip_comments(text)
    return [m.group(1) for m in re.finditer(r'"((?:\\.|[^"\\\n])*)"', code)]


def c_function(text, name):
    """The body of the C function NAME (from its definition's brace to the matching one)."""
    m = re.search(r"^[a-z][^\n;]*\b" + re.escape(name) + r"\([^;{]*\)\s*\{", text, re.M)
    if not m:
        return None
    depth, i = 0, m.end() - 1
    code = c_strip_comments(text)
    while i < len(code):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return code[m.end():i]
        i += 1
    return None


# ---------------------------------------------------------------------------------------------
# roff: what a man page shows, with its bold text known.

ROFF_ESCAPES = {
    r"\-": "-", r"\(dq": '"', r"\(lq": '"', r"\(rq": '"', r"\(aq": "'", r"\(mu": "x",
    r"\(em": "--", r"\(en": "-", r"\e": "\\", r"\ ": " ", r"\~": " ", r"\&": "", r"\|": "",
    r"\:": "", r"\c": "", r"\(bu": "*", r"\(ga": "`", r"\(ti": "~",
}


def roff_plain(s):
    s = re.sub(r"\\f[BIRP]|\\f\[[A-Z]*\]", "", s)
    for k, v in ROFF_ESCAPES.items():
        s = s.replace(k, v)
    return s


def roff_args(s):
    """A macro line's arguments, as groff splits them."""
    args, i, n = [], 0, len(s)
    while i < n:
        if s[i] in " \t":
            i += 1
            continue
        cur = []
        if s[i] == '"':
            i += 1
            while i < n:
                if s[i] == '"':
                    if i + 1 < n and s[i + 1] == '"':
                        cur.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                cur.append(s[i])
                i += 1
        else:
            while i < n and s[i] not in " \t":
                if s[i] == "\\" and i + 1 < n:
                    cur.append(s[i:i + 2])
                    i += 2
                else:
                    cur.append(s[i])
                    i += 1
        args.append("".join(cur))
    return args


FONT_MACROS = {"B": "B", "I": "I", "BR": "BR", "RB": "RB", "BI": "BI", "IB": "IB",
               "IR": "IR", "RI": "RI", "SM": "R", "SB": "B"}


def roff_segments(line):
    """One input line as (bold, text) pieces; None for a request that shows nothing."""
    if line.startswith(("'", ".")):
        m = re.match(r"[.'](\w+)\s*(.*)", line)
        if not m:
            return None
        macro, rest = m.groups()
        if macro not in FONT_MACROS:
            return None
        fonts = FONT_MACROS[macro]
        args = roff_args(rest)
        if len(fonts) == 1:
            return [(fonts == "B", roff_plain(" ".join(args)))]
        return [(fonts[k % 2] == "B", roff_plain(a)) for k, a in enumerate(args)]
    segs, bold = [], False
    for part in re.split(r"(\\f[BIRP])", line):
        if re.fullmatch(r"\\f[BIRP]", part):
            bold = part[2] == "B"
        elif part:
            segs.append((bold, roff_plain(part)))
    return segs


class Man:
    """A man page: its sections (.SH and .SS, in order) and each one's lines."""

    def __init__(self, text):
        self.sections = []      # (name, level, [lines])
        cur = ("", "SH", [])
        for line in text.splitlines():
            m = re.match(r"\.(SH|SS)\s+(.*)", line)
            if m:
                self.sections.append(cur)
                cur = (roff_plain(" ".join(roff_args(m.group(2)))), m.group(1), [])
            else:
                cur[2].append(line)
        self.sections.append(cur)

    def names(self):
        return [s[0] for s in self.sections if s[0]]

    def section(self, name, whole=False):
        """The lines of the section NAME; with whole, an .SH's .SS sections too."""
        for k, (n, level, lines) in enumerate(self.sections):
            if n == name:
                out = list(lines)
                if whole and level == "SH":
                    for n2, level2, lines2 in self.sections[k + 1:]:
                        if level2 == "SH":
                            break
                        out += lines2
                return out
        return None

    @staticmethod
    def tags(lines):
        """The bold words of each .TP tag: [(tag words, the lines of its paragraph)]."""
        out, i = [], 0
        while i < len(lines):
            if lines[i].startswith(".TP") and i + 1 < len(lines):
                segs = roff_segments(lines[i + 1]) or []
                words = [w for b, t in segs if b for w in re.split(r"[\s,|\[\]]+", t) if w]
                body, j = [], i + 2
                while j < len(lines) and not re.match(r"\.(TP|PP|P|LP|SH|SS)\b", lines[j]):
                    body.append(lines[j])
                    j += 1
                out.append((words, body))
                i = j
            else:
                i += 1
        return out

    @staticmethod
    def bold(lines):
        return {w for line in lines for b, t in (roff_segments(line) or []) if b
                for w in re.split(r"[\s,|\[\]=;]+", t) if w}


def man_render(text):
    """The page as running text, bold pieces in [[ ]], one line per input line."""
    out = []
    for line in text.splitlines():
        if re.match(r"\.(SH|SS)\s", line):
            out.append("")
            continue
        segs = roff_segments(line)
        out.append("".join(f"[[{t}]]" if b else t for b, t in segs) if segs else "")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Check 1: the command line.

def options_from_main(tree):
    src = tree.text("daemon/main.c")
    code = c_strip_comments(src)
    m = re.search(r"struct option\s+\w+\s*\[\]\s*=\s*\{(.*?)\n\s*\};", code, re.S)
    if not m:
        return None, "daemon/main.c: no `struct option NAME[] = { ... };` table: update tests/docs/docs-match.py"
    table = m.group(1)
    entries = re.findall(r'\{\s*"([a-z][a-z0-9-]*)"\s*,\s*(\w+)\s*,\s*[^,]+,\s*([^}\s]+)\s*\}', table)
    if len(entries) != table.count('"') // 2 or not entries:
        return None, f"daemon/main.c: read {len(entries)} options of a table with {table.count(chr(34)) // 2} names"
    g = re.search(r'getopt_long\s*\([^,]+,[^,]+,\s*"([^"]*)"', code)
    if not g:
        return None, "daemon/main.c: no getopt_long(argc, argv, \"SHORT\", ...) call"
    shorts = [c for c in g.group(1) if c != ":"]
    opts = []   # (long or None, short or None)
    for name, _, val in entries:
        s = val[1] if re.fullmatch(r"'.'", val) else None
        opts.append((name, s))
    for s in shorts:
        if not any(o[1] == s for o in opts):
            opts.append((None, s))
    return opts, None


def check_options(tree):
    opts, err = options_from_main(tree)
    if err:
        return [err]
    man = Man(tree.text(MAN8))
    syn, options = man.section("SYNOPSIS"), man.section("OPTIONS")
    if syn is None or options is None:
        return [f"{MAN8}: no SYNOPSIS or OPTIONS section"]
    syn_words = {w for w in Man.bold(syn) if w.startswith("-")}
    tag_words = {w.rstrip("=") for words, _ in Man.tags(options) for w in words if w.startswith("-")}
    syn_words = {w.rstrip("=") for w in syn_words}
    STATS["options"] = len(opts)
    bad = []
    known = set()
    for long, short in opts:
        forms = ([f"--{long}"] if long else []) + ([f"-{short}"] if short else [])
        known.update(forms)
        if not any(f in syn_words for f in forms):
            bad.append(f"{MAN8}: SYNOPSIS lacks {' or '.join(forms)} (daemon/main.c's options)")
        for f in forms:
            if f not in tag_words:
                bad.append(f"{MAN8}: OPTIONS has no tag for {f} (daemon/main.c's options)")
    for w in sorted((syn_words | tag_words) - known):
        bad.append(f"{MAN8}: names option {w}, which daemon/main.c does not have")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 2: configuration keys.

def strcmp_keys(body):
    """The names a parser compares a setting's name with (its values, as contested's "yield",
    are compared through another variable)."""
    return re.findall(r'strcmp\(\s*\w*name\s*,\s*"([a-z_]+)"\s*\)', body)


def unknown_list(body):
    """The keys an "unknown key (a, b, c)" message of a parser names."""
    body = re.sub(r'"\s*"', "", body)  # adjacent literals are one string
    m = re.search(r'"unknown (?:match )?key \(([^)]*)\)', body)
    if not m:
        return None
    return [k.strip() for k in m.group(1).split(",")]


def config_keys(tree):
    """{group: [keys]} from lib/config.c and lib/attr.c, or a problem."""
    src = tree.text("lib/config.c")
    parsers = {"top-level": "parse_root", "host": "parse_host", "override": "parse_override",
               "match": "parse_match_key", "contested": "parse_contested"}
    keys, bad = {}, []
    for group, fn in parsers.items():
        body = c_function(src, fn)
        if body is None:
            bad.append(f"lib/config.c: no function {fn}() (the {group} keys): update tests/docs/docs-match.py")
            continue
        found = strcmp_keys(body)
        if not found:
            bad.append(f"lib/config.c: {fn}() compares no key name: update tests/docs/docs-match.py")
        listed = unknown_list(body)
        if listed is None:
            bad.append(f"lib/config.c: {fn}() has no \"unknown key (...)\" message")
        elif sorted(listed) != sorted(set(found)):
            bad.append(f"lib/config.c: {fn}()'s \"unknown key\" message lists {', '.join(listed)}, "
                       f"it takes {', '.join(sorted(set(found)))}")
        keys[group] = sorted(set(found))
    attr = c_strip_comments(tree.text("lib/attr.c"))
    rows = re.findall(r'\[HVT_ATTR_\w+\]\s*=\s*\{\s*HVT_GROUP_(\w+)\s*,\s*"([a-z_]+)"', attr)
    if not rows or len(rows) != len(re.findall(r"\[HVT_ATTR_\w+\]\s*=", attr)):
        bad.append("lib/attr.c: cannot read the attribute table: update tests/docs/docs-match.py")
    for g in ("QUEUE", "DEVICE"):
        keys[g.lower()] = sorted(name for grp, name in rows if grp == g)
        if not keys[g.lower()]:
            bad.append(f"lib/attr.c: no attribute of HVT_GROUP_{g}")
    return keys, bad


def check_config(tree):
    keys, bad = config_keys(tree)
    STATS["configuration keys"] = sum(map(len, keys.values()))
    man = Man(tree.text(MAN5))

    def tags_of(section, whole=False):
        lines = man.section(section, whole)
        if lines is None:
            bad.append(f"{MAN5}: no section {section}")
            return set(), []
        return {w for words, _ in Man.tags(lines) for w in words}, Man.tags(lines)

    where = {"top-level": "TOP-LEVEL KEYS", "queue": "queue", "device": "device", "host": "HOST",
             "match": "Match keys"}
    for group, section in where.items():
        documented, _ = tags_of(section)
        for k in keys.get(group, []):
            if k not in documented:
                bad.append(f"{MAN5}: {section} has no tag for {group} key {k} (lib/config.c)")
        for k in sorted(documented - set(keys.get(group, []))):
            if re.fullmatch(r"[a-z_]+", k):
                bad.append(f"{MAN5}: {section} documents {group} key {k}, which lib/config.c does not take")
    over = man.section("OVERRIDES")
    for k in keys.get("override", []):
        if over is None or k not in Man.bold(over):
            bad.append(f"{MAN5}: OVERRIDES does not name the override key {k} in bold (lib/config.c)")
    _, top = tags_of("TOP-LEVEL KEYS")
    contested = [body for words, body in top if "contested" in words]
    for k in keys.get("contested", []):
        if not contested or k not in Man.bold(contested[0]):
            bad.append(f"{MAN5}: TOP-LEVEL KEYS' contested does not name its group {k} in bold (lib/config.c)")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 3: metrics.

def c_sources(tree, dirs=("daemon", "lib")):
    return sorted(f for f in tree.files() if f.split("/")[0] in dirs and f.endswith((".c", ".h")))


def metrics_written(tree):
    out = {}
    for f in c_sources(tree):
        for s in c_strings(tree.text(f)):
            for name in re.findall(r"(?<![\w/.])(hvtuned_[a-z0-9_]+)", s):
                out.setdefault(name, f)
    return out


def check_metrics(tree):
    written = metrics_written(tree)
    STATS["metrics"] = len(written)
    bad = []
    if len(written) < 3:
        return [f"daemon/, lib/: found {len(written)} metric names: update tests/docs/docs-match.py"]
    blocks = re.findall(r"^\.EX\n(.*?)^\.EE", tree.text(MAN5), re.S | re.M)
    lists = [b for b in blocks if re.search(r"^hvtuned_", b, re.M)]
    if len(lists) != 1:
        return [f"{MAN5}: {len(lists)} example blocks list hvtuned_ metrics, one is the metrics list"]
    listed = set(re.findall(r"^(hvtuned_[a-z0-9_]+)", lists[0], re.M))
    for name in sorted(set(written) - listed):
        bad.append(f"{MAN5}: the metrics list lacks {name} (written by {written[name]})")
    for name in sorted(listed - set(written)):
        bad.append(f"{MAN5}: the metrics list has {name}, which daemon/ and lib/ never write")
    if tree.exists(RULES):
        for name in sorted(set(re.findall(r"\b(hvtuned_[a-z0-9_]+)", tree.text(RULES))) - set(written)):
            bad.append(f"{RULES}: uses {name}, which daemon/ and lib/ never write")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 4: MESSAGE_IDs.

def message_ids(tree, elsewhere=True):
    """daemon/messages.h's ids; with elsewhere, a problem for each id defined in another file."""
    text = c_strip_comments(tree.text("daemon/messages.h"))
    ids = re.findall(r'#define\s+HVT_MESSAGE_\w+\s+"([0-9a-f]{32})"', text)
    bad = []
    if not ids or len(ids) != len(re.findall(r"#define\s+HVT_MESSAGE_", text)):
        bad.append("daemon/messages.h: cannot read every HVT_MESSAGE_ define: update tests/docs/docs-match.py")
    if not elsewhere:
        return set(ids), bad
    for f in c_sources(tree):
        if f == "daemon/messages.h":
            continue
        for s in c_strings(tree.text(f)):
            if re.fullmatch(r"[0-9a-fA-F]{32}", s):
                bad.append(f"{f}: defines MESSAGE_ID {s} outside daemon/messages.h")
    return set(ids), bad


def check_message_ids(tree):
    ids, bad = message_ids(tree)
    STATS["MESSAGE_IDs"] = len(ids)
    catalog = set(re.findall(r"^-- ([0-9a-f]{32})\s*$", tree.text(CATALOG), re.M))
    lines = Man(tree.text(MAN8)).section("MESSAGE_IDs")
    if lines is None:
        return bad + [f"{MAN8}: no section MESSAGE_IDs"]
    man = {w for words, _ in Man.tags(lines) for w in words if re.fullmatch(r"[0-9a-f]{32}", w)}
    for where, have in ((CATALOG, catalog), (f"{MAN8} (MESSAGE_IDs)", man)):
        for i in sorted(ids - have):
            bad.append(f"{where}: lacks MESSAGE_ID {i} (daemon/messages.h)")
        for i in sorted(have - ids):
            bad.append(f"{where}: has MESSAGE_ID {i}, which daemon/messages.h does not define")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 5: journal fields.

def fields_written(tree):
    out, bad = {}, []
    for f in c_sources(tree):
        for s in c_strings(tree.text(f)):
            if "HVTUNED_" not in s:
                continue
            m = re.fullmatch(r"(HVTUNED_[A-Z0-9_]+)(=.*)?", s)
            if m:
                out.setdefault(m.group(1), f)
            elif s.startswith("HVTUNED_") or re.search(r"HVTUNED_[A-Z0-9_]*%|HVTUNED_$", s):
                # A field's name made at run time; a message that names a field is prose.
                bad.append(f"{f}: cannot tell which journal field \"{s}\" writes: update tests/docs/docs-match.py")
    return out, bad


def check_fields(tree):
    written, bad = fields_written(tree)
    STATS["journal fields"] = len(written)
    if len(written) < 3:
        return bad + [f"daemon/, lib/: found {len(written)} journal fields: update tests/docs/docs-match.py"]
    lines = Man(tree.text(MAN8)).section("Journal fields")
    if lines is None:
        return bad + [f"{MAN8}: no section Journal fields"]
    documented = {w for words, _ in Man.tags(lines) for w in words if w.startswith("HVTUNED_")}
    for name in sorted(set(written) - documented):
        bad.append(f"{MAN8}: Journal fields lacks {name} (written by {written[name]})")
    for name in sorted(documented - set(written)):
        bad.append(f"{MAN8}: Journal fields has {name}, which daemon/ and lib/ never write")
    for name in sorted(set(re.findall(r"@(HVTUNED_[A-Z0-9_]+)@", tree.text(CATALOG))) - set(written)):
        bad.append(f"{CATALOG}: shows @{name}@, a field daemon/ and lib/ never write")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 6: references to files and sections.

def md_slug(heading):
    """GitHub's anchor for a Markdown heading."""
    s = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def md_headings(text):
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [h.strip() for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)]


def md_parts(text):
    """What a reference may name in a Markdown file: its headings, and the bold lead of a
    paragraph or list item ("- **Native NVMe multipath.** When ...")."""
    return md_headings(text) + re.findall(r"^\s*(?:[-*]\s+|\d+\.\s+)?\*\*([^*]+?)\.?\*\*", text, re.M)


def md_anchors(text):
    seen, out = {}, set()
    for h in md_headings(text):
        s = md_slug(h)
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    out.update(re.findall(r'<a\s+(?:name|id)="([^"]+)"', text))
    return out


def man_pages(tree):
    return {os.path.basename(f).rsplit(".", 1)[0] + f"({f[-1]})": f
            for f in tree.files() if re.fullmatch(r"docs/[\w.-]+\.[1-8]", f)}


COMMENTED = {".c": "c", ".h": "c", ".sh": "#", ".py": "#", ".build": "#", ".txt": "#",
             ".conf": "#", ".in": "#", ".spec": "#", ".rules": "#", ".supp": "#", ".yml": "all"}


def documents(tree):
    """[(file, kind)]: the texts whose references are checked, and how to read each."""
    out = []
    for f in tree.files():
        base, ext = os.path.basename(f), os.path.splitext(f)[1]
        if f.endswith(".md"):
            out.append((f, "md"))
        elif re.fullmatch(r"docs/[\w.-]+\.[1-8]", f):
            out.append((f, "man"))
        elif f == CATALOG:
            out.append((f, "all"))
        elif ext in COMMENTED:
            out.append((f, COMMENTED[ext]))
        elif base == "meson.build" or f.startswith(("tools/", "debian/", "bench/", ".ci/")) or base == "Makefile":
            try:
                head = tree.text(f)[:200]
            except (OSError, UnicodeDecodeError):
                continue
            if "\0" not in head:
                out.append((f, "#"))
    return out


def texts_of(tree, f, kind):
    """The parts of F whose references count: [(line, text)]."""
    text = tree.text(f)
    if kind in ("md", "all"):
        return [(1, text)]
    if kind == "man":
        return [(1, man_render(text))]
    if kind == "c":
        return c_comments(text)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.search(r"(?:^|\s)#(?![!{])(.*)", line)
        if m:
            out.append((n, m.group(1)))
    return out


def path_exists(tree, path, referrer):
    """A path as a reference names it: relative to the tree's root or the referrer's dir."""
    path = path.rstrip("/")
    for base in ("", os.path.dirname(referrer)):
        p = os.path.normpath(os.path.join(base, path))
        if any(c in p for c in "*?["):
            if tree.glob(p):
                return True
        elif tree.exists(p):
            return True
    return False


def built_by_meson(tree, path):
    """A file the build makes: a meson.build of its directory names it as an output."""
    d = os.path.dirname(path)
    name = os.path.basename(path)
    while d:
        mb = os.path.join(d, "meson.build")
        if tree.exists(mb) and re.search(r"['\"/]" + re.escape(name) + r"['\"]", tree.text(mb)):
            return True
        d = os.path.dirname(d)
    return False


def check_references(tree):
    tops = sorted(n for n in os.listdir(tree.root) if os.path.isdir(os.path.join(tree.root, n))
                  and not n.startswith((".", "build", "__")))
    path_re = re.compile(r"(?<![\w/.$@~%{<-])((?:" + "|".join(map(re.escape, tops)) +
                         r")/[A-Za-z0-9_.+*/-]*)(.?)")
    bare_md = re.compile(r"(?<![\w/.-])([A-Za-z0-9_-]+\.md)\b")
    pages = man_pages(tree)
    sections = {page: Man(tree.text(f)).names() for page, f in pages.items()}
    # What "see X" may also point at: an entry of a list (a journal field, an option).
    entries = {page: {w for _, _, lines in Man(tree.text(f)).sections for words, _ in Man.tags(lines) for w in words}
               for page, f in pages.items()}
    bad = []
    STATS["files read for references"] = 0
    for f, kind in documents(tree):
        if f == SELF:
            continue
        STATS["files read for references"] += 1
        try:
            parts = texts_of(tree, f, kind)
        except (OSError, UnicodeDecodeError):
            continue
        for line0, text in parts:
            def where(pos):
                return f"{f}:{line0 + text.count(chr(10), 0, pos)}"
            # Paths into the tree.
            for m in path_re.finditer(text):
                p, after = m.group(1).rstrip(".,:;'`)"), m.group(2)
                if after in "<{$" and after:
                    p = p.rsplit("/", 1)[0]      # a placeholder follows: its directory
                if re.search(r"\.(o|so|a)$", p) or any(re.fullmatch(n, p) for n in NOT_OURS):
                    continue
                if not path_exists(tree, p, f) and not built_by_meson(tree, p):
                    bad.append(f"{where(m.start())}: names {p}, which does not exist")
            # Bare Markdown file names.
            for m in bare_md.finditer(text):
                name = m.group(1)
                if not any(path_exists(tree, os.path.join(b, name), f) for b in ("", "docs")):
                    bad.append(f"{where(m.start())}: names {name}, which does not exist")
            # Markdown links: the file, and the anchor in it.
            if kind == "md":
                for m in re.finditer(r"\]\(([^)\s]+)\)", text):
                    target = m.group(1)
                    if re.match(r"[a-z]+:", target):
                        continue
                    file, _, anchor = target.partition("#")
                    path = os.path.normpath(os.path.join(os.path.dirname(f), file)) if file else f
                    if file and not tree.exists(path):
                        bad.append(f"{where(m.start())}: links to {file}, which does not exist")
                    elif anchor and path.endswith(".md") and anchor not in md_anchors(tree.text(path)):
                        bad.append(f"{where(m.start())}: links to #{anchor}, no heading of {path}")
            # FILE.md, "Heading" and FILE.md's "Heading" (README for README.md).
            for m in re.finditer(r"((?<![\w./-])README|[\w./-]+\.md)(?:\]\([^)]*\))?(?:'s|,)\s+[\"\u201c]([^\"\u201d]+)[\"\u201d]",
                                 text):
                file = "README.md" if m.group(1) == "README" else m.group(1)
                path = next((os.path.normpath(os.path.join(b, file)) for b in ("", os.path.dirname(f), "docs")
                             if tree.exists(os.path.normpath(os.path.join(b, file)))), None)
                if path and not any(h.startswith(m.group(2)) for h in md_parts(tree.text(path))):
                    bad.append(f"{where(m.start())}: names \"{m.group(2)}\" in {path}, which has no such heading")
            # hvtuned(8), SECTION and hvtuned(8)'s SECTION.
            flat = text.replace("[[", "").replace("]]", "")
            for m in re.finditer(r"([\w.-]+)\\?\s*\(([1-8])\)(?:,|'s)\s+\"?([A-Z][A-Za-z_ -]*[A-Za-z])", flat):
                page = f"{m.group(1)}({m.group(2)})"
                if page in sections:
                    want = m.group(3).strip()
                    names = [s.lower() for s in sections[page]]
                    if not any(want.lower() == n or want.lower().startswith(n + " ") for n in names):
                        bad.append(f"{f}:{line0 + flat.count(chr(10), 0, m.start())}: names \"{want}\" in {page}, "
                                   "which has no such section")
            # A man page's "see SECTION" and "SECTION below/above" (SECTION in capitals).
            if kind == "man":
                own = f"{os.path.basename(f).rsplit('.', 1)[0]}({f[-1]})"
                for m in re.finditer(r"\[\[([A-Z][A-Z_ -]+[A-Z])\]\]\s*((?:below|above)(?=\s*[.,;:)]|\s*$)|"
                                     r"in\s+\[\[([\w.-]+)\]\]\s*\((\d)\))?",
                                     text):
                    before = text[max(0, m.start() - 6):m.start()]
                    if not (m.group(2) or re.search(r"\bsee\s*$", before)):
                        continue
                    page = f"{m.group(3)}({m.group(4)})" if m.group(3) else own
                    if page in sections and m.group(1) not in sections[page] and m.group(1) not in entries[page]:
                        bad.append(f"{where(m.start())}: names {m.group(1)} in {page}, which has no such section")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 7: MESSAGE_ID values in the docs. An operator copies them into journalctl, and the
# catalog and hvtuned(8)'s list (check 4) are not the only places that give one.

# A hex run that reads as an id: whole (32 digits), or cut short before an ellipsis; a GUID's
# piece ({f8b3781a-...}) or a longer hash is not one.
ID_WHOLE = re.compile(r"(?<![\w{/-])([0-9a-fA-F]{32})(?![\w-])")
ID_CUT = re.compile(r"(MESSAGE_ID\W{0,3})?(?<![\w{/-])([0-9a-fA-F]{4,31})(?:\u2026|\.\.\.)")
# After MESSAGE_ID, a hex run that stops short with no ellipsis: a query that finds nothing.
ID_SHORT = re.compile(r"MESSAGE_ID\W{0,3}(?=[0-9a-fA-F]*\d)([0-9a-fA-F]{6,31})(?![\w\u2026]|\.\.\.)")


def id_documents(tree):
    """[(file, text)]: every document an operator reads a MESSAGE_ID in, man pages as shown."""
    out = []
    for f in tree.files():
        if f.endswith(".md") or f == CATALOG or (f.startswith("contrib/") and f.endswith((".yml", ".yaml"))):
            out.append((f, tree.text(f)))
        elif re.fullmatch(r"docs/[\w.-]+\.[1-8]", f):
            out.append((f, man_render(tree.text(f)).replace("[[", "").replace("]]", "")))
    return out


def check_id_values(tree):
    ids, bad = message_ids(tree, elsewhere=False)
    if not ids:
        return bad
    docs = id_documents(tree)
    STATS["documents read for MESSAGE_ID values"] = len(docs)
    for f, text in docs:
        def where(pos):
            return f"{f}:{text.count(chr(10), 0, pos) + 1}"
        for m in ID_WHOLE.finditer(text):
            if m.group(1) not in ids:
                bad.append(f"{where(m.start())}: MESSAGE_ID {m.group(1)} is none of daemon/messages.h's")
        for m in ID_CUT.finditer(text):
            v = m.group(2)
            if len(v) < 8 and not m.group(1):
                continue        # a short number before "...", not an id
            n = sum(i.startswith(v) for i in ids)
            if n != 1:
                bad.append(f"{where(m.start(2))}: MESSAGE_ID {v}... begins "
                           f"{'none' if not n else f'{n}'} of daemon/messages.h's ids")
        for m in ID_SHORT.finditer(text):
            bad.append(f"{where(m.start(1))}: MESSAGE_ID {m.group(1)} is cut short "
                       "(no id of daemon/messages.h is that long)")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 8: no unfilled placeholder in the man pages, as an operator sees them.

# What a template or a format string leaves when nobody filled it in. Not: a GUID ({...-...}),
# a metric's label set (hvtuned_disks_managed{kind,role}), an empty libconfig group ({}),
# a shell's ${VAR}, a percentage ("10% of").
PLACEHOLDERS = [
    ("a format field", re.compile(r"(?<![\w$%#{])\{(?:[A-Za-z_]\w*(?:\.\w+|\[\w+\])*|\d+)(?:![rsa])?(?::[^{}\s]*)?\}(?!\})")),
    ("a template's field", re.compile(r"\{\{[^{}]*\}\}")),
    ("a %(name) conversion", re.compile(r"%\([A-Za-z_]\w*\)[-#0 +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")),
    ("a printf conversion", re.compile(r"(?<![%\w])%[-#0+]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?"
                                       r"[diouxXeEfFgGcspm](?!\w)")),
    ("a configure variable", re.compile(r"(?<![\w@])@[A-Za-z_][A-Za-z0-9_]*@(?![\w@])")),
]

# How the pages are shown: groff as man(1) runs it, or, without groff, the roff source read
# here (the self-test runs both).
RENDER = {"groff": shutil.which("groff")}
_RENDERED = {}


def man_shown(text):
    """The page as man(1) shows it (plain text), or (None, why)."""
    groff = RENDER["groff"]
    if not groff:
        lines = []
        for line in text.splitlines():
            if re.match(r"[.']\s*\\\"", line):
                continue
            m = re.match(r"[.'](\w+)\s*(.*)", line)
            lines.append(roff_plain(" ".join(roff_args(m.group(2)))) if m else roff_plain(line))
        return "\n".join(lines), None
    if text not in _RENDERED:
        r = subprocess.run([groff, "-k", "-man", "-Tutf8", "-P-cbou"], input=text.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, LC_ALL="C.UTF-8"))
        if r.returncode != 0 or not r.stdout.strip():
            _RENDERED[text] = (None, f"groff failed ({r.returncode}): {r.stderr.decode(errors='replace')[:200]}")
        else:
            _RENDERED[text] = (r.stdout.decode("utf-8", errors="replace"), None)
    return _RENDERED[text]


def check_placeholders(tree):
    bad = []
    pages = man_pages(tree)
    if not pages:
        return ["docs/: no man page found: update tests/docs/docs-match.py"]
    how = "rendered by groff" if RENDER["groff"] else "read as roff source (no groff)"
    STATS[f"man pages {how}"] = len(pages)
    for page, f in sorted(pages.items()):
        shown, err = man_shown(tree.text(f))
        if err:
            bad.append(f"{f}: {err}")
            continue
        for what, pattern in PLACEHOLDERS:
            for m in pattern.finditer(shown):
                line = shown[shown.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0].strip()
                src = re.search(r"\s+".join(map(re.escape, m.group(0).split())), tree.text(f))
                at = f":{tree.text(f).count(chr(10), 0, src.start()) + 1}" if src else ""
                bad.append(f"{f}{at}: {page} shows {what} nobody filled in, {m.group(0)}: \"{line}\"")
    return bad


# ---------------------------------------------------------------------------------------------
# Check 9: what hvtuned manages, where a document sums it up, against the code.

def man_paragraphs(lines):
    """The running text of each paragraph of LINES (requests out, fonts resolved)."""
    out, cur = [], []
    for line in lines:
        if re.match(r"[.'](PP|P|LP|IP|TP|HP|SS|SH|EX|EE)\b", line):
            out.append(" ".join(cur))
            cur = []
            continue
        segs = roff_segments(line)
        if segs:
            cur.append("".join(t for _, t in segs))
    out.append(" ".join(cur))
    return [re.sub(r"\s+", " ", p).strip() for p in out if p.strip()]


def c_value(tree, expr):
    """A setting's value as the code gives it: a literal, or a #define of lib/ (None if not)."""
    expr = expr.strip()
    m = re.fullmatch(r'"([^"\\]*)"', expr)
    if m:
        return m.group(1)
    if re.fullmatch(r"\d+[uUlL]*", expr):
        return expr.rstrip("uUlL")
    for f in c_sources(tree, ("lib",)):
        d = re.search(r"^#define\s+" + re.escape(expr) + r"\s+(\d+)[uUlL]*\s*$", c_strip_comments(tree.text(f)), re.M)
        if d:
            return d.group(1)
    return None


def attr_names(tree):
    """{HVT_ATTR_ suffix: the attribute's name} from lib/attr.c's table."""
    attr = c_strip_comments(tree.text("lib/attr.c"))
    return {i: name for i, name in re.findall(r'\[HVT_ATTR_(\w+)\]\s*=\s*\{\s*HVT_GROUP_\w+\s*,\s*"([a-z_]+)"', attr)}


def settings_in(tree, f, fn, bad):
    """[(attribute, value, NVMe only)] that the function FN of F sets; a problem when it sets
    one in a way this cannot read."""
    body = c_function(tree.text(f), fn)
    if body is None:
        bad.append(f"{f}: no function {fn}(): update tests/docs/docs-match.py")
        return []
    names, out = attr_names(tree), []
    calls = list(re.finditer(r"hvt_setting_set_\w+\(\s*&[\w>.-]+\[HVT_ATTR_(\w+)\]\s*,([^;]*)\)\s*;", body))
    for m in calls:
        value = c_value(tree, m.group(2).split(",")[-1])
        guard = body[body.rfind(";", 0, m.start()) + 1:m.start()]
        if m.group(1) not in names or value is None:
            bad.append(f"{f}: {fn}() sets HVT_ATTR_{m.group(1)} to {m.group(2).split(',')[-1].strip()}, "
                       "which this cannot read: update tests/docs/docs-match.py")
            continue
        out.append((names[m.group(1)], value, "hvt_kind_is_nvme" in guard))
    read = {m.group(1) for m in calls}
    for a in sorted(set(re.findall(r"(?<!\w)HVT_ATTR_(\w+)", body)) - read):
        bad.append(f"{f}: {fn}() sets HVT_ATTR_{a} in a way this cannot read: update tests/docs/docs-match.py")
    if not calls:
        bad.append(f"{f}: {fn}() sets no attribute this can read: update tests/docs/docs-match.py")
    return out


def c_table(tree, f, name, bad):
    """The string values of the C array NAME in F."""
    m = re.search(r"\b" + re.escape(name) + r"\[[^\]]*\]\s*=\s*\{(.*?)\n\};", c_strip_comments(tree.text(f)), re.S)
    values = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    if not values:
        bad.append(f"{f}: no table {name}[] of strings: update tests/docs/docs-match.py")
    return values


def says_never_touched(sentence):
    """Whether SENTENCE says something is not managed and counts Azure's NVMe disks in: an
    NVMe there must be another vendor's."""
    if not re.search(r"\b(?:never|not)\s+(?:be\s+)?(?:touched|tuned|managed|written)\b|\bleft\s+alone\b|"
                     r"\bleaves?\b[^.;]*\balone\b|\bignored?\b", sentence):
        return False
    return any(not re.search(r"\b(?:other|non-Azure)\b[\w'\u2019 -]*$", sentence[:m.start()])
               for m in re.finditer(r"\bNVMe\b", sentence, re.I))


def summaries(tree, bad):
    """[(where, text)]: each place that sums up what hvtuned tunes, and DESCRIPTION whole."""
    out = []
    man = Man(tree.text(MAN8))
    for name in ("NAME", "DESCRIPTION"):
        if man.section(name) is None:
            bad.append(f"{MAN8}: no section {name}")
    if man.section("NAME") is not None:
        out.append((f"{MAN8} NAME", " ".join(man_paragraphs(man.section("NAME")))))
    if man.section("DESCRIPTION") is not None:
        paras = man_paragraphs(man.section("DESCRIPTION"))
        out.append((f"{MAN8} DESCRIPTION's first paragraph", paras[0] if paras else ""))
    body = c_function(tree.text("daemon/main.c"), "help")
    text = "".join(c_strings("{" + body + "}")) if body else ""
    text = text.replace("\\n", "\n").replace('\\"', '"')
    if "\n\n" not in text:
        bad.append("daemon/main.c: no help() whose text starts with lines, then a blank one: "
                   "update tests/docs/docs-match.py")
    else:
        out.append(("hvtuned --help's first lines (daemon/main.c)", text.split("\n\n", 1)[0]))
    m = re.search(r"^Package:.*?^Description: *([^\n]*)\n((?:[ \t][^\n]*\n?)*)", tree.text("debian/control"), re.M | re.S)
    if not m:
        bad.append("debian/control: no binary package's Description: update tests/docs/docs-match.py")
    else:
        out.append(("debian/control's Description (its synopsis)", m.group(1)))
        out.append(("debian/control's Description (its long text)",
                    " ".join(l.strip() for l in m.group(2).splitlines() if l.strip() != ".")))
    spec = tree.text("hvtuned.spec")
    s = re.search(r"^Summary:\s*(.*)$", spec, re.M)
    d = re.search(r"^%description\s*\n(.*?)(?=^%\w|\Z)", spec, re.M | re.S)
    if not s or not d:
        bad.append("hvtuned.spec: no Summary or %description: update tests/docs/docs-match.py")
    else:
        out.append(("hvtuned.spec's Summary", s.group(1)))
        out.append(("hvtuned.spec's %description", d.group(1)))
    intro = re.split(r"^## ", tree.text("README.md"), maxsplit=1, flags=re.M)[0]
    out.append(("README.md's introduction", intro))
    return [(w, re.sub(r"\s+", " ", t)) for w, t in out]


def check_scope(tree):
    bad = []
    # The kinds: storvsc's controllers by VMBus class, Azure's NVMe ones by model.
    storvsc = c_table(tree, "lib/classify.c", "storvsc_classes", bad)
    models = c_table(tree, "lib/classify.c", "nvme_models", bad)
    kinds = ([("storvsc", r"storvsc")] if storvsc else []) + ([("NVMe", r"\bNVMe\b")] if models else [])
    places = summaries(tree, bad)
    STATS["summaries of what hvtuned manages"] = len(places)
    for where, text in places:
        for kind, pattern in kinds:
            if not re.search(pattern, text, re.I):
                bad.append(f"{where} does not name the {kind} disks hvtuned manages (lib/classify.c): \"{text[:90]}\"")
    man = Man(tree.text(MAN8))
    desc = man_paragraphs(man.section("DESCRIPTION", whole=True) or [])
    for where, texts in [(w, [t]) for w, t in places] + [(f"{MAN8} DESCRIPTION", desc)]:
        for sentence in (s for t in texts for s in re.split(r"(?<=[.;])\s+", t)):
            if says_never_touched(sentence):
                bad.append(f"{where} says NVMe disks are not managed, but hvtuned manages Azure's: \"{sentence}\"")
    # Which NVMe disks: the models, where the scope is told in full.
    for where, text in ((f"{MAN8} DESCRIPTION", " ".join(desc)),
                        ("README.md's introduction", dict(places).get("README.md's introduction", ""))):
        for model in models:
            if model not in text:
                bad.append(f"{where} does not name the NVMe model \"{model}\" (lib/classify.c's nvme_models)")
    # The built-in policy: every setting the code makes with no file, and the hw queue cap.
    want = settings_in(tree, "lib/config.c", "builtin_policy", bad)
    want += settings_in(tree, "lib/policy.c", "hvt_platform_defaults", bad)
    cap = attr_names(tree).get("MAX_HW_QUEUES")
    cap_value = c_value(tree, "HVT_DEFAULT_MAX_HW_QUEUES")
    if not cap or not cap_value:
        bad.append("lib/attr.c, lib/hwqueues.h: no HVT_ATTR_MAX_HW_QUEUES or HVT_DEFAULT_MAX_HW_QUEUES: "
                   "update tests/docs/docs-match.py")
    else:
        want.append((cap, cap_value, False))
    STATS["settings of the built-in policy"] = len(want)
    policy = [p for p in desc if "built-in policy" in p]
    if not policy:
        return bad + [f"{MAN8}: no paragraph of DESCRIPTION tells the built-in policy"]
    clauses = [c for p in policy for c in re.split(r";|\.\s", p)]
    for name, value, nvme in want:
        said = [c for c in clauses if re.search(r"(?<!\w)" + re.escape(name) + r"\b", c)]
        if not said:
            bad.append(f"{MAN8}: DESCRIPTION's built-in policy does not name {name} (set to {value} by the code)")
        elif not any(re.search(r"(?<![\w.])" + re.escape(value) + r"(?![\w.])", c) for c in said):
            bad.append(f"{MAN8}: DESCRIPTION's built-in policy does not give {name} the code's value {value}: "
                       f"\"{said[0].strip()}\"")
        elif nvme and not any(re.search(r"\bNVMe\b", c) for c in said):
            bad.append(f"{MAN8}: DESCRIPTION's built-in policy does not say {name} is set on NVMe disks only: "
                       f"\"{said[0].strip()}\"")
    return bad


# ---------------------------------------------------------------------------------------------

CHECKS = {"options": check_options, "config": check_config, "metrics": check_metrics,
          "message-ids": check_message_ids, "fields": check_fields, "references": check_references,
          "id-values": check_id_values, "placeholders": check_placeholders, "scope": check_scope}


def insert_after(text, pattern, addition):
    m = re.search(pattern, text, re.M)
    assert m, f"self-test: no {pattern!r} to change"
    return text[:m.end()] + addition + text[m.end():]


def replace_once(text, old, new):
    assert old in text, f"self-test: no {old!r} to replace"
    return text.replace(old, new, 1)


# hvtuned(8)'s built-in policy as it was before it named every setting.
OLD_POLICY = ("disks; this is why the built-in policy, used when no configuration file\nexists, is\n"
              ".B queue.scheduler = \\(dqnone\\(dq\nand nothing else.\n")


def old_policy(text):
    new, n = re.subn(r"disks\.\n\.PP\nSo the built-in policy sets:\n.*?turn them off\.\n",
                     lambda m: OLD_POLICY, text, count=1, flags=re.S)
    assert n, "self-test: no built-in policy paragraph to put back as it was"
    return new


def remove_line(text, pattern):
    new, n = re.subn(pattern, "", text, count=1, flags=re.M)
    assert n, f"self-test: no {pattern!r} to remove"
    return new


# Each mutation: (check, what it does, {file: change}, what the check must then say).
MUTATIONS = [
    ("options", "a long option added to the table",
     {"daemon/main.c": lambda t: insert_after(t, r"struct option \w+\[\] = \{\n",
                                              '                { "frobnicate", no_argument, NULL, 0x1ff },\n')},
     "SYNOPSIS lacks --frobnicate"),
    ("options", "the same, OPTIONS side",
     {"daemon/main.c": lambda t: insert_after(t, r"struct option \w+\[\] = \{\n",
                                              '                { "frobnicate", no_argument, NULL, 0x1ff },\n')},
     "OPTIONS has no tag for --frobnicate"),
    ("options", "a short option added",
     {"daemon/main.c": lambda t: t.replace('getopt_long(argc, argv, "', 'getopt_long(argc, argv, "z', 1)},
     "SYNOPSIS lacks -z"),
    ("options", "--check-config taken out of SYNOPSIS",
     {MAN8: lambda t: re.sub(r"(\.SH SYNOPSIS\n.*?)\\-\\-check\\-config", r"\1\\-\\-check", t, count=1, flags=re.S)},
     "SYNOPSIS lacks --check-config"),
    ("options", "an option documented that does not exist",
     {MAN8: lambda t: insert_after(t, r"^\.SH OPTIONS\n", ".TP\n.B \\-\\-gone\nGone.\n")},
     "names option --gone"),
    ("config", "a top-level key added",
     {"lib/config.c": lambda t: t.replace('if (strcmp(name, "queue") == 0)\n                        r = parse_group(l, s, "", HVT_GROUP_QUEUE',
                                          'if (strcmp(name, "frob_key") == 0)\n                        r = 0;\n'
                                          '                else if (strcmp(name, "queue") == 0)\n'
                                          '                        r = parse_group(l, s, "", HVT_GROUP_QUEUE', 1)},
     "TOP-LEVEL KEYS has no tag for top-level key frob_key"),
    ("config", "a queue attribute added",
     {"lib/attr.c": lambda t: insert_after(t, r"static const struct hvt_attr attrs\[_HVT_ATTR_MAX\] = \{\n",
                                           '        [HVT_ATTR_FROB] = { HVT_GROUP_QUEUE, "frob_kb", HVT_VALUE_INT, 0, 1 },\n')},
     "queue has no tag for queue key frob_kb"),
    ("config", "a device attribute's documentation removed",
     {MAN5: lambda t: remove_line(t, r"^\.TP\n\.BR eh_timeout .*\n")},
     "device has no tag for device key eh_timeout"),
    ("config", "a host key added",
     {"lib/config.c": lambda t: t.replace('if (strcmp(name, "max_hw_queues") == 0)',
                                          'if (strcmp(name, "frob_host") == 0)\n r = 0;\n else if (strcmp(name, "max_hw_queues") == 0)', 1)},
     "HOST has no tag for host key frob_host"),
    ("config", "a match key added",
     {"lib/config.c": lambda t: t.replace('if (strcmp(name, "kind") == 0)',
                                          'if (strcmp(name, "serial") == 0)\n ;\n else if (strcmp(name, "kind") == 0)', 1)},
     "Match keys has no tag for match key serial"),
    ("config", "an override key added",
     {"lib/config.c": lambda t: t.replace('if (strcmp(name, "match") == 0)',
                                          'if (strcmp(name, "label") == 0)\n ;\n else if (strcmp(name, "match") == 0)', 1)},
     "OVERRIDES does not name the override key label"),
    ("config", "a contested group added",
     {"lib/config.c": lambda t: t.replace('if (!queue && strcmp(gname, "device") != 0)',
                                          'if (!queue && strcmp(gname, "device") != 0 && strcmp(gname, "host") != 0)', 1)},
     "contested does not name its group host"),
    ("config", "a key documented that no parser takes",
     {MAN5: lambda t: insert_after(t, r"^\.SH HOST\n", ".TP\n.BR gone_key \" (integer)\"\nGone.\n")},
     "HOST documents host key gone_key"),
    ("config", "a parser's \"unknown key\" message out of step",
     {"lib/config.c": lambda t: t.replace("unknown key (max_hw_queues, reprobe_idle_controllers)",
                                          "unknown key (max_hw_queues)", 1)},
     "parse_host()'s \"unknown key\" message lists max_hw_queues"),
    ("metrics", "a metric added",
     {"lib/metrics.c": lambda t: insert_after(t, r"^static void[^\n]*\{\n",
                                              '        fputs("hvtuned_frobs_total 0\\n", f);\n')},
     "the metrics list lacks hvtuned_frobs_total"),
    ("metrics", "a metric dropped from the list",
     {MAN5: lambda t: remove_line(t, r"^hvtuned_hw_queue_cap\n")},
     "the metrics list lacks hvtuned_hw_queue_cap "),
    ("metrics", "a metric listed that nobody writes",
     {MAN5: lambda t: t.replace("hvtuned_hw_queue_cap\n", "hvtuned_hw_queue_cap\nhvtuned_gone_total\n", 1)},
     "the metrics list has hvtuned_gone_total"),
    ("metrics", "an alert on a metric nobody writes",
     {RULES: lambda t: t + "\n# expr: hvtuned_never_written > 0\n"},
     "uses hvtuned_never_written"),
    ("message-ids", "a MESSAGE_ID added",
     {"daemon/messages.h": lambda t: t + '#define HVT_MESSAGE_FROB "0123456789abcdef0123456789abcdef"\n'},
     "lacks MESSAGE_ID 0123456789abcdef0123456789abcdef"),
    ("message-ids", "the same, man page side",
     {"daemon/messages.h": lambda t: t + '#define HVT_MESSAGE_FROB "0123456789abcdef0123456789abcdef"\n'},
     "hvtuned.8 (MESSAGE_IDs): lacks MESSAGE_ID 0123456789abcdef0123456789abcdef"),
    ("message-ids", "a catalog entry for an id the daemon does not define",
     {CATALOG: lambda t: t + "\n-- 00000000000000000000000000000000\nSubject: gone\n"},
     "has MESSAGE_ID 00000000000000000000000000000000"),
    ("message-ids", "an id defined outside messages.h",
     {"daemon/main.c": lambda t: t + 'static const char frob[] = "fedcba9876543210fedcba9876543210";\n'},
     "defines MESSAGE_ID fedcba9876543210fedcba9876543210 outside"),
    ("fields", "a journal field added",
     {"daemon/report.c": lambda t: t + '\nstatic const char *frob = "HVTUNED_FROB=%s";\n'},
     "Journal fields lacks HVTUNED_FROB"),
    ("fields", "a field written as add_about() does",
     {"daemon/report.c": lambda t: t + '\nstatic const char *frob = "HVTUNED_FROB2";\n'},
     "Journal fields lacks HVTUNED_FROB2"),
    ("fields", "a field made in a way the test cannot read",
     {"daemon/report.c": lambda t: t + '\nstatic const char *frob = "HVTUNED_%s=%u";\n'},
     "cannot tell which journal field"),
    ("fields", "a field documented that nobody writes",
     {MAN8: lambda t: insert_after(t, r"^\.SS Journal fields\n", ".TP\n.B HVTUNED_GONE\nGone.\n")},
     "Journal fields has HVTUNED_GONE"),
    ("fields", "the catalog shows a field nobody writes",
     {CATALOG: lambda t: t + "\n@HVTUNED_NOBODY@\n"},
     "shows @HVTUNED_NOBODY@"),
    ("references", "a path to a missing file in a Markdown file",
     {"docs/design.md": lambda t: t + "\nSee docs/nothere.md and tests/none/x.sh.\n"},
     "names docs/nothere.md, which does not exist"),
    ("references", "an alert's text that points at a missing file",
     {RULES: lambda t: t.replace("see hvtuned.conf(5), HOST.", "see docs/gone.md.", 1)},
     "names docs/gone.md"),
    ("references", "a bare Markdown name in a test's comment",
     {"tests/docs/layering.py": lambda t: t + "\n# as testing-gone.md says\n"},
     "names testing-gone.md"),
    ("references", "a C comment's dead path",
     {"lib/attr.c": lambda t: t + "\n/* see lib/gone.c */\n"},
     "names lib/gone.c"),
    ("references", "a Markdown anchor that no heading makes",
     {"docs/design.md": lambda t: t + "\n[x](#no-such-heading)\n"},
     "links to #no-such-heading"),
    ("references", "a Markdown file link that goes nowhere",
     {"docs/faults.md": lambda t: t + "\n[x](gone.md)\n"},
     "links to gone.md"),
    ("references", "a heading named after a .md file that lacks it",
     {"docs/faults.md": lambda t: t + '\nas docs/performance.md, "No such heading here" says\n'},
     "\"No such heading here\" in docs/performance.md"),
    ("references", "a part of the README a comment names that it lacks",
     {"lib/attr.c": lambda t: t + '\n/* (README, "No such part here") */\n'},
     "\"No such part here\" in README.md"),
    ("references", "a dead hvtuned(8), SECTION",
     {CATALOG: lambda t: t + "\nsee hvtuned(8), Hardware queues.\n"},
     "\"Hardware queues\" in hvtuned(8)"),
    ("references", "a man page's see SECTION",
     {MAN5: lambda t: insert_after(t, r"^\.SH HOST\n", "see\n.B NO SUCH SECTION\n")},
     "names NO SUCH SECTION in hvtuned.conf(5)"),
    ("references", "a man page's SECTION below",
     {MAN8: lambda t: insert_after(t, r"^\.SH SIGNALS\n", ".B GONE\nbelow.\n")},
     "names GONE in hvtuned(8)"),
    ("references", "a cross-page see SECTION in PAGE",
     {MAN8: lambda t: insert_after(t, r"^\.SH SIGNALS\n", "(see\n.B MISSING\nin\n.BR hvtuned.conf (5)).\n")},
     "names MISSING in hvtuned.conf(5)"),
    ("id-values", "the contested entry's id as hvtuned.conf(5) gave it",
     {MAN5: lambda t: replace_once(t, "MESSAGE_ID 4e85a45c4fe14ff5ac9427123de22621",
                                   "MESSAGE_ID f65082f5a6e64d6c9f2f01ba1395c708")},
     "MESSAGE_ID f65082f5a6e64d6c9f2f01ba1395c708 is none of"),
    ("id-values", "a wrong id in a man page's journalctl example",
     {MAN8: lambda t: replace_once(t, "MESSAGE_ID=573b87040f9442c4ae74cb59264b8376",
                                   "MESSAGE_ID=573b87040f9442c4ae74cb59264b8377")},
     "MESSAGE_ID 573b87040f9442c4ae74cb59264b8377 is none of"),
    ("id-values", "an id cut short with an ellipsis (\u2026) that begins no id",
     {"docs/how-it-works.md": lambda t: replace_once(t, "MESSAGE_ID=73ab5ab808d74f8b99862c698cba139a",
                                                     "MESSAGE_ID=f65082f5\u2026")},
     "MESSAGE_ID f65082f5... begins none"),
    ("id-values", "an id cut short with ... in an alert rule",
     {RULES: lambda t: replace_once(t, "MESSAGE_ID=4e85a45c4fe14ff5ac9427123de22621", "MESSAGE_ID=f65082f5...")},
     "MESSAGE_ID f65082f5... begins none"),
    ("id-values", "an id cut short with no ellipsis in the README",
     {"README.md": lambda t: replace_once(t, "MESSAGE_ID=51da0b4ec8cb4af58042306e8e2cb9da", "MESSAGE_ID=51da0b4ec8cb")},
     "MESSAGE_ID 51da0b4ec8cb is cut short"),
    ("placeholders", "the contested entry's {mid} as hvtuned(8) showed it",
     {MAN8: lambda t: replace_once(t, "(MESSAGE_ID 4e85a45c4fe14ff5ac9427123de22621, with", "(MESSAGE_ID {mid}, with")},
     "a format field nobody filled in, {mid}"),
    ("placeholders", "a {name} in running text",
     {MAN5: lambda t: insert_after(t, r"^\.SH HOST\n", "The disk {name} is tuned.\n")},
     "a format field nobody filled in, {name}"),
    ("placeholders", "a %s in an example",
     {MAN8: lambda t: replace_once(t, "sdc: reverted 11 times", "%s: reverted 11 times")},
     "a printf conversion nobody filled in, %s"),
    ("placeholders", "a %(name)s in an example",
     {MAN8: lambda t: replace_once(t, "sdc: reverted 11 times", "%(disk)s: reverted 11 times")},
     "a %(name) conversion nobody filled in, %(disk)s"),
    ("placeholders", "a configure variable in the title line",
     {MAN8: lambda t: replace_once(t, '"hvtuned 0.2.0"', '"hvtuned @VERSION@"')},
     "a configure variable nobody filled in, @VERSION@"),
    ("placeholders", "a template's field",
     {MAN5: lambda t: insert_after(t, r"^\.SH HOST\n", "The disk {{ disk }} is tuned.\n")},
     "a template's field nobody filled in, {{"),
    ("scope", "NVMe never touched, as hvtuned(8) said",
     {MAN8: lambda t: replace_once(t, "Virtio, other vendors\\(aq NVMe, USB", "Virtio, NVMe, USB")},
     "DESCRIPTION says NVMe disks are not managed"),
    ("scope", "the same in the README's introduction",
     {"README.md": lambda t: replace_once(t, "other vendors' NVMe, multipath", "NVMe, multipath")},
     "README.md's introduction says NVMe disks are not managed"),
    ("scope", "hvtuned(8)'s NAME as it was, storvsc only",
     {MAN8: lambda t: replace_once(t, "(storvsc) and Azure NVMe disks and keep", "(storvsc) disks and keep")},
     "NAME does not name the NVMe disks"),
    ("scope", "hvtuned(8)'s DESCRIPTION opening as it was, storvsc only",
     {MAN8: lambda t: replace_once(t, "and Azure (storvsc disks and Azure\\(aqs NVMe disks) to", "(the storvsc driver) to")},
     "DESCRIPTION's first paragraph does not name the NVMe disks"),
    ("scope", "--help's first lines as they were, storvsc only",
     {"daemon/main.c": lambda t: replace_once(t, "(storvsc) and Azure NVMe disks and keep", "(storvsc) disks and keep")},
     "--help's first lines (daemon/main.c) does not name the NVMe disks"),
    ("scope", "debian/control's synopsis as it was, storvsc only",
     {"debian/control": lambda t: replace_once(t, "tunes the storvsc and Azure NVMe disks of", "tunes the storvsc disks of")},
     "debian/control's Description (its synopsis) does not name the NVMe disks"),
    ("scope", "hvtuned.spec's Summary as it was, storvsc only",
     {"hvtuned.spec": lambda t: replace_once(t, "Tunes the storvsc and Azure NVMe disks of", "Tunes the storvsc disks of")},
     "hvtuned.spec's Summary does not name the NVMe disks"),
    ("scope", "an NVMe model lib/classify.c takes that hvtuned(8) does not name",
     {"lib/classify.c": lambda t: replace_once(t, '"Microsoft NVMe Direct Disk v2",',
                                               '"Microsoft NVMe Direct Disk v2",\n        [HVT_KIND_FROB] = "Microsoft NVMe Frob",')},
     "DESCRIPTION does not name the NVMe model \"Microsoft NVMe Frob\""),
    ("scope", "the built-in policy as hvtuned(8) told it: scheduler none and nothing else",
     {MAN8: old_policy},
     "built-in policy does not name read_ahead_kb"),
    ("scope", "the same, io_timeout",
     {MAN8: old_policy},
     "built-in policy does not name io_timeout"),
    ("scope", "the same, the hw queue cap",
     {MAN8: old_policy},
     "built-in policy does not name storvsc_max_hw_queues"),
    ("scope", "io_timeout told for every disk, not Azure's NVMe ones",
     {MAN8: lambda t: replace_once(t, "to 240000 (ms) on Azure\\(aqs NVMe disks,", "to 240000 (ms) on every disk it manages,")},
     "does not say io_timeout is set on NVMe disks only"),
    ("scope", "hvt_platform_defaults() sets one more attribute",
     {"lib/policy.c": lambda t: replace_once(t, "ret[HVT_ATTR_READ_AHEAD_KB].at_most = true;\n",
                                             "ret[HVT_ATTR_READ_AHEAD_KB].at_most = true;\n"
                                             "        (void) hvt_setting_set_int(&ret[HVT_ATTR_NR_REQUESTS], HVT_ATTR_NR_REQUESTS, 64);\n")},
     "built-in policy does not name nr_requests (set to 64"),
    ("scope", "the read-ahead cap's value changed in the code",
     {"lib/policy.h": lambda t: replace_once(t, "HVT_PLATFORM_READ_AHEAD_KB 128", "HVT_PLATFORM_READ_AHEAD_KB 256")},
     "does not give read_ahead_kb the code's value 256"),
    ("scope", "the default hw queue cap changed in the code",
     {"lib/hwqueues.h": lambda t: replace_once(t, "HVT_DEFAULT_MAX_HW_QUEUES 4", "HVT_DEFAULT_MAX_HW_QUEUES 8")},
     "does not give storvsc_max_hw_queues the code's value 8"),
    ("scope", "the no-file scheduler changed in the code",
     {"lib/config.c": lambda t: replace_once(t, 'settings[HVT_ATTR_SCHEDULER], "none")', 'settings[HVT_ATTR_SCHEDULER], "kyber")')},
     "does not give scheduler the code's value kyber"),
    ("scope", "a platform default set in a way the test cannot read",
     {"lib/policy.c": lambda t: replace_once(t, "ret[HVT_ATTR_READ_AHEAD_KB].at_most = true;\n",
                                             "ret[HVT_ATTR_READ_AHEAD_KB].at_most = true;\n        ret[HVT_ATTR_WBT_LAT_USEC].set = true;\n")},
     "sets HVT_ATTR_WBT_LAT_USEC in a way this cannot read"),
]


def selftest(root):
    failed = run_mutations(root, MUTATIONS, "")
    # Without groff the pages are read as roff source: that way has to notice as well.
    if RENDER["groff"]:
        RENDER["groff"] = None
        failed += run_mutations(root, [m for m in MUTATIONS if m[0] == "placeholders"], " (roff source, no groff)")
    print(f"{failed} mutations not caught")
    return 1 if failed else 0


def run_mutations(root, mutations, how):
    checks = {m[0] for m in mutations}
    base = {name: set(fn(Tree(root))) for name, fn in CHECKS.items() if name in checks}
    failed = 0
    for check, what, changes, expect in mutations:
        what += how
        tree = Tree(root)
        try:
            for f, change in changes.items():
                tree.over[f] = change(tree.text(f))
        except AssertionError as e:
            failed += 1
            print(f"CANNOT APPLY: {check}: {what}: {e}")
            continue
        got = [p for p in CHECKS[check](tree) if p not in base[check]]
        if any(expect in p for p in got):
            print(f"ok: {check}: {what}")
        else:
            failed += 1
            print(f"NOT CAUGHT: {check}: {what}: expected \"{expect}\", got {got or 'nothing new'}")
    print(f"{len(mutations)} mutations{how}, {failed} not caught")
    return failed


def main():
    root = sys.argv[1]
    if "--selftest" in sys.argv[2:]:
        return selftest(root)
    tree = Tree(root)
    total = 0
    for name, fn in CHECKS.items():
        problems = fn(tree)
        for p in problems:
            print(f"{name}: {p}")
        total += len(problems)
    print("read: " + ", ".join(f"{v} {k}" for k, v in STATS.items()))
    print(f"{total} problems")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
