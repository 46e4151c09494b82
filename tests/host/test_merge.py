"""merge.py: shard outputs joined into one matrix, and what is refused.

Shards are output directories written as `rfm matrix-check` leaves them
(run.json and <kernel>/<target>/ from the fixtures); the merge is run
through the command line, `rfm merge`, and compared with `rfm report` on
one directory holding every target.
"""
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import cli, compare, matrix

from tests.host import util

CHECK_KERNELS = ("series", "stock", "baseline")
FIXTURE_SET = {"series": "complete", "stock": "complete", "baseline": "baseline"}
THREE = ",".join(util.TARGET_NAMES)


def write_run(out, targets, kernels=CHECK_KERNELS, seconds=1.5,
              date="2026-12-03T12:00:00+00:00", fixtures=None, edit=None):
    """An output directory as `rfm matrix-check` leaves it: run.json and
    out/<kernel>/<target>/{results.ktap,console.log}. fixtures: a fixture
    per (kernel, target) other than the usual; edit: run.json changes."""
    out = Path(out)
    guests = {}
    for k in kernels:
        for t in targets:
            src = util.FIXTURES / ((fixtures or {}).get((k, t))
                                   or "%s/%s" % (FIXTURE_SET[k], t))
            shutil.copytree(src, out / k / t)
            guests.setdefault(k, {})[t] = {"status": "complete", "seconds": seconds,
                                           "detail": "", "programs": ["smoke"]}
    meta = {"tree": "linux-source-6.1 6.1.192-3 (pinned)",
            "accel": "tcg", "kernels": {k: "6.1.192 + 2 patch(es)" for k in kernels},
            "date": date, "extra": "", "provenance": util.provenance(targets, kernels)}
    state = {"meta": meta, "kernels": list(kernels), "targets": list(targets),
             "unavailable": {}, "guests": guests}
    if edit:
        edit(state)
    (out / "run.json").write_text(json.dumps(state, indent=1))
    return out


def rfm(command, **env):
    """(exit status, stdout, stderr) of `rfm <command>` with env set, and
    the negative control as the fixtures can meet it (util.CONTROL)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    clean = {k: "" for k in ("KERNELS", "TARGETS", "RESULTS")}
    with tempfile.TemporaryDirectory() as d:
        control = Path(d) / "negative-control.txt"
        control.write_text("".join("%s %s\n" % rule for rule in util.CONTROL))
        with mock.patch.dict(os.environ, dict(clean, **env)), \
                mock.patch.object(matrix, "CONTROL_RULES", control), \
                mock.patch.object(compare, "load_deviations", lambda kernels: {}), \
                contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = cli.main([command])
    return status, stdout.getvalue(), stderr.getvalue()


def without_times(value, dates):
    """A rendered file's content with times taken out: guest seconds and
    durations dropped, the runs' dates replaced by DATE."""
    if isinstance(value, dict):
        return {k: without_times(v, dates) for k, v in value.items()
                if k not in ("seconds", "duration")}
    if isinstance(value, list):
        return [without_times(v, dates) for v in value]
    if isinstance(value, str):
        for d in dates:
            value = value.replace(d, "DATE")
    return value


class Shards(unittest.TestCase):
    DATES = ("2026-12-03T12:00:00+00:00", "2026-12-03T12:05:00+00:00")

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-merge-"))
        self.addCleanup(shutil.rmtree, self.dir)

    def shards(self, targets=util.TARGET_NAMES, **kwargs):
        """One single-target shard per target, each timed differently."""
        kwargs.setdefault("seconds", 9.0)
        kwargs.setdefault("date", self.DATES[1])
        return [write_run(self.dir / ("shard-" + t), [t], **kwargs) for t in targets]

    def merge(self, shards, out="merged", **env):
        env.setdefault("TARGETS", THREE)
        return rfm("merge", RESULTS=" ".join(str(s) for s in shards),
                   RFM_OUT=str(self.dir / out), **env)

    def rendered(self, out):
        """The merge's or the run's files, times aside."""
        d = self.dir / out
        return {"matrix.txt": without_times((d / "matrix.txt").read_text(), self.DATES),
                "junit.xml": (d / "junit.xml").read_text(),
                "matrix.json": without_times(json.loads((d / "matrix.json").read_text()),
                                             self.DATES),
                "kcidb.json": without_times(json.loads((d / "kcidb.json").read_text()),
                                            self.DATES)}


class SameAsOneRun(Shards):
    def assert_same_as_one_run(self, fixtures=None, want_status=0):
        write_run(self.dir / "single", util.TARGET_NAMES, fixtures=fixtures,
                  date=self.DATES[0])
        one, printed_one, _ = rfm("report", RFM_OUT=str(self.dir / "single"))
        shards = [write_run(self.dir / ("shard-" + t), [t], seconds=9.0, date=self.DATES[1],
                            fixtures={kt: f for kt, f in (fixtures or {}).items()
                                      if kt[1] == t})
                  for t in util.TARGET_NAMES]
        merged, printed_merged, err = self.merge(shards)
        self.assertEqual((one, merged), (want_status, want_status), err)
        single, joined = self.rendered("single"), self.rendered("merged")
        for name in single:
            with self.subTest(file=name):
                self.assertEqual(joined[name], single[name])
        self.assertEqual(printed_merged.splitlines()[-2:], printed_one.splitlines()[-2:])
        return joined

    def test_three_single_target_shards_give_the_matrix_of_one_run(self):
        joined = self.assert_same_as_one_run()
        text = joined["matrix.txt"]
        self.assertIn("== series vs stock: every case matches on every target", text)
        self.assertIn("  ok   *.death_* FAIL: holds", text)
        self.assertIn("cells: 18 PASS, 0 FAIL", text)
        self.assertEqual(text.splitlines()[-1], "PASS: all cases pass and agree")
        self.assertIn("smoke.set_get_roundtrip  PASS      PASS         PASS      agree; "
                      "abi: head_len=24|12|12", text.splitlines())

    def test_a_failure_in_one_shard_fails_the_merge_as_it_fails_one_run(self):
        joined = self.assert_same_as_one_run(
            fixtures={("series", "i386"): "fail_i386"}, want_status=1)
        self.assertIn("  smoke.death_one_lock on i386: status FAIL vs PASS UNEXPECTED",
                      joined["matrix.txt"].splitlines())

    def test_the_merge_is_an_output_directory_report_renders_again(self):
        self.assertEqual(self.merge(self.shards())[0], 0)
        before = self.rendered("merged")
        self.assertEqual(rfm("report", RFM_OUT=str(self.dir / "merged"))[0], 0)
        self.assertEqual(self.rendered("merged"), before)

    def test_merges_merge(self):
        a, b, c = self.shards()
        self.assertEqual(self.merge([a, b], out="ab")[0], 2)    # i386 not run yet
        self.assertEqual(self.merge([self.dir / "ab", c])[0], 0)

    def test_the_same_cell_twice_is_taken_once(self):
        a, b, c = self.shards()
        copy = self.dir / "copy-of-a"
        shutil.copytree(a, copy)
        self.assertEqual(self.merge([a, b, c, copy])[0], 0)
        self.assertIn("cells: 18 PASS, 0 FAIL", (self.dir / "merged/matrix.txt").read_text())


class Incomplete(Shards):
    def test_a_missing_shard_is_incomplete_never_a_pass(self):
        status, printed, _ = self.merge(self.shards()[:2])
        self.assertEqual(status, 2)
        summary = json.loads((self.dir / "merged/matrix.json").read_text())["summary"]
        self.assertIn("series/i386 not run", summary["incomplete"])
        self.assertIn("INCOMPLETE: results are missing (exit 2)", printed)
        self.assertNotIn("PASS: all cases", printed)

    def test_a_default_target_no_shard_ran_is_incomplete(self):
        # Unset, TARGETS is every command's default, the x86 group: its
        # x32 target is missing; the ARM targets are not expected.
        shards = self.shards()
        status, printed, _ = self.merge(shards, TARGETS="")
        self.assertEqual(status, 2)
        self.assertIn("INCOMPLETE: series/x86_64-x32 not run", printed.splitlines())
        self.assertNotIn("arm64", printed)
        status, printed, _ = self.merge(shards, out="all", TARGETS="all")
        self.assertIn("INCOMPLETE: series/arm64 not run", printed.splitlines())

    def test_a_kernel_missing_from_one_shard_is_incomplete(self):
        shards = self.shards(util.TARGET_NAMES[:2])
        shards.append(write_run(self.dir / "shard-i386", ["i386"], kernels=("series", "stock")))
        status, printed, _ = self.merge(shards)
        self.assertEqual(status, 2)
        self.assertIn("INCOMPLETE: baseline/i386 not run", printed.splitlines())

    def test_stock_missing_on_a_target_leaves_that_comparison_incomplete(self):
        shards = self.shards(util.TARGET_NAMES[:2])
        shards.append(write_run(self.dir / "shard-i386", ["i386"],
                                kernels=("series", "baseline")))
        status, printed, _ = self.merge(shards)
        self.assertEqual(status, 2)
        lines = printed.splitlines()
        self.assertIn("INCOMPLETE: stock/i386 not run", lines)
        self.assertIn("INCOMPLETE: series vs stock: smoke.death_one_lock on i386: "
                      "missing on stock", lines)
        self.assertFalse([l for l in lines if l.startswith("FAILED")])

    def test_a_baseline_no_shard_ran_leaves_the_control_not_available(self):
        shards = [write_run(self.dir / t, [t], kernels=("series", "stock"))
                  for t in util.TARGET_NAMES]
        status, printed, _ = self.merge(shards, KERNELS="series,stock,baseline")
        self.assertEqual(status, 2)
        self.assertIn("== negative control (baseline): NOT AVAILABLE: no baseline guest ran",
                      printed.splitlines())

    def test_a_kernel_no_shard_ran_is_incomplete_when_named(self):
        shards = [write_run(self.dir / t, [t], kernels=("series",))
                  for t in util.TARGET_NAMES]
        self.assertEqual(self.merge(shards)[0], 0)
        status, printed, _ = self.merge(shards, KERNELS="series,stock")
        self.assertEqual(status, 2)
        self.assertIn("INCOMPLETE: stock/x86_64 not run", printed.splitlines())


class Refused(Shards):
    def assert_refused(self, shards, status, *words, **env):
        got, printed, err = self.merge(shards, **env)
        self.assertEqual(got, status, printed + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for w in words:
            self.assertIn(w, err)
        self.assertFalse((self.dir / "merged" / "matrix.txt").exists())

    def edited_shard(self, target, edit):
        return write_run(self.dir / ("other-" + target), [target], edit=edit)

    def test_a_different_series(self):
        def other_series(state):
            state["meta"]["provenance"]["series"]["key"] = "0ther5"
        shards = self.shards()[:2] + [self.edited_shard("i386", other_series)]
        self.assert_refused(shards, 1, "cannot merge: the shards differ in the patch series",
                            "series 5e71e5 (2 patches)", "series 0ther5 (2 patches)",
                            "other-i386")

    def test_a_different_tree(self):
        def other_tree(state):
            state["meta"]["provenance"]["tree"]["version"] = "6.1.191-1"
        shards = self.shards()[:2] + [self.edited_shard("i386", other_tree)]
        self.assert_refused(shards, 1, "differ in the Debian tree",
                            "linux-source-6.1 6.1.191-1")

    def test_a_different_build_of_a_shared_kernel(self):
        def other_key(state):
            state["meta"]["provenance"]["kernels"]["stock"]["x86_64"]["key"] = "rebuilt"
        shards = [self.shards()[0], self.edited_shard("x86_64-ia32", other_key)]
        self.assert_refused(shards, 1, "the kernel built for stock/x86_64",
                            "key stock-x86_64-key", "key rebuilt")

    def test_a_different_initramfs_of_a_shared_user_space(self):
        def other_cpio(state):
            state["meta"]["provenance"]["initramfs"]["ilp32"] = "other-cpio"
        shards = [self.shards()[1], self.edited_shard("i386", other_cpio)]
        self.assert_refused(shards, 1, "the initramfs of ilp32")

    def test_another_commit(self):
        def other_commit(state):
            state["meta"]["provenance"]["source"] = "deadbeef"
        shards = self.shards()[:2] + [self.edited_shard("i386", other_commit)]
        self.assert_refused(shards, 1, "the project's commit", "c0ffee", "deadbeef")

    def test_the_same_cell_with_different_results(self):
        shards = self.shards()
        other = write_run(self.dir / "rerun-i386", ["i386"],
                          fixtures={("series", "i386"): "fail_i386"})
        self.assert_refused(shards + [other], 1, "series/i386 is in both",
                            "with different results")

    def test_the_same_cell_with_a_different_record(self):
        shards = self.shards()
        other = write_run(self.dir / "rerun-i386", ["i386"], seconds=3.0)
        self.assert_refused(shards + [other], 1, "is in both")

    def test_a_kernel_unavailable_in_one_shard_that_ran_in_another(self):
        def no_baseline(state):
            state["unavailable"] = {"baseline": "patches/series is empty"}
            del state["guests"]["baseline"]
        shards = self.shards()[:2] + [self.edited_shard("i386", no_baseline)]
        self.assert_refused(shards, 1, "kernel baseline is unavailable in one shard")


class BadUsage(Shards):
    def assert_usage(self, results, *words, **env):
        got, printed, err = rfm("merge", RESULTS=results,
                                RFM_OUT=env.pop("out", str(self.dir / "merged")), **env)
        self.assertEqual(got, 2, printed + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for w in words:
            self.assertIn(w, err)

    def test_no_results(self):
        self.assert_usage("", 'make merge RESULTS="dir1 dir2 ..."')

    def test_not_a_directory(self):
        self.assert_usage(str(self.dir / "nowhere"), "is not a directory")

    def test_not_an_output_directory(self):
        (self.dir / "empty").mkdir()
        self.assert_usage(str(self.dir / "empty"), "holds no run.json")

    def test_an_output_directory_without_provenance(self):
        def old(state):
            del state["meta"]["provenance"]
        shard = write_run(self.dir / "old", ["i386"], edit=old)
        self.assert_usage(str(shard), "did not record what the run was made of")

    def test_output_directory_among_the_shards(self):
        a, b, c = self.shards()
        self.assert_usage("%s %s %s" % (a, b, c), "also the output directory", out=str(a))

    def test_a_complete_guest_without_results(self):
        a, b, c = self.shards()
        (c / "stock/i386/results.ktap").unlink()
        self.assert_usage("%s %s %s" % (a, b, c), "stock/i386/results.ktap is missing")

    def test_unknown_target(self):
        self.assert_usage(str(self.shards()[0]), "unknown target", TARGETS="x86_65")


if __name__ == "__main__":
    unittest.main()
