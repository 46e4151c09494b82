"""Honest counts: a guest that did not boot, or stopped early, or a case
that did not run, is never a pass: not in the closing line, not in
matrix.json, not in junit.xml, and all three agree."""
import json
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from rfmlib import pipeline, report

from tests.host import util


def written(runs, kernels=("series",), **kwargs):
    """Write the matrix of `runs` like a run does; return (closing line,
    matrix.json, junit root, matrix.txt)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        matrix = util.matrix(runs, kernels=kernels, **kwargs)
        text = report.write_all(matrix, out)
        return (text.splitlines()[-1], json.loads((out / "matrix.json").read_text()),
                ET.parse(out / "junit.xml").getroot(), (out / "matrix.txt").read_text())


def junit_passes(root):
    return [tc for tc in root.iter("testcase")
            if not any(tc.find(k) is not None for k in ("failure", "error", "skipped"))]


def dead_guest(target, boot, console="", detail=""):
    """What a guest that never reported leaves: an empty results.ktap and
    (maybe) a console log."""
    d = Path(tempfile.mkdtemp(prefix="rfm-dead-"))
    (d / "results.ktap").write_text("")
    (d / "console.log").write_text(console)
    return pipeline.load_guest_run(d, target, boot, 10.0, detail, ("smoke",))


BOOT_LOG = ("[    0.000000] Linux version 6.1.192 (rfm@rfm)\n"
            "[    0.310000] Freeing unused kernel image memory: 1234K\n")


class NeverBooted(unittest.TestCase):
    def check_nothing_passed(self, runs):
        line, doc, root, text = written({"series": runs})
        self.assertTrue(line.startswith("0 passed, "), line)
        self.assertEqual(doc["summary"]["totals"]["passed"], 0)
        self.assertEqual(junit_passes(root), [])
        self.assertEqual(doc["summary"]["exit_status"], 2)
        return line, doc, root, text

    def test_qemu_error_counts_nothing_as_passed(self):
        # BZIMAGE=/etc/passwd before the knobs were checked: QEMU refused
        # the file on every target, the console log stayed empty.
        runs = {t: dead_guest(t, "qemu-error", detail="qemu: linux kernel too old "
                              "to load a ram disk") for t in util.TARGET_NAMES}
        line, doc, _, text = self.check_nothing_passed(runs)
        # The program that never ran is a row, MISS everywhere, not absent.
        rows = {r["case"]: r for r in doc["kernels"]["series"]["cases"]}
        self.assertEqual(util.statuses(rows["smoke"]), dict.fromkeys(util.TARGET_NAMES, "MISS"))
        self.assertEqual(line, "0 passed, 7 failed, 3 skipped")
        console_row = next(l for l in text.splitlines() if l.startswith("(console)"))
        self.assertEqual(console_row.split(), ["(console)", "no-log", "no-log", "no-log"])

    def test_boot_timeout_counts_nothing_as_passed(self):
        runs = {t: dead_guest(t, "boot-timeout", console=BOOT_LOG,
                              detail="no results after 60s") for t in util.TARGET_NAMES}
        _, doc, root, text = self.check_nothing_passed(runs)
        self.assertEqual(doc["kernels"]["series"]["guests"]["i386"]["console_status"],
                         "clean-so-far")
        console = [tc for tc in root.iter("testcase") if tc.get("name") == "(console)"]
        self.assertEqual(len(console), 3)
        for tc in console:
            self.assertIsNotNone(tc.find("skipped"), ET.tostring(tc))


class StoppedEarly(unittest.TestCase):
    def test_a_truncated_log_counts_only_what_ran(self):
        runs = util.with_runs(util.complete_runs(), {"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")})
        line, doc, root, _ = written({"series": runs})
        passes = {(tc.get("classname"), tc.get("name")) for tc in junit_passes(root)}
        # The guest that stopped early: its first case ran and passed; the
        # rest, its guest run and its console are not passes.
        self.assertIn(("series.x86_64-ia32", "smoke.set_get_roundtrip"), passes)
        for name in ("smoke.set_bad_length", "smoke.death_one_lock", "(guest run)",
                     "(console)"):
            self.assertNotIn(("series.x86_64-ia32", name), passes)
        # 2 complete guests x (guest run, console, 3 cases) + 1 case + the
        # one case that agrees on all three targets.
        self.assertEqual(len(passes), 2 * 5 + 1 + 1)
        self.assertEqual(doc["summary"]["totals"]["passed"], 12)
        self.assertTrue(line.startswith("12 passed, "), line)
        self.assertEqual(doc["kernels"]["series"]["guests"]["x86_64-ia32"]["console_status"],
                         "no-log")

    def test_the_three_outputs_agree(self):
        for boot in ("incomplete", "timeout", "boot-timeout"):
            with self.subTest(boot=boot):
                runs = util.with_runs(util.complete_runs(), {"i386": util.guest_run(
                    "i386", "panic", boot=boot)})
                line, doc, root, _ = written({"series": runs})
                t = doc["summary"]["totals"]
                self.assertEqual(line, "%(passed)d passed, %(failed)d failed, "
                                       "%(skipped)d skipped" % t)
                self.assertEqual(len(junit_passes(root)), t["passed"])
                self.assertEqual(int(root.get("skipped")), t["skipped"])


class KernelComparison(unittest.TestCase):
    def test_a_guest_that_did_not_run_is_not_a_match(self):
        dead = {t: dead_guest(t, "qemu-error") for t in util.TARGET_NAMES}
        runs = {"series": dead, "stock": util.complete_runs()}
        line, doc, root, text = written(runs, kernels=("series", "stock"))
        cmp = doc["kernel_comparison"]
        self.assertTrue(cmp)
        self.assertTrue(all(c["ok"] is None for c in cmp), cmp)
        self.assertIn("not compared", text)
        self.assertNotIn("every case matches on every target\n", text)
        vs = [tc for tc in root.iter("testcase") if tc.get("classname") == "series-vs-stock"]
        self.assertTrue(vs)
        self.assertTrue(all(tc.find("skipped") is not None for tc in vs))
        # Missing results, nothing failed: exit 2, not 1.
        self.assertEqual(doc["summary"]["exit_status"], 2)


if __name__ == "__main__":
    unittest.main()
