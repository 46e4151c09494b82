"""make mutate-gen: mutants generated from the series' own lines.

The hand-written catalogue (tests/mutants) holds the mistakes its authors
thought of. This one is made mechanically: every C line the series adds
to the files in SOURCES is tried with every operator that fits it, one
change per mutant:
  - tokens (OPERATORS): relations, logic, literals, the futex word's
    flags, widths, whose task, swapped arguments, put_user()/get_user()
    without their access check;
  - a line's own structure: an if's condition forced true or (for a
    block) false, PIT's "remove conditionals", and each operand of a
    top-level && or || dropped; each plain argument of a call made 0; a
    statement dropped whole, a goto included;
  - its neighbours: a statement moved below the next one when the two
    share a name; an early `return E;` kept as `ret = E;` in a function
    with a `ret`, so that it falls through.
Each mutant gets a stable name, g-<file>-<line>-<operator>[-<nth>], so two
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

# The series' C files whose added lines are mutated: the walk, the compat
# walk, the futex core's exit and exec release, exec, fork, the uaccess
# helper; and the robust unlock's files (patches 12-14): the wake and PI
# unlock, the system call's checks, the signal-time fixup and its x86
# window.
SOURCES = ("kernel/futex/robust.c", "kernel/futex/robust_compat.c",
           "kernel/futex/core.c", "fs/exec.c", "kernel/fork.c",
           "include/linux/uaccess.h", "arch/x86/include/asm/uaccess_64.h",
           "kernel/futex/waitwake.c", "kernel/futex/pi.c", "kernel/futex/syscalls.c",
           "kernel/entry/common.c", "arch/x86/entry/vdso/vma.c")

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
    # user access without its access_ok(): a kernel address is then read
    # or written as if it were the user's
    Operator("put-user-unchecked", re.compile(r"(?<!_)\bput_user\("), "__put_user("),
    Operator("get-user-unchecked", re.compile(r"(?<!_)\bget_user\("), "__get_user("),
)

# Statements that a mutant may drop whole (the line becomes ";").
DROPPABLE = re.compile(r"^\s*(?:return\b[^;]*|goto\s+\w+|break|continue|[\w>.\-]+\([^;]*\))\s*;\s*$")
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
    before: str            # the lines replaced, joined by newlines
    after: str             # what replaces them
    pin: str = ""          # pin_of() the line and the two before it
    span: int = 1          # how many lines, from `line`, are replaced


def pin_of(lines, n):
    """A short hash of line n (1-based) of `lines` and the two lines
    before it, stripped: the equivalence list pins each name to the code
    it was judged on, since a name only says a line number, and an edit
    above it moves another statement under that number."""
    text = "\n".join(line.strip() for line in lines[max(0, n - 3):n])
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _slug(path):
    return re.sub(r"[^a-z0-9]+", "-", path.rsplit("/", 1)[-1].lower()).strip("-")


def closing(code, open_at):
    """The index of the parenthesis closing the one at `open_at`, or None
    when it is not on this line."""
    depth = 0
    for i in range(open_at, len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return None


def split_top(text, sep):
    """[(start, end)] of the parts of `text` between the separators `sep`
    outside parentheses; one part when there is none."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(c, 0)
        if depth == 0 and text.startswith(sep, i):
            parts.append((start, i))
            start = i = i + len(sep)
            continue
        i += 1
    return parts + [(start, len(text))]


CONDITION = re.compile(r"^\s*(?:\}\s*else\s+)?(?:if|while)\s*\(")


def condition_mutants(code, original):
    """[(operator, nth, mutated line)] of an if or while whose condition
    closes on this line: the condition forced (PIT's "remove conditionals":
    a guard added that always holds, or never does, the condition still
    evaluated), and each operand of a top-level && or || dropped."""
    m = CONDITION.match(code)
    if not m:
        return []
    lo = m.end() - 1
    hi = closing(code, lo)
    if hi is None:
        return []
    cond = original[lo + 1:hi]
    head, tail = original[:lo + 1], original[hi:]
    found = [("if-always", 1, head + "(%s) || 1" % cond + tail)]
    # A body of one statement on the next line is statement-dropped's.
    if code.rstrip().endswith("{"):
        found.append(("if-never", 1, head + "(%s) && 0" % cond + tail))
    for sep in ("&&", "||"):
        parts = split_top(code[lo + 1:hi], sep)
        if len(parts) < 2:
            continue
        for nth, _ in enumerate(parts, 1):
            kept = [cond[a:b].strip() for i, (a, b) in enumerate(parts, 1) if i != nth]
            found.append(("condition-dropped", nth,
                          head + (" %s " % sep).join(kept) + tail))
    return found


CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
NOT_CALLS = {"if", "while", "for", "switch", "return", "sizeof", "typeof", "likely",
             "unlikely", "offsetof", "BUILD_BUG_ON", "WARN_ON", "WARN_ON_ONCE",
             "READ_ONCE", "IS_ENABLED"}
# The user-access macros take an lvalue, a pointer whose type they read,
# or a label: a 0 there does not build.
USER_ACCESS = re.compile(r"^(?:__)?(?:unsafe_)?(?:get|put)_user(?:_nocall)?$")
PLAIN_ARG = re.compile(r"^[A-Za-z_]\w*(?:(?:->|\.)\w+)*$")


def argument_mutants(code, original):
    """[(operator, nth, mutated line)]: each plain argument (a name or a
    member) of a call on this line replaced by 0, the argument a caller
    forgets or gets wrong (flags, a count, a task, a pointer)."""
    found, nth = [], 0
    for m in CALL.finditer(code):
        if m.group(1) in NOT_CALLS or USER_ACCESS.match(m.group(1)):
            continue
        lo = m.end() - 1
        hi = closing(code, lo)
        if hi is None:
            continue
        parts = split_top(code[lo + 1:hi], ",")
        if len(parts) < 2:
            continue
        for a, b in parts:
            arg = code[lo + 1 + a:lo + 1 + b]
            if not PLAIN_ARG.match(arg.strip()) or arg.strip() in ("NULL", "false"):
                continue
            nth += 1
            start = lo + 1 + a + (len(arg) - len(arg.lstrip()))
            end = start + len(arg.strip())
            found.append(("arg-to-zero", nth, original[:start] + "0" + original[end:]))
    return found


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
    found += condition_mutants(code, original) + argument_mutants(code, original)
    if DROPPABLE.match(code):
        indent = original[:len(original) - len(original.lstrip())]
        found.append(("statement-dropped", 1, indent + ";"))
    return found


# A statement that may move past its neighbour: an assignment or a call,
# on one line; not a declaration, a jump or a block's start.
MOVABLE = re.compile(r"^\s*(?!return\b|goto\b|break\b|continue\b|if\b|else\b|"
                     r"(?:const\s+)?(?:struct\s+\w+|int|long|bool|u32|u64|unsigned|"
                     r"void|char)\b)[\w>.\-\[\]*()]+(?:\s*[+\-|&]?=[^=][^;]*|\([^;]*\));\s*$")
NAME = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"if", "return", "sizeof", "NULL", "true", "false", "current", "unsigned", "long"}
RETURNED = re.compile(r"^(\s*)return\s+([^;]+);\s*$")
# `ret` declared at function scope (one tab in), as an integer.
RET_DECLARED = re.compile(r"^\t(?:int|long|unsigned\s+int|u32)\s+(?:[\w, =\-]*,\s*)?ret\b")
# A definition whose function returns a pointer: `ret = E;` would not be one.
RETURNS_POINTER = re.compile(r"\*\s*\w+\s*\(")


def written(code):
    """The names a one-line statement may write: an assignment's left
    side; every name a call is given (it may write through them)."""
    m = re.match(r"^\s*([^=;(]+?)\s*[+\-|&]?=[^=]", code)
    target = m.group(1) if m else code
    return set(NAME.findall(target)) - KEYWORDS


def dependent(a, b):
    """Does swapping statements a and b change what they do: one writes
    a name the other uses?"""
    names_a, names_b = set(NAME.findall(a)) - KEYWORDS, set(NAME.findall(b)) - KEYWORDS
    return bool(written(a) & names_b or written(b) & names_a)


def context_mutants(code, lines, n):
    """[(operator, span, new lines)] that need the lines around added line
    n (1-based): the statement moved below the next one when the two
    share a name (a store and its load, a release and its wake); an
    early `return E;` kept as `ret = E;` in a function with a `ret`, so
    that it falls through."""
    found = []
    nxt = code.get(n + 1)
    if SKIPPED.match(code[n]):
        return found
    if (nxt is not None and MOVABLE.match(code[n]) and MOVABLE.match(nxt)
            and not SKIPPED.match(nxt)
            and code[n][:len(code[n]) - len(code[n].lstrip())]
            == nxt[:len(nxt) - len(nxt.lstrip())]
            and dependent(code[n], nxt)):
        found.append(("statement-moved-down", 2, [lines[n], lines[n - 1]]))
    r = RETURNED.match(code[n])
    if r and r.group(2).strip() != "ret" and r.group(1) != "\t":
        # Not the function's last statement (one tab in): falling off the
        # end of a function that returns a value does not build.
        for k in range(n - 1, 0, -1):
            if lines[k - 1].startswith("{"):
                if (not RETURNS_POINTER.search(lines[k - 2] if k > 1 else "")
                        and any(RET_DECLARED.match(code.get(j, "")) for j in range(k + 1, n))):
                    found.append(("return-kept-as-assignment", 1,
                                  ["%sret = %s;" % (r.group(1), r.group(2).strip())]))
                break
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
        found = [(op, nth, [mutated], 1)
                 for op, nth, mutated in mutate_line(code[n], lines[n - 1])]
        found += [(op, 1, new, span) for op, span, new in context_mutants(code, lines, n)]
        counts = {}
        for op, *_ in found:
            counts[op] = counts.get(op, 0) + 1
        for op, nth, new, span in found:
            name = "g-%s-%d-%s%s" % (_slug(path), n, op, "-%d" % nth if counts[op] > 1 else "")
            # The pin covers every line the mutant replaces.
            out.append(Generated(name, path, n, op, "\n".join(lines[n - 1:n - 1 + span]),
                                 "\n".join(new), pin_of(lines, n + span - 1), span))
    return out


def patch_text(g, after):
    """The mutant as a catalogue file: header, then a unified diff of the
    one changed line with three lines of context."""
    lines = after.splitlines()
    last = g.line + g.span - 1
    lo, hi = max(1, g.line - 3), min(len(lines), last + 3)
    old, new = g.before.split("\n"), g.after.split("\n")
    hunk = ([" " + lines[i - 1] for i in range(lo, g.line)] + ["-" + x for x in old]
            + ["+" + x for x in new] + [" " + lines[i - 1] for i in range(last + 1, hi + 1)])
    count = hi - lo + 1
    return "".join([
        "Rule: generated: %s on %s:%d: %s\n" % (g.operator, g.path, g.line,
                                                 old[0].strip()),
        "Generated: %s\n\n" % g.operator,
        "--- a/%s\n+++ b/%s\n" % (g.path, g.path),
        "@@ -%d,%d +%d,%d @@\n" % (lo, count, lo, count - len(old) + len(new)),
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
