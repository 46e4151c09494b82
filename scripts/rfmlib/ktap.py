"""The one KTAP parser: results.ktap of one guest run -> cases.

The guest's init prints a top-level KTAP document; each test program is a
subtest, indented by four spaces, whose cases are the rows of the matrix.
The order is KUnit's, so the kernel's own parser (tools/testing/kunit/
kunit.py parse) reads it too: init prints the subtest's version line and
its "# Subtest:" line before the program starts, then the program's own
KTAP less its own version line:

    KTAP version 1
    1..1
    # rfm-target: i386
        KTAP version 1
        # Subtest: smoke
        1..2
        # obs errno=EINVAL
        ok 1 set_bad_length
        # obs head_len=12 [abi]
        ok 2 set_get_roundtrip
    ok 1 smoke
    # rfm-complete 1

Logs from before that order (a LAVA log, a shard to merge) read the same:
there the plan came after the rfm- lines, and "# Subtest:" before the
program's own version line. Version lines carry nothing this parser needs;
it skips them wherever they are.

"# obs key=value" lines attach to the next result line of their level.
A suffix "[abi]" marks a value that depends on the word size; "[target:
why]" one that may differ between targets, for the reason given.

Statuses: PASS, FAIL, SKIP; ERROR when the program ended (timeout, crash)
without reporting a planned case; MISS when the log stops before it (the
guest died or the log was truncated). Nothing missing is ever a pass.

Another suite's program (mainline's selftests) that failed is run a
second time by init, which keeps the first attempt as comments of the
subtest, before the second attempt's output:

        # rfm-first-attempt: not ok 3 global.test_b
        # rfm-first-attempt-result: exit status 1

A case that fails the second time too is run alone, up to three more
times until it passes, each run as comments before the second attempt:

        # rfm-retry: 1..1
        # rfm-retry: ok 1 global.test_c
        # rfm-retry-result: global.test_c: passed

Each case of such a program keeps every result, in the order they ran
(Case.attempts: first, second, then its runs alone). One that passed on
some attempt and failed on another, in either order, is a pass, but a
flaky one: reported with all its results, never as a plain pass.
Otherwise the second attempt's result is the case's.
"""
import re
from dataclasses import dataclass, field

PASS, FAIL, SKIP, ERROR, MISS = "PASS", "FAIL", "SKIP", "ERROR", "MISS"
STATUSES = (PASS, FAIL, SKIP, ERROR, MISS)
COMPLETE_MARKER = "# rfm-complete"

RESULT_RE = re.compile(r"^(not ok|ok)\s+(\d+)\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$")
PLAN_RE = re.compile(r"^1\.\.(\d+)")
OBS_RE = re.compile(r"^#\s*obs\s+([\w.\-]+)=(.*?)\s*(?:\[(abi|target)(?::\s*([^\]]*))?\])?\s*$")
META_RE = re.compile(r"^#\s*rfm-([\w-]+):\s*(.*)$")
SUBTEST_RE = re.compile(r"^#\s*Subtest:\s*(.+?)\s*$")
VERSION_RE = re.compile(r"^(?:KTAP version|TAP version \d+$)")
KERNEL_LOG_RE = re.compile(r"^\s*(?:<\d>)?\[\s*\d+\.\d+\]")


@dataclass
class Obs:
    value: str
    scope: str = "all"      # all | abi | target
    why: str = ""           # reason for a target-scoped difference


@dataclass
class Case:
    suite: str
    name: str
    status: str
    reason: str = ""
    obs: dict = field(default_factory=dict)
    diag: list = field(default_factory=list)
    # Both attempts' "STATUS (reason)", in order, when init ran the
    # program twice; () otherwise.
    attempts: tuple = ()

    @property
    def first(self):
        return self.attempts[0] if self.attempts else ""

    @property
    def flaky(self):
        """Passed on one attempt, failed (or never got there) on the other."""
        kinds = {a.split(" ", 1)[0] for a in self.attempts}
        return PASS in kinds and bool(kinds & {FAIL, ERROR})

    @property
    def failed_kept_run(self):
        """Failed on the second run, the one whose output is kept."""
        return len(self.attempts) > 1 and self.attempts[1].split(" ", 1)[0] in (FAIL, ERROR)

    @property
    def key(self):
        return "%s.%s" % (self.suite, self.name) if self.name else self.suite


@dataclass
class Suite:
    name: str
    status: str = MISS
    reason: str = ""
    planned: int = None
    cases: list = field(default_factory=list)
    # The first attempt of a program init ran twice: {case: "STATUS
    # (reason)"}, and why the attempt failed.
    first: dict = field(default_factory=dict)
    first_result: str = ""
    # Its failing cases' runs alone: {case: ["STATUS (reason)", ...]}.
    retries: dict = field(default_factory=dict)
    # A nameless result of an attempt kept as comments, waiting for the
    # attempt's next named result: {"first" or "retry": (status, reason)}.
    nameless: dict = field(default_factory=dict)


FIRST_ATTEMPT_RE = re.compile(r"^#\s*rfm-first-attempt:\s?(.*)$")
FIRST_RESULT_RE = re.compile(r"^#\s*rfm-first-attempt-result:\s*(.*)$")
RETRY_RE = re.compile(r"^#\s*rfm-retry:\s?(.*)$")
RETRY_RESULT_RE = re.compile(r"^#\s*rfm-retry-result:")


@dataclass
class Run:
    meta: dict = field(default_factory=dict)
    planned: int = None
    complete: bool = False
    suites: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    foreign_lines: int = 0

    def cases(self):
        """{case key: Case}, in report order."""
        out = {}
        for suite in self.suites:
            for case in suite.cases:
                out[case.key] = case
        return out


def _status(ok, directive):
    directive = directive or ""
    if ok and directive.upper().startswith("SKIP"):
        return SKIP, directive[4:].strip()
    return (PASS if ok else FAIL), directive.strip()


def _held_result(text, suite, attempt):
    """A result line of an attempt kept as comments: (name, "STATUS
    (reason)"), or None. A nameless result is held in suite.nameless
    [attempt] for the next named one of the same attempt, as the second
    attempt's own nameless results are."""
    m = RESULT_RE.match(text.strip())
    if not m:
        return None
    status, reason = _status(m.group(1) == "ok", m.group(4))
    if not m.group(3).strip():
        suite.nameless[attempt] = (status, reason)
        return None
    held = suite.nameless.pop(attempt, None)
    if held and status == PASS and held[0] != PASS:
        status, reason = held
    return m.group(3).strip(), _shown(status, reason)


def _shown(status, reason):
    """"STATUS (reason)", as a case's attempts keep it."""
    return "%s (%s)" % (status, reason) if reason else status


def _close_suite(suite, reported_result):
    """Fill in the cases a suite planned but never reported."""
    seen = len(suite.cases)
    if suite.planned is not None and seen < suite.planned:
        status = ERROR if reported_result else MISS
        why = ("program ended before reporting it: %s" % (suite.reason or "?")
               if reported_result else "log ends before this result")
        for n in range(seen + 1, suite.planned + 1):
            suite.cases.append(Case(suite.name, "#%d" % n, status, why))
    if not suite.cases:
        # A program that printed no KTAP of its own: the program is the case.
        status = suite.status if reported_result else MISS
        reason = suite.reason if reported_result else "started; the log ends before its result"
        suite.cases.append(Case(suite.name, "", status, reason, attempts=(
            _shown(FAIL, suite.first_result), _shown(status, reason))
            if suite.first_result else ()))
    elif reported_result and suite.status == FAIL and not any(
            c.status in (FAIL, ERROR, MISS) or c.failed_kept_run for c in suite.cases):
        # All cases passed yet the program failed (crash after the last
        # case, bad exit status): report that rather than hide it. A
        # flaky case that failed on the kept run (and passed alone) is
        # the failure its exit status reports.
        suite.cases.append(Case(suite.name, "(program)", ERROR, suite.reason))


def parse(text):
    run = Run()
    suite = None
    pending_obs, pending_diag = {}, []
    names_seen = set()
    nameless = None         # (status, reason) of a result line without a name

    for raw in text.replace("\r", "").split("\n"):
        if not raw.strip():
            continue
        if KERNEL_LOG_RE.match(raw):
            run.foreign_lines += 1
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        if nameless and suite is not None and (indent == 0 or SUBTEST_RE.match(line)):
            # No named result followed it: it is a case of its own.
            suite.cases.append(Case(suite.name, "", nameless[0], nameless[1]))
            nameless = None

        if indent == 0:
            m = RESULT_RE.match(line)
            if m:
                status, reason = _status(m.group(1) == "ok", m.group(4))
                name = m.group(3).strip()
                if suite is None or suite.name != name:
                    # A result without its subtest block: a program that
                    # printed nothing (or whose header was lost).
                    if suite is not None:
                        _close_suite(suite, False)
                    suite = Suite(name)
                    run.suites.append(suite)
                suite.status, suite.reason = status, reason
                _close_suite(suite, True)
                suite = None
                pending_obs, pending_diag = {}, []
                continue
            if line.startswith(COMPLETE_MARKER):
                run.complete = True
                continue
            m = PLAN_RE.match(line)
            if m:
                run.planned = int(m.group(1))
                continue
            m = META_RE.match(line)
            if m:
                run.meta[m.group(1)] = m.group(2).strip()
                continue
            if VERSION_RE.match(line) or line.startswith("#"):
                continue
            run.foreign_lines += 1
            continue

        if indent > 4 and suite is not None:
            # Deeper nesting inside a program: kept as diagnostics only.
            pending_diag.append(line)
            continue
        if VERSION_RE.match(line):
            # The subtest's, before its "# Subtest:" line (KUnit's order)
            # or after it (older logs, a program's own): nothing to keep.
            continue
        m = SUBTEST_RE.match(line)
        if m:
            if suite is not None:
                _close_suite(suite, False)
                run.problems.append("subtest %s has no result line" % suite.name)
            suite = Suite(m.group(1))
            run.suites.append(suite)
            pending_obs, pending_diag = {}, []
            continue
        if suite is None:
            suite = Suite("(unnamed)")
            run.suites.append(suite)
            run.problems.append("indented output outside a subtest")
        m = FIRST_ATTEMPT_RE.match(line)
        if m:
            got = _held_result(m.group(1), suite, "first")
            if got:
                suite.first[got[0]] = got[1]
            continue
        m = FIRST_RESULT_RE.match(line)
        if m:
            suite.first_result = m.group(1).strip()
            continue
        m = RETRY_RE.match(line)
        if m:
            # Only the result line naming the case counts: a run that
            # never reported it is no attempt of it.
            got = _held_result(m.group(1), suite, "retry")
            if got:
                suite.retries.setdefault(got[0], []).append(got[1])
            continue
        if RETRY_RESULT_RE.match(line):
            continue
        m = PLAN_RE.match(line)
        if m:
            suite.planned = int(m.group(1))
            continue
        m = OBS_RE.match(line)
        if m:
            pending_obs[m.group(1)] = Obs(m.group(2), m.group(3) or "all",
                                          (m.group(4) or "").strip())
            continue
        m = RESULT_RE.match(line)
        if m and not m.group(3).strip():
            # A result without a name: kselftest's ksft_test_result_skip()
            # (or _fail()) called inside a harness test prints one, with
            # its own number, before the harness's result of that test.
            # It belongs to the next named result.
            nameless = _status(m.group(1) == "ok", m.group(4))
            continue
        if m:
            status, reason = _status(m.group(1) == "ok", m.group(4))
            if nameless and status == PASS and nameless[0] != PASS:
                status, reason = nameless
            nameless = None
            case = Case(suite.name, m.group(3).strip(), status, reason,
                        pending_obs, pending_diag)
            if suite.first_result:
                # Not reported on the first attempt: it never got there.
                case.attempts = (suite.first.get(case.name, "%s (not reached: %s)" % (
                    ERROR, suite.first_result)), _shown(status, reason),
                    *suite.retries.get(case.name, ()))
                if case.flaky:
                    case.status, case.reason = PASS, ""
            if case.key in names_seen:
                run.problems.append("duplicate case %s" % case.key)
                case.name += "#%s" % m.group(2)
            names_seen.add(case.key)
            suite.cases.append(case)
            pending_obs, pending_diag = {}, []
            continue
        if line.startswith("#"):
            pending_diag.append(line[1:].strip())
            continue
        run.foreign_lines += 1

    if suite is not None:
        _close_suite(suite, False)
    if run.planned is not None and len(run.suites) < run.planned:
        run.problems.append("%d of %d programs never reported" % (
            run.planned - len(run.suites), run.planned))
    if not run.complete:
        run.problems.append("no completion marker: the run is incomplete")
    return run


# ---- the console log: a separate verdict on the kernel's own health ----

CONSOLE_PATTERNS = (
    ("panic", re.compile(r"Kernel panic")),
    # The kernel's own GP fault ("general protection fault, probably for
    # non-canonical address ...: 0000 [#1]"), not a user program's, which
    # the kernel reports as "traps: prog[pid] general protection fault
    # ip:... in lib" (a selftest that crashes is its own result).
    ("oops", re.compile(r"\bOops\b|general protection fault(?:, probably|: [0-9a-f]+ \[#)")),
    ("bug", re.compile(r"\bBUG:")),
    ("warning", re.compile(r"\bWARNING:")),
    ("kasan", re.compile(r"KASAN")),
    ("lockdep", re.compile(r"possible (?:circular|recursive) locking|"
                           r"inconsistent lock state")),
    ("hung", re.compile(r"blocked for more than|soft lockup|hard LOCKUP")),
)


def scan_console(text):
    """[(kind, line)] for each line that shows the kernel in trouble."""
    found = []
    for line in text.replace("\r", "").split("\n"):
        for kind, pattern in CONSOLE_PATTERNS:
            if pattern.search(line):
                found.append((kind, line.strip()))
                break
    return found
