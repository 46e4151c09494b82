"""make mutate-gen: mutants generated from the series' own lines.

The hand-written catalogue (tests/mutants) holds the mistakes its authors
thought of. This one is made mechanically: every C line the series adds
to the files in SOURCES (the walk, the compat walk, the futex core's
exit and exec release, exec, fork, the uaccess helper) is tried with
every operator of OPERATORS that fits it, one change per mutant. Each
mutant gets a stable name, g-<file>-<line>-<operator>[-<nth>], so two
runs of the same series can be compared name by name.

Why not Coccinelle: every operator here is a change of one token or one
statement on one line, chosen per occurrence; spatch expresses each as a
rule easily, but enumerating the occurrences one mutant at a time, and
only on the lines the series adds, is what this module does anyway. It
is plain Python, tested in tests/host/test_mutgen.py.

A generated mutant says "Generated: <operator>" in its header instead
of naming the cases that catch it. One that does not build is counted
apart ("unbuildable"), never as a kill; a survivor is either killed by a
new case or named, with the reason no test can tell it apart, in
tests/mutants-gen-equivalent.txt.
"""
import difflib
import hashlib
import re
from dataclasses import dataclass

# The series' C files whose added lines are mutated.
SOURCES = ("kernel/futex/robust.c", "kernel/futex/robust_compat.c",
           "kernel/futex/core.c", "fs/exec.c", "kernel/fork.c",
           "include/linux/uaccess.h", "arch/x86/include/asm/uaccess_64.h")

EQUIVALENTS = "tests/mutants-gen-equivalent.txt"


@dataclass
class Operator:
    name: str
    pattern: re.Pattern
    replace: object        # str, or a function of the match


def _plus_one(m):
    return str(int(m.group(0)) + 1)


def _minus_one(m):
    return str(int(m.group(0)) - 1)


OPERATORS = (
    # relational and equality
    Operator("eq-to-ne", re.compile(r"=="), "!="),
    Operator("ne-to-eq", re.compile(r"!="), "=="),
    Operator("lt-to-le", re.compile(r"(?<![<\-])<(?![<=])"), "<="),
    Operator("le-to-lt", re.compile(r"<="), "<"),
    Operator("gt-to-ge", re.compile(r"(?<![>\-])>(?![>=])"), ">="),
    Operator("ge-to-gt", re.compile(r">="), ">"),
    # logic
    Operator("and-to-or", re.compile(r"&&"), "||"),
    Operator("or-to-and", re.compile(r"\|\|"), "&&"),
    Operator("not-dropped", re.compile(r"!(?=[\w(])"), ""),
    Operator("true-to-false", re.compile(r"\btrue\b"), "false"),
    Operator("false-to-true", re.compile(r"\bfalse\b"), "true"),
    # boundaries: a decimal literal of a comparison, a bound or an offset
    Operator("literal-plus-one", re.compile(r"(?<![\w.])\d+(?![\w.])"), _plus_one),
    Operator("literal-minus-one", re.compile(r"(?<![\w.])[1-9]\d*(?![\w.])"), _minus_one),
    # flags and masks of the futex word, and the wake's bitset
    Operator("waiters-to-owner-died", re.compile(r"\bFUTEX_WAITERS\b"), "FUTEX_OWNER_DIED"),
    Operator("owner-died-to-waiters", re.compile(r"\bFUTEX_OWNER_DIED\b"), "FUTEX_WAITERS"),
    Operator("tid-mask-widened", re.compile(r"\bFUTEX_TID_MASK\b"), "(~0U)"),
    Operator("bitset-to-one", re.compile(r"\bFUTEX_BITSET_MATCH_ANY\b"), "1"),
    Operator("pi-bit-mask-dropped", re.compile(r"&\s*~1U?L?\b"), "& ~0UL"),
    # widths of user words
    Operator("u32-to-ulong", re.compile(r"\bu32\b"), "unsigned long"),
    Operator("ulong-to-u32", re.compile(r"\bunsigned long\b"), "u32"),
    Operator("compat-uptr-to-ulong", re.compile(r"\bcompat_uptr_t\b"), "unsigned long"),
    # whose task, whose credentials, which namespace
    Operator("current-to-leader", re.compile(r"\bcurrent\b(?!->group_leader)"),
             "current->group_leader"),
    Operator("realcreds-to-fscreds", re.compile(r"\bPTRACE_MODE_READ_REALCREDS\b"),
             "PTRACE_MODE_READ_FSCREDS"),
    Operator("vpid-to-init-ns", re.compile(r"\bfind_task_by_vpid\((\w+)\)"),
             r"find_task_by_pid_ns(\1, &init_pid_ns)"),
    Operator("vnr-to-global", re.compile(r"\btask_pid_vnr\("), "task_pid_nr("),
    # swapped arguments of a two-argument call with plain arguments
    Operator("args-swapped", re.compile(r"\b(\w+)\(([\w>&.\-]+), ([\w>&.\-]+)\)"),
             r"\1(\3, \2)"),
)

# Statements that a mutant may drop whole (the line becomes ";").
DROPPABLE = re.compile(r"^\s*(?:return\b[^;]*|break|continue|[\w>.\-]+\([^;]*\))\s*;\s*$")
# Lines no operator touches: preprocessor, labels, the first line of a
# function's definition or declaration (a change there is one of its
# prototype, which does not build), and compile-time assertions (a
# mutant of one fails the build, and says nothing of the tests).
SKIPPED = re.compile(r"^\s*(?:#|\w+:\s*$|static_assert\b|BUILD_BUG_ON|"
                     r"(?:static|extern|inline|void|int|bool|long)\b[^=;]*\()")


def code_lines(text):
    """{line number: the line with comments blanked}, for the lines of a C
    file outside comments (block and line) and string literals."""
    out, in_block = {}, False
    for n, line in enumerate(text.splitlines(), 1):
        code, i = [], 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                    continue
                code.append(" " * (end + 2 - i))
                i, in_block = end + 2, False
            elif line.startswith("/*", i):
                in_block = True
            elif line.startswith("//", i):
                break
            elif line[i] == '"':
                end = line.find('"', i + 1)
                end = len(line) - 1 if end < 0 else end
                code.append(" " * (end + 1 - i))
                i = end + 1
            else:
                code.append(line[i])
                i += 1
        blanked = "".join(code)
        if blanked.strip():
            out[n] = blanked
    return out


def added_lines(before, after):
    """Line numbers (in `after`) of the lines a diff from `before` adds."""
    added = set()
    sm = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(),
                                 autojunk=False)
    for tag, _, _, j1, j2 in sm.get_opcodes():
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
    return added


@dataclass
class Generated:
    name: str
    path: str              # the file, relative to the tree
    line: int
    operator: str
    before: str
    after: str
    pin: str = ""          # pin_of() the line and the two before it


def pin_of(lines, n):
    """A short hash of line n (1-based) of `lines` and the two lines
    before it, stripped: the equivalence list pins each name to the code
    it was judged on, since a name only says a line number, and an edit
    above it moves another statement under that number."""
    text = "\n".join(line.strip() for line in lines[max(0, n - 3):n])
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _slug(path):
    return re.sub(r"[^a-z0-9]+", "-", path.rsplit("/", 1)[-1].lower()).strip("-")


def mutate_line(code, original):
    """[(operator, nth, mutated line)] for one line: `code` is the line
    with comments blanked (where operators may match), `original` the
    line as written (what is changed)."""
    found = []
    if SKIPPED.match(code):
        return found
    for op in OPERATORS:
        for nth, m in enumerate(op.pattern.finditer(code), 1):
            new = m.expand(op.replace) if isinstance(op.replace, str) else op.replace(m)
            mutated = original[:m.start()] + new + original[m.end():]
            if mutated != original:
                found.append((op.name, nth, mutated))
    if DROPPABLE.match(code):
        indent = original[:len(original) - len(original.lstrip())]
        found.append(("statement-dropped", 1, indent + ";"))
    return found


def generate(path, before, after):
    """[Generated] for one file: every operator at every occurrence on the
    lines `after` adds to `before`."""
    lines = after.splitlines()
    code = code_lines(after)
    out = []
    for n in sorted(added_lines(before, after)):
        if n not in code:
            continue
        found = mutate_line(code[n], lines[n - 1])
        counts = {}
        for op, _, _ in found:
            counts[op] = counts.get(op, 0) + 1
        for op, nth, mutated in found:
            name = "g-%s-%d-%s%s" % (_slug(path), n, op, "-%d" % nth if counts[op] > 1 else "")
            out.append(Generated(name, path, n, op, lines[n - 1], mutated,
                                 pin_of(lines, n)))
    return out


def patch_text(g, after):
    """The mutant as a catalogue file: header, then a unified diff of the
    one changed line with three lines of context."""
    lines = after.splitlines()
    lo, hi = max(1, g.line - 3), min(len(lines), g.line + 3)
    body = [" " + lines[i - 1] if i != g.line else None for i in range(lo, hi + 1)]
    at = g.line - lo
    hunk = body[:at] + ["-" + g.before, "+" + g.after] + body[at + 1:]
    count = hi - lo + 1
    return "".join([
        "Rule: generated: %s on %s:%d: %s\n" % (g.operator, g.path, g.line, g.before.strip()),
        "Generated: %s\n\n" % g.operator,
        "--- a/%s\n+++ b/%s\n" % (g.path, g.path),
        "@@ -%d,%d +%d,%d @@\n" % (lo, count, lo, count),
    ] + [h + "\n" for h in hunk])


def sample(names, n):
    """A fixed sample of n names: the smallest by a hash of the name, so
    the same mutants are picked run after run while their names hold."""
    return sorted(sorted(names, key=lambda s: hashlib.sha256(s.encode()).hexdigest())[:n])


EQUIVALENT_LINE = re.compile(r"^(?P<name>g-[\w-]+) @(?P<pin>[0-9a-f]{8}): (?P<why>.+)$")


def read_equivalents(text):
    """{name: (pin, reason)} of the equivalence list: "NAME @PIN: why"
    per line, PIN being the mutant's pin_of() when it was judged."""
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = EQUIVALENT_LINE.match(line)
        if not m:
            raise ValueError("%s:%d: not 'NAME @PIN: why': %s" % (EQUIVALENTS, n, line[:60]))
        out[m["name"]] = (m["pin"], m["why"])
    return out


def unpinned(equivalents, generated):
    """What no longer holds in the equivalence list against the mutants
    `generated` ({name: Generated}): names not generated any more, and
    names whose line (or the two before it) changed, each a line of text."""
    out = []
    for name, (pin, _) in sorted(equivalents.items()):
        g = generated.get(name)
        if g is None:
            out.append("%s: the series no longer generates it" % name)
        elif g.pin != pin:
            out.append("%s: judged at @%s, now @%s, %s:%d: %s" % (
                name, pin, g.pin, g.path, g.line, g.before.strip()))
    return out
