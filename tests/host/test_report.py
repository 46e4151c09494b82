"""report.py: matrix.txt, junit.xml and matrix.json from built matrices."""
import json
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from rfmlib import report

from tests.host import util

CHECK_KERNELS = ("series", "stock", "baseline")
VERDICTS = {0: "PASS: all cases pass and agree",
            1: "FAIL: failures or disagreements (exit 1)",
            2: "INCOMPLETE: results are missing (exit 2)"}


def check_matrix(**replace_by_kernel):
    """A matrix-check matrix (series, stock, baseline + control)."""
    return util.matrix(util.check_matrix(**replace_by_kernel), kernels=CHECK_KERNELS,
                       control=util.CONTROL)


def series_matrix(runs=None, **replace):
    return util.matrix({"series": util.with_runs(runs or util.complete_runs(), replace)})


def extra_run():
    """x86_64 with the EXTRA 64-bit program robust_stress."""
    return util.guest_run("x86_64", "extra", programs=("robust_stress", "smoke"))


def kernel_section(text, kernel):
    """The table lines of one kernel in matrix.txt (header first)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("== kernel %s " % kernel))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start + 1:end]


def table_row(text, kernel, first_column):
    """One row of a kernel's table, split on whitespace."""
    for line in kernel_section(text, kernel):
        if line.split()[0] == first_column:
            return line.split()
    raise AssertionError("no row %s in kernel %s" % (first_column, kernel))


class MatrixText(unittest.TestCase):
    def test_every_case_and_target_of_every_kernel(self):
        text = report.render_text(check_matrix())
        for kernel in CHECK_KERNELS:
            with self.subTest(kernel=kernel):
                header = kernel_section(text, kernel)[0].split()
                self.assertEqual(header[:4], ["case"] + list(util.TARGET_NAMES))
                shown = ["FAIL" if kernel == "baseline" else "PASS"] * 3
                for case in util.SMOKE_CASES:
                    self.assertEqual(table_row(text, kernel, case)[1:4], shown)

    def test_rows_show_statuses_and_verdicts(self):
        text = report.render_text(check_matrix())
        self.assertEqual(table_row(text, "series", "smoke.set_get_roundtrip"),
                         ["smoke.set_get_roundtrip", "PASS", "PASS", "PASS",
                          "agree;", "abi:", "head_len=24|12|12"])
        self.assertEqual(table_row(text, "baseline", "smoke.death_one_lock"),
                         ["smoke.death_one_lock", "FAIL", "FAIL", "FAIL",
                          "(negative", "control)"])
        self.assertEqual(table_row(text, "stock", "(guest"),
                         ["(guest", "run)"] + ["complete"] * 3)
        self.assertEqual(table_row(text, "stock", "(console)"),
                         ["(console)"] + ["clean"] * 3)
        self.assertEqual(kernel_section(text, "baseline")[0].split()[-1], "control")

    def test_sections_and_verdict_line_of_a_passing_check(self):
        text = report.render_text(check_matrix())
        lines = text.splitlines()
        self.assertEqual(lines[0], "robust-futex-matrix: linux-source-6.1 6.1.192-3, "
                                   "accelerator tcg")
        self.assertIn("== series vs stock: every case matches on every target", lines)
        self.assertIn("== negative control (baseline kernel must fail these)", lines)
        self.assertIn("  ok   *.death_* FAIL: holds", lines)
        self.assertIn("cells: 18 PASS, 0 FAIL, 0 SKIP, 0 ERROR, 0 MISS", lines)
        self.assertIn("negative control cells (failures expected): 9 FAIL", lines)
        self.assertEqual(lines[-1], VERDICTS[0])
        self.assertFalse(any(l.startswith(("FAILED:", "INCOMPLETE:")) for l in lines))

    def test_failure_is_listed_and_gives_the_fail_verdict(self):
        m = series_matrix(i386=util.guest_run("i386", "fail_i386"))
        lines = report.render_text(m).splitlines()
        self.assertIn("FAILED: series/i386: smoke.death_one_lock FAIL", lines)
        self.assertEqual(lines[-1], VERDICTS[1])

    def test_incomplete_verdict(self):
        m = series_matrix(**{"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")})
        text = report.render_text(m)
        self.assertEqual(text.splitlines()[-1], VERDICTS[2])
        self.assertIn("INCOMPLETE: series: smoke.set_bad_length: incomplete: MISS on "
                      "x86_64-ia32", text.splitlines())
        self.assertEqual(table_row(text, "series", "smoke.death_one_lock")[1:4],
                         ["PASS", "MISS", "PASS"])
        self.assertEqual(table_row(text, "series", "(guest")[2:],
                         ["complete", "incomplete", "complete"])

    def test_console_trouble_is_shown(self):
        m = series_matrix(i386=util.guest_run("i386", "panic", boot="incomplete"))
        text = report.render_text(m)
        self.assertEqual(table_row(text, "series", "(console)")[1:],
                         ["clean", "clean", "3", "problem(s)"])
        self.assertIn("  console i386: panic: [    0.940616] Kernel panic - not syncing: "
                      "Fatal exception", text.splitlines())

    def test_skip_cell(self):
        text = report.render_text(util.matrix({"series": util.variant_runs()}))
        self.assertEqual(table_row(text, "series", "robust_abi.pi_owner_died"),
                         ["robust_abi.pi_owner_died", "PASS", "PASS", "skip",
                          "not", "compared:", "SKIP", "on", "i386"])

    def test_not_built_cells(self):
        text = report.render_text(series_matrix(x86_64=extra_run()))
        self.assertEqual(table_row(text, "series", "robust_stress"),
                         ["robust_stress", "PASS", "-", "-", "only", "on", "x86_64"])

    def test_kernel_differences_and_deviations(self):
        runs = util.check_matrix(series={"i386": util.guest_run("i386", "fail_i386")})
        expected = util.matrix(runs, kernels=CHECK_KERNELS, control=util.CONTROL,
                               deviations=[("smoke.death_*", "0003 on i386")])
        unexpected = util.matrix(runs, kernels=CHECK_KERNELS, control=util.CONTROL)
        self.assertIn("  smoke.death_one_lock on i386: status FAIL vs PASS "
                      "(deviation: 0003 on i386)", report.render_text(expected).splitlines())
        self.assertIn("  smoke.death_one_lock on i386: status FAIL vs PASS UNEXPECTED",
                      report.render_text(unexpected).splitlines())

    def test_violated_control(self):
        m = check_matrix(baseline={"i386": util.guest_run("i386", "complete/i386")})
        self.assertIn("  FAIL *.death_* FAIL: smoke.death_one_lock on i386 is PASS",
                      report.render_text(m).splitlines())

    def test_unavailable_kernel(self):
        runs = util.check_matrix()
        del runs["baseline"]
        m = util.matrix(runs, kernels=CHECK_KERNELS, control=util.CONTROL,
                        unavailable={"baseline": "patches/series is empty"})
        lines = report.render_text(m).splitlines()
        self.assertIn("== kernel baseline: not available: patches/series is empty", lines)
        self.assertIn("== negative control (baseline): NOT AVAILABLE: "
                      "patches/series is empty", lines)


def junit(matrix):
    return ET.fromstring(report.render_junit(matrix))


def testcase(root, suite, name):
    (tc,) = [tc for s in root.iter("testsuite") if s.get("name") == suite
             for tc in s.iter("testcase") if tc.get("name") == name]
    return tc


def outcome(tc):
    """'pass', or the tag of the testcase's failure/error/skipped child."""
    children = [c.tag for c in tc]
    return children[0] if children else "pass"


def totals(root):
    return {k: int(root.get(k)) for k in ("tests", "failures", "errors", "skipped")}


def counted(root):
    """The totals recounted from the testcase elements."""
    cases = list(root.iter("testcase"))
    return {"tests": len(cases),
            "failures": sum(outcome(c) == "failure" for c in cases),
            "errors": sum(outcome(c) == "error" for c in cases),
            "skipped": sum(outcome(c) == "skipped" for c in cases)}


class JUnit(unittest.TestCase):
    def test_passing_check_suites_and_counts(self):
        root = junit(check_matrix())
        self.assertEqual(root.tag, "testsuites")
        names = [s.get("name") for s in root.iter("testsuite")]
        per_target = ["%s.%s" % (k, t) for k in CHECK_KERNELS for t in util.TARGET_NAMES]
        self.assertEqual(sorted(names), sorted(per_target + [
            "series.agreement", "stock.agreement", "kernels"]))
        # 3 kernels x 3 targets x (guest run, console, 3 cases), 2 x 3
        # agreement rows, 2 control rules.
        self.assertEqual(totals(root), {"tests": 53, "failures": 0, "errors": 0,
                                        "skipped": 0})
        self.assertEqual(counted(root), totals(root))

    def test_baseline_expected_fails_are_not_failures(self):
        root = junit(check_matrix())
        for t in util.TARGET_NAMES:
            with self.subTest(target=t):
                self.assertEqual(outcome(testcase(root, "baseline." + t,
                                                  "smoke.death_one_lock")), "pass")

    def test_failures_where_expected(self):
        root = junit(series_matrix(i386=util.guest_run("i386", "fail_i386")))
        failed = testcase(root, "series.i386", "smoke.death_one_lock")
        self.assertEqual(outcome(failed), "failure")
        self.assertEqual(failed[0].text, "FAIL /work/main/tests/common/smoke.c:83: "
                         "lock->futex == FUTEX_OWNER_DIED: futex word 0 after the owner "
                         "died, want 0x40000000")
        agreement = testcase(root, "series.agreement", "smoke.death_one_lock")
        self.assertEqual(agreement[0].get("message"), "DIFFER: status PASS|PASS|FAIL")
        self.assertEqual(outcome(testcase(root, "series.x86_64", "smoke.death_one_lock")),
                         "pass")
        self.assertEqual(totals(root)["failures"], 2)
        self.assertEqual(counted(root), totals(root))

    def test_errors_for_missing_results_and_a_dead_guest(self):
        root = junit(series_matrix(**{"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete",
            detail="the guest stopped before the completion marker")}))
        guest = testcase(root, "series.x86_64-ia32", "(guest run)")
        self.assertEqual(outcome(guest), "error")
        self.assertEqual(guest[0].get("message"),
                         "the guest stopped before the completion marker")
        missing = testcase(root, "series.x86_64-ia32", "smoke.set_bad_length")
        self.assertEqual(outcome(missing), "error")
        self.assertIn(missing[0].get("message"),
                      ("guest run incomplete", "log ends before this result"))
        self.assertGreater(totals(root)["errors"], 0)
        self.assertEqual(counted(root), totals(root))

    def test_console_trouble_is_a_failure(self):
        root = junit(series_matrix(i386=util.guest_run("i386", "panic", boot="incomplete")))
        console = testcase(root, "series.i386", "(console)")
        self.assertEqual(outcome(console), "failure")
        self.assertEqual(console[0].text.splitlines()[-1],
                         "[    0.940616] Kernel panic - not syncing: Fatal exception")
        self.assertEqual(outcome(testcase(root, "series.x86_64", "(console)")), "pass")

    def test_skipped(self):
        root = junit(util.matrix({"series": util.variant_runs()}))
        skipped = testcase(root, "series.i386", "robust_abi.pi_owner_died")
        self.assertEqual((outcome(skipped), skipped[0].get("message")),
                         ("skipped", "needs CONFIG_FUTEX_PI, not in this kernel"))
        self.assertEqual(outcome(testcase(root, "series.agreement",
                                          "robust_abi.pi_owner_died")), "skipped")
        self.assertEqual(totals(root)["skipped"], 2)
        self.assertEqual(counted(root), totals(root))

    def test_not_built_is_no_testcase(self):
        root = junit(series_matrix(x86_64=extra_run()))
        self.assertEqual(outcome(testcase(root, "series.x86_64", "robust_stress")), "pass")
        for t in ("x86_64-ia32", "i386"):
            names = [tc.get("name") for s in root.iter("testsuite")
                     if s.get("name") == "series." + t for tc in s]
            self.assertEqual(names, ["(guest run)", "(console)"] + list(util.SMOKE_CASES))

    def test_violated_control_and_kernel_difference(self):
        m = check_matrix(baseline={"i386": util.guest_run("i386", "complete/i386")},
                         series={"i386": util.guest_run("i386", "fail_i386")})
        root = junit(m)
        rule = testcase(root, "kernels", "*.death_* FAIL")
        self.assertEqual((rule.get("classname"), outcome(rule)),
                         ("negative-control", "failure"))
        diff = testcase(root, "kernels", "smoke.death_one_lock@i386")
        self.assertEqual((diff.get("classname"), outcome(diff), diff[0].get("message")),
                         ("series-vs-stock", "failure", "status FAIL vs PASS"))

    def test_unavailable_kernel_is_skipped(self):
        runs = util.check_matrix()
        del runs["baseline"]
        root = junit(util.matrix(runs, kernels=CHECK_KERNELS, control=util.CONTROL,
                                 unavailable={"baseline": "patches/series is empty"}))
        self.assertEqual(outcome(testcase(root, "baseline", "(kernel available)")), "skipped")
        self.assertEqual(outcome(testcase(root, "kernels", "(available)")), "skipped")
        self.assertEqual(counted(root), totals(root))

    def test_bug_control_characters_in_output_keep_the_xml_valid(self):
        """BUG: a diagnostic with a control character (a test printing a
        raw byte, an escape sequence) is copied into junit.xml as is, and
        XML 1.0 forbids it: the file no longer parses."""
        run = util.guest_run_from_text("i386", util.text("fail_i386").replace(
            "futex word 0 after", "futex word \x1b[31m0\x1b[0m\x01 after"))
        try:
            root = ET.fromstring(report.render_junit(series_matrix(i386=run)))
        except ET.ParseError as e:
            self.fail("junit.xml does not parse: %s" % e)
        self.assertEqual(outcome(testcase(root, "series.i386", "smoke.death_one_lock")),
                         "failure")


class WriteAll(unittest.TestCase):
    def test_files_round_trip(self):
        m = check_matrix(series={"i386": util.guest_run("i386", "panic", boot="incomplete")})
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "out"
            printed = report.write_all(m, out)
            self.assertEqual(json.loads((out / "matrix.json").read_text()), m)
            self.assertEqual((out / "matrix.txt").read_text(), report.render_text(m))
            self.assertTrue(printed.startswith(report.render_text(m)))
            root = ET.parse(out / "junit.xml").getroot()
        self.assertEqual(counted(root), totals(root))
        self.assertEqual(m["summary"]["exit_status"], 1)


if __name__ == "__main__":
    unittest.main()
