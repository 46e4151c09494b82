"""CI's schedule (steps.SCHEDULE): make check-all runs every job, every
step of a job whatever the others gave; make check-next (.ci/run) runs
the job whose turn it is only if its stated time fits what CI has left,
and stops and fails one that overruns."""
import contextlib
import io
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import checkrun, cli, deps, knobs, mutate, steps
from rfmlib.steps import Job, Step

ROTATING = [j for j in steps.SCHEDULE if j.rotates]
FIRST = steps.ROTATION_START    # the commit count that runs the first job


class Table(unittest.TestCase):
    def test_every_job_that_rotates_fits_what_a_cold_make_check_leaves(self):
        for j in ROTATING:
            self.assertTrue(j.minutes is None or 0 < j.minutes <= steps.ROTATION_BUDGET,
                            "%s: %s min" % (j.name, j.minutes))
            self.assertLessEqual(j.needs_minutes, steps.ROTATION_BUDGET)
        self.assertLessEqual(steps.CHECK_BUDGET // 60 + steps.ROTATION_BUDGET
                             + steps.ROTATION_MARGIN, steps.CI_MINUTES)

    def test_a_job_not_measured_yet_counts_as_the_whole_budget(self):
        self.assertEqual(Job("j", "a job", ()).needs_minutes, steps.ROTATION_BUDGET)

    def test_names_are_unique_and_no_job_is_named_as_a_command(self):
        names = [j.name for j in steps.SCHEDULE]
        self.assertEqual(len(names), len(set(names)))
        commands = {name for name, _, _ in cli.COMMANDS}
        self.assertEqual(set(names) & (commands | {"check", "check-arm"}), set())

    def test_every_step_runs_a_command_that_reads_the_knobs_it_sets(self):
        commands = {name for name, _, _ in cli.COMMANDS}
        for j in steps.SCHEDULE:
            for s in j.steps:
                self.assertTrue(s.command in commands or s.command in steps.SCRIPTS,
                                (j.name, s.name))
                for k, v in s.settings:
                    if s.command in steps.SCRIPTS:
                        continue
                    self.assertIn(s.command, knobs.BY_NAME[k].commands, (j.name, s.name, k))
                    if "{" not in v:
                        knobs.BY_NAME[k].read(v)    # a good value

    def test_docs_schedule_shows_the_table(self):
        page = (checkrun.config.REPO / "docs" / "schedule.md").read_text()
        self.assertIn(checkrun.schedule_table(), page,
                      "docs/schedule.md: paste `scripts/rfm check-all --list`")

    def test_a_jobs_packages_are_its_steps(self):
        names = {n.name for n in deps.needs_of("arm64")}
        self.assertIn("qemu-system-arm", names)
        self.assertNotIn("qemu-system-x86", names)
        self.assertIn("qemu-system-x86", {n.name for n in deps.needs_of("interrupt-idle")})


def completed(rc):
    return subprocess.CompletedProcess([], rc, "", "")


class Runs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.out = Path(self.dir.name)
        # The tree make deps chose, as if it had run.
        env = {"RFM_OUT": str(self.out), "KERNELS": "stock", "RFM_CACHE": "/c",
               checkrun.archive.CHOSEN_ENV: "{}"}
        patcher = mock.patch.dict(os.environ, env)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.calls = []

    def fake_run(self, results):
        """procs.run that records each step and gives the next result
        (an exit status, or an exception to raise)."""
        results = list(results)

        def run(cmd, env=None, timeout=None, **_kw):
            self.calls.append((cmd, env, timeout))
            r = results.pop(0)
            if isinstance(r, Exception):
                raise r
            return completed(r)
        return mock.patch.object(checkrun.procs, "run", side_effect=run)

    def quietly(self, fn, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            return fn(*args), out.getvalue()

    JOBS = (Job("one", "the first", (Step("a", "stress", "a step"),
                                     Step("b", "fuzz", "another", (("TARGETS", "x86_64"),))), 7),
            Job("two", "the second", (Step("c", "abi", "a third"),), 5))

    def test_check_all_runs_every_step_of_every_job_and_fails_for_one(self):
        with mock.patch.object(steps, "SCHEDULE", self.JOBS), \
                self.fake_run([0, 1, 0, 0, 0]):
            status, text = self.quietly(checkrun.cmd_check_all, mock.Mock(next=False, list=False))
        self.assertEqual(status, 1)
        ran = [c[0][2] for c in self.calls]
        self.assertEqual(ran, ["deps", "stress", "fuzz", "deps", "abi"])
        self.assertIn("FAILED: one", text)
        self.assertRegex(text, r"two +ok")
        # Each job's deps are its own; what to test is the job's own too.
        self.assertEqual(self.calls[0][1]["DEPS_FOR"], "one")
        self.assertNotIn("KERNELS", self.calls[1][1])
        self.assertEqual(self.calls[1][1]["RFM_CACHE"], "/c")
        self.assertEqual(self.calls[2][1]["TARGETS"], "x86_64")
        self.assertEqual(self.calls[2][1]["RFM_OUT"], str(self.out / "schedule" / "one"))
        self.assertTrue((self.out / "check-all.json").exists())
        self.assertTrue((self.out / "schedule" / "one" / "job.json").exists())

    def next_with(self, count, left_minutes, results):
        started = 1_000_000
        env = {"CI_STARTED": str(started), "CI_MINUTES": "90"}
        now = started + (90 - left_minutes) * 60
        with mock.patch.object(steps, "SCHEDULE", self.JOBS), \
                mock.patch.dict(os.environ, env), \
                mock.patch.object(checkrun, "commit_count", return_value=count), \
                mock.patch.object(checkrun.time, "time", return_value=now), \
                self.fake_run(results):
            return self.quietly(checkrun.cmd_check_all, mock.Mock(next=True, list=False))

    def test_the_commit_count_picks_the_job_in_turn(self):
        with mock.patch.object(steps, "ROTATION_START", 11):
            self.assertEqual(self.next_with(11, 60, [0, 0, 0])[0], 0)
        self.assertEqual([c[0][2] for c in self.calls], ["deps", "stress", "fuzz"])
        self.calls.clear()
        self.assertEqual(self.next_with(steps.ROTATION_START + 1, 60, [0, 0])[0], 0)
        self.assertEqual([c[0][2] for c in self.calls], ["deps", "abi"])

    def test_a_job_that_does_not_fit_the_time_left_is_not_run(self):
        status, text = self.next_with(FIRST, 9, [])     # 7 min + the margin of 3: 10
        self.assertEqual(status, 0)
        self.assertEqual(self.calls, [])
        self.assertIn("one NOT RUN", text)

    def test_the_steps_are_held_to_the_time_left(self):
        self.next_with(FIRST, 60, [0, 0, 0])
        timeouts = [c[2] for c in self.calls]
        self.assertTrue(all(t is not None and 58 * 60 <= t <= 59 * 60 for t in timeouts),
                        timeouts)

    def test_a_job_that_overruns_is_stopped_not_finished_and_not_passed(self):
        status, text = self.next_with(FIRST, 60, [0, subprocess.TimeoutExpired("rfm", 1)])
        self.assertEqual(status, 0)
        self.assertEqual(len(self.calls), 2)    # fuzz never started
        self.assertIn("one NOT FINISHED", text)
        self.assertNotIn(" ok", text.split("make check-next:")[-1])

    def test_a_failure_before_the_stop_fails_the_run(self):
        status, text = self.next_with(FIRST, 60, [0, 1, subprocess.TimeoutExpired("rfm", 1)])
        self.assertEqual(status, 1)
        self.assertIn("FAILED (exit 1)", text)

    def test_a_failing_job_fails_the_run(self):
        self.assertEqual(self.next_with(FIRST + 1, 60, [0, 2])[0], 2)

    def test_job_chooses_it_and_must_rotate(self):
        with mock.patch.dict(os.environ, {"JOB": "two"}), \
                mock.patch.object(steps, "SCHEDULE", self.JOBS):
            self.assertEqual(checkrun.next_job()[0].name, "two")
        with mock.patch.dict(os.environ, {"JOB": "merge-all"}):
            with self.assertRaises(checkrun.Usage):
                checkrun.next_job()


class Shards(unittest.TestCase):
    def test_the_parts_cover_the_catalogue_once(self):
        items = list(range(10))
        parts = [mutate.shard(items, (k, 3)) for k in (1, 2, 3)]
        self.assertEqual(sorted(sum(parts, [])), items)
        self.assertEqual(mutate.shard(items, None), items)

    def test_bad_shards_are_refused(self):
        for bad in ("0/3", "4/3", "3", "a/b", "1/0"):
            with self.assertRaises(knobs.BadValue):
                knobs.shard(bad)
        self.assertEqual(knobs.shard("2/6"), (2, 6))


if __name__ == "__main__":
    unittest.main()
