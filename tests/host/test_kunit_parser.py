"""The kernel's own KTAP parser reads the guests' results as ktap.parse does.

For every captured results.ktap under fixtures/, the Linux tree's parser
runs as a user would run it, `python3 TREE/tools/testing/kunit/kunit.py
parse FILE`, and its summary line must show no errors and the counts
ktap.parse gives for the same file. The summary line of 6.1's parser
(kunit_parser.TestCounts) is

    Testing complete. Ran N tests: passed: P, failed: F, crashed: C, skipped: S, errors: E

with a count that is 0 left out. Its statuses against ours: PASS is
passed, FAIL failed, SKIP skipped; ERROR (the program ended before a case
it planned) and MISS (the log ends before it) are both crashed, which is
what kunit's parser counts for a planned case it never saw.

TREE is the project's pristine 6.1 tree (tree.pristine_tree(), called in
a child process of its own, so that neither its lock nor what it caches
stays in the tests' process); if that fails, these tests fail with its
message, they never skip. The environment variable RFM_KUNIT_TREE=DIR
takes the parser from DIR instead: any directory holding
tools/testing/kunit/kunit.py, such as linux-source-6.1's tarball
unpacked (`tar -xf linux-source-6.1.tar.xz
linux-source-6.1/tools/testing/kunit` is enough).

EXEMPT names the fixtures kunit.py cannot read cleanly, each with the
reason and the exact counts 6.1's parser gives, asserted as the other
fixtures' are: an exemption is a different expectation, never none.
COUNTED_OTHERWISE names those it reads with no errors but counts
otherwise than ours (a program init ran again: kunit reads its second
attempt alone), each with the reason and its exact counts.
interleaved/ (kernel messages among the results) is not among them: 6.1's
parser takes those lines for diagnostics, and reads it cleanly.
"""
import os
import re
import subprocess
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import rfmlib
from rfmlib import ktap

from tests.host import util

KUNIT = Path("tools") / "testing" / "kunit" / "kunit.py"
SUMMARY_RE = re.compile(r"Testing complete\. Ran (\d+) tests:(.*)$", re.M)
FIELD_RE = re.compile(r"(passed|failed|crashed|skipped|errors): (\d+)")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
# Our statuses as kunit's parser counts them.
KUNIT_STATUS = {ktap.PASS: "passed", ktap.FAIL: "failed", ktap.SKIP: "skipped",
                ktap.ERROR: "crashed", ktap.MISS: "crashed"}

# fixture: (why kunit.py cannot read it cleanly, the counts 6.1's parser gives)
EXEMPT = {
    # Broken on purpose: a run that did not end as it should.
    "cut_off": (
        "the host killed the guest while a_hang ran: the log stops after "
        "a_hang's # Subtest: line. kunit counts the 6 programs that never "
        "started as crashed (ours: a problem, not cases) and a_hang not at "
        "all ('missing subtest result line!', '0 tests run!'; ours: MISS)",
        {"crashed": 6, "errors": 8}),
    "panic": (
        "the guest panicked in case 3: the log stops after case 2. kunit "
        "counts case 3 as crashed, as ours is MISS, with 2 errors for the "
        "missing case and the missing result line",
        {"passed": 2, "crashed": 1, "errors": 2}),
    "timeout": (
        "init killed smoke after 1 of 3 planned cases: kunit counts the "
        "other 2 as crashed, as ours are ERROR, with an error for each",
        {"passed": 1, "crashed": 2, "errors": 2}),
    "truncated": (
        "the log is cut in the middle of case 2's obs line: kunit counts "
        "cases 2 and 3 as crashed, as ours are MISS, with 3 errors (the two "
        "cases and the result line)",
        {"passed": 1, "crashed": 2, "errors": 3}),
    # Not broken: KTAP that 6.1's parser cannot count.
    "extra": (
        "robust_stress passes and prints no KTAP of its own: a subtest "
        "with no cases whose result is ok is '0 tests run!' to kunit, an "
        "error and no count (ours: one PASS named after the program); smoke "
        "counts as ours",
        {"passed": 3, "errors": 1}),
    "many_programs": (
        "300 programs that pass and print no KTAP of their own: '0 tests "
        "run!' for each (ours: 300 PASS), and the run itself, with no case "
        "counted, is one crashed",
        {"crashed": 1, "errors": 300}),
    # The order init printed before KUnit's: what this test guards against.
    "old_order": (
        "user_programs/x86_64 as captured before KUnit's order: '# Subtest:' "
        "before the program's own version line, the plan after the rfm- "
        "lines, which kunit reads as nested tests without names",
        {"passed": 3, "failed": 1, "errors": 4}),
}

# fixture: (why kunit.py, reading it with no errors, counts otherwise
# than ours, its counts): another suite's program init ran again, of
# which kunit reads the second attempt alone, as it should.
COUNTED_OTHERWISE = {
    "rerun/x86_64": (
        "mainline's robust_list on stock 6.1, which init ran twice and ran "
        "its failing cases alone: kunit reads the second attempt only, so "
        "test_robust_list_multiple_elements, which passed alone (ours: a "
        "flaky PASS), is failed; and the four vdso_unlock tests whose "
        "nameless '# SKIP' result kselftest printed inside them are passed "
        "(ours: SKIP, as the nameless result says)",
        {"passed": 10, "failed": 7}),
}

PRISTINE_TREE = """
import sys
from rfmlib import tree
try:
    where = tree.pristine_tree()
except Exception as e:      # Fatal, or whatever broke on the way
    sys.exit("%s: %s" % (type(e).__name__, e))
print("TREE=%s" % where)
"""
_TREE = []


def pristine_tree():
    """tree.pristine_tree() in a child process: (its path, or its error)."""
    r = subprocess.run([sys.executable, "-c", PRISTINE_TREE], capture_output=True,
                       text=True, timeout=3600,
                       env=dict(os.environ, PYTHONPATH=str(Path(rfmlib.__file__).parents[1])))
    found = [l[5:] for l in r.stdout.splitlines() if l.startswith("TREE=")]
    if r.returncode != 0 or not found:
        return None, (r.stderr.strip() or r.stdout.strip())[-3000:]
    return Path(found[-1]), ""


def kunit_py():
    """TREE/tools/testing/kunit/kunit.py, from RFM_KUNIT_TREE or the
    pristine tree; an AssertionError saying why when there is none."""
    if not _TREE:
        override = os.environ.get("RFM_KUNIT_TREE")
        if override:
            _TREE.append(("RFM_KUNIT_TREE=%s" % override, Path(override), ""))
        else:
            _TREE.append(("tree.pristine_tree()",) + pristine_tree())
    what, where, error = _TREE[0]
    if where is None:
        raise AssertionError("kunit.py comes from %s, which failed: %s" % (what, error))
    script = where / KUNIT
    if not script.is_file():
        raise AssertionError("%s: %s is not there" % (what, script))
    return script


def kunit_parse(path):
    """kunit.py parse FILE: ({count: n} of its summary line, its output)."""
    r = subprocess.run([sys.executable, str(kunit_py()), "parse", str(path)],
                       capture_output=True, text=True, timeout=120)
    out = ANSI_RE.sub("", r.stdout + r.stderr)
    m = SUMMARY_RE.search(out)
    if not m:
        raise AssertionError("kunit.py parse %s printed no summary (exit %d):\n%s" % (
            path, r.returncode, out[-3000:]))
    counts = {k: int(v) for k, v in FIELD_RE.findall(m.group(2))}
    total = sum(n for k, n in counts.items() if k != "errors")
    if total != int(m.group(1)):
        raise AssertionError("%s: 'Ran %s tests' but the counts add up to %d: %s" % (
            path, m.group(1), total, m.group(0)))
    return counts, out


def ours(path):
    """ktap.parse's cases counted as kunit counts them, zeros left out."""
    counts = {}
    for case in ktap.parse(path.read_text()).cases().values():
        key = KUNIT_STATUS[case.status]
        counts[key] = counts.get(key, 0) + 1
    return counts


def fixtures():
    """{fixture name: its results.ktap}, every one under fixtures/."""
    return {str(p.parent.relative_to(util.FIXTURES)): p
            for p in sorted(util.FIXTURES.rglob("results.ktap"))}


_PARSED = {}


def parsed_all():
    """kunit.py parse of every fixture, run once, side by side."""
    if not _PARSED:
        kunit_py()
        found = fixtures()
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = dict(zip(found, pool.map(_try_parse, found.values())))
        _PARSED.update(results)
    return _PARSED


def _try_parse(path):
    try:
        return kunit_parse(path)
    except AssertionError as e:
        return e


def result(name):
    got = parsed_all()[name]
    if isinstance(got, AssertionError):
        raise got
    return got


class KernelParser(unittest.TestCase):
    def test_every_fixture_reads_with_no_errors_and_our_counts(self):
        checked = 0
        for name, path in fixtures().items():
            if name in EXEMPT or name in COUNTED_OTHERWISE:
                continue
            with self.subTest(fixture=name):
                counts, out = result(name)
                self.assertNotIn("errors", counts, out[-3000:])
                self.assertEqual(counts, ours(path), out[-3000:])
                checked += 1
        # The fixtures with failures and skips are among those read cleanly.
        self.assertGreaterEqual(checked, 15)

    def each_reads_as_stated(self, table, label, also):
        """Every fixture of `table` is there, kunit gives it exactly the
        counts stated, and `also(counts, path)` holds."""
        found = fixtures()
        for name, (why, counts) in table.items():
            with self.subTest(fixture=name, why=why):
                self.assertIn(name, found, "%s names a fixture that is not there" % label)
                self.assertEqual(result(name)[0], counts, result(name)[1][-3000:])
                also(counts, found[name])

    def test_each_exempt_fixture_reads_as_its_reason_says(self):
        def has_errors(counts, _path):
            self.assertGreater(counts.get("errors", 0), 0,
                               "an exempt fixture that kunit reads cleanly is not exempt")
        self.each_reads_as_stated(EXEMPT, "EXEMPT", has_errors)

    def test_each_fixture_counted_otherwise_reads_as_its_reason_says(self):
        def clean_but_not_ours(counts, path):
            self.assertNotIn("errors", counts)
            self.assertNotEqual(counts, ours(path), "counted as ours: not otherwise")
        self.each_reads_as_stated(COUNTED_OTHERWISE, "COUNTED_OTHERWISE", clean_but_not_ours)

    def test_broken_runs_count_their_lost_cases_as_crashed(self):
        # Where the log or the program stopped inside a program, kunit's
        # crashed are exactly our ERROR and MISS cases.
        for name in ("panic", "timeout", "truncated"):
            with self.subTest(fixture=name):
                counts = dict(result(name)[0])
                del counts["errors"]
                self.assertEqual(counts, ours(fixtures()[name]))

    def test_the_old_order_is_what_kunit_cannot_read(self):
        # The bug this guards against: "# Subtest:" before the version line.
        old = util.path("old_order")
        self.assertIn("    # Subtest: robust_owner\n    KTAP version 1\n", old.read_text())
        counts, _ = result("old_order")
        self.assertGreater(counts.get("errors", 0), 0)
        new, _ = result("user_programs/x86_64")
        self.assertEqual(new, {"passed": 3, "failed": 1})
        self.assertEqual(new, ours(old))

    def test_the_summary_reader(self):
        out = ("[12:00:00] Testing complete. Ran 6 tests: passed: 4, failed: 1, "
               "crashed: 1, skipped: 0, errors: 2\n")
        m = SUMMARY_RE.search(out)
        self.assertEqual(dict(FIELD_RE.findall(m.group(2))),
                         {"passed": "4", "failed": "1", "crashed": "1", "skipped": "0",
                          "errors": "2"})
        self.assertEqual(FIELD_RE.findall(SUMMARY_RE.search(
            "Testing complete. Ran 0 tests: \n").group(2)), [])


if __name__ == "__main__":
    unittest.main()
