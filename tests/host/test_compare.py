"""compare.py: verdicts across targets, series vs stock, the negative
control, and the exit status of build_matrix."""
import shutil
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from rfmlib import compare, config, pipeline, report, targets
from rfmlib.compare import NA
from rfmlib.ktap import ERROR, FAIL, MISS, PASS, SKIP

from tests.host import util

TARGETS = util.FIXTURE_TARGETS

ALL_PASS = {t: PASS for t in util.TARGET_NAMES}
# Why a case of a truncated run is MISS: the guest's or the parser's words.
TRUNCATED_REASONS = ("guest run incomplete", "log ends before this result")


class AcrossTargets(unittest.TestCase):
    def test_complete_runs_agree_with_an_abi_note(self):
        rows = util.compare_all(util.complete_runs())
        self.assertEqual(list(rows), list(util.SMOKE_CASES))
        self.assertEqual({k: r["verdict"] for k, r in rows.items()}, {
            "smoke.set_get_roundtrip": "agree; abi: head_len=24|12|12",
            "smoke.set_bad_length": "agree",
            "smoke.death_one_lock": "agree"})
        for row in rows.values():
            self.assertIs(row["agree"], True)
            self.assertEqual(util.statuses(row), ALL_PASS)

    def test_cells_carry_obs_with_scope(self):
        cell = util.compare_all(util.complete_runs())[
            "smoke.set_get_roundtrip"]["cells"]["i386"]
        self.assertEqual(cell["obs"]["head_len"],
                         {"value": "12", "scope": "abi", "why": ""})

    def test_target_scoped_difference_agrees_with_its_reason(self):
        row = util.compare_all(util.variant_runs())["robust_abi.syscall_number"]
        self.assertIs(row["agree"], True)
        self.assertEqual(row["verdict"], "agree; expected: nr=273|311|311 (set_robust_list "
                                         "has its own number in each syscall table)")

    def test_skip_is_not_compared(self):
        row = util.compare_all(util.variant_runs())["robust_abi.pi_owner_died"]
        self.assertEqual(util.statuses(row), {"x86_64": PASS, "x86_64-ia32": PASS,
                                              "i386": SKIP})
        self.assertIsNone(row["agree"])
        self.assertEqual(row["verdict"], "not compared: SKIP on i386")

    def test_abi_obs_differing_within_ilp32_is_a_difference(self):
        runs = util.with_runs(util.variant_runs(), {"i386": util.guest_run(
            "i386", "abi_differ", programs=util.VARIANT_PROGRAMS)})
        row = util.compare_all(runs)["robust_abi.futex_offset"]
        self.assertIs(row["agree"], False)
        self.assertEqual(row["verdict"], "DIFFER: futex_offset=8|4|8")

    def test_status_difference(self):
        runs = util.with_runs(util.complete_runs(),
                              {"i386": util.guest_run("i386", "fail_i386")})
        row = util.compare_all(runs)["smoke.death_one_lock"]
        self.assertIs(row["agree"], False)
        self.assertEqual(row["verdict"], "DIFFER: status PASS|PASS|FAIL")

    def test_obs_value_difference(self):
        runs = util.with_runs(util.complete_runs(), {"x86_64-ia32": util.edited(
            "x86_64-ia32", "complete/x86_64-ia32", "errno=EINVAL", "errno=EFAULT")})
        row = util.compare_all(runs)["smoke.set_bad_length"]
        self.assertEqual(util.statuses(row), ALL_PASS)
        self.assertIs(row["agree"], False)
        self.assertEqual(row["verdict"], "DIFFER: errno=EINVAL|EFAULT|EINVAL")

    def test_obs_without_abi_mark_must_agree_across_abis(self):
        runs = util.with_runs(util.complete_runs(), {"x86_64": util.edited(
            "x86_64", "complete/x86_64", "errno=EINVAL", "errno=EFAULT")})
        row = util.compare_all(runs)["smoke.set_bad_length"]
        self.assertEqual(row["verdict"], "DIFFER: errno=EFAULT|EINVAL|EINVAL")

    def test_obs_missing_on_one_target(self):
        runs = util.with_runs(util.complete_runs(), {"i386": util.edited(
            "i386", "complete/i386", "    # obs word=0x40000000\n", "")})
        row = util.compare_all(runs)["smoke.death_one_lock"]
        self.assertEqual(row["verdict"], "DIFFER: word not observed on i386")

    def test_truncated_run_is_incomplete_with_miss(self):
        runs = util.with_runs(util.complete_runs(), {"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")})
        rows = util.compare_all(runs)
        self.assertIs(rows["smoke.set_get_roundtrip"]["agree"], True)
        for key in ("smoke.set_bad_length", "smoke.death_one_lock"):
            with self.subTest(case=key):
                row = rows[key]
                self.assertEqual(util.statuses(row)["x86_64-ia32"], MISS)
                self.assertIn(row["cells"]["x86_64-ia32"]["reason"], TRUNCATED_REASONS)
                self.assertIs(row["agree"], False)
                self.assertEqual(row["verdict"], "incomplete: MISS on x86_64-ia32")

    def test_timed_out_program_is_incomplete_with_error(self):
        runs = util.with_runs(util.complete_runs(),
                              {"x86_64": util.guest_run("x86_64", "timeout")})
        errors = [row for row in util.compare_all(runs).values()
                  if util.statuses(row)["x86_64"] == ERROR]
        self.assertTrue(errors)
        for row in errors:
            self.assertIs(row["agree"], False)
            self.assertTrue(row["verdict"].startswith("incomplete: "), row["verdict"])
            self.assertIn("ERROR", row["verdict"])

    def test_bug_timed_out_cases_show_error_in_their_own_rows(self):
        """BUG: the parser names the unreported cases "#2", "#3", so the
        rows of their real names show MISS ("not reported") on the target
        whose program timed out, instead of ERROR."""
        runs = util.with_runs(util.complete_runs(),
                              {"x86_64": util.guest_run("x86_64", "timeout")})
        rows = util.compare_all(runs)
        for key in ("smoke.set_bad_length", "smoke.death_one_lock"):
            with self.subTest(case=key):
                self.assertEqual(util.statuses(rows[key])["x86_64"], ERROR)

    def test_bug_healthy_targets_are_never_miss(self):
        """BUG: the placeholder rows smoke.#2/#3 of a truncated target show
        MISS on the targets that reported every case."""
        runs = util.with_runs(util.complete_runs(), {"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")})
        for key, row in util.compare_all(runs).items():
            with self.subTest(case=key):
                self.assertEqual(util.statuses(row)["x86_64"], PASS)
                self.assertEqual(util.statuses(row)["i386"], PASS)

    def test_program_not_built_for_a_word_size_is_na(self):
        runs = util.with_runs(util.complete_runs(), {"x86_64": util.guest_run(
            "x86_64", "extra", programs=("robust_stress", "smoke"))})
        row = util.compare_all(runs)["robust_stress"]
        self.assertEqual(util.statuses(row),
                         {"x86_64": PASS, "x86_64-ia32": NA, "i386": NA})
        self.assertEqual(row["cells"]["i386"]["reason"], "not built for this word size")
        self.assertIs(row["agree"], True)
        self.assertEqual(row["verdict"], "only on x86_64")

    def only_64(self, text):
        """smoke with a fourth case its 64-bit build alone has (#ifdef)."""
        return text.replace("    1..3\n", "    1..4\n").replace(
            "    ok 3 death_one_lock\n", "    ok 3 death_one_lock\n    ok 4 only_64\n")

    def test_a_case_another_abis_complete_plan_lacks_is_na(self):
        runs = util.with_runs(util.complete_runs(), {"x86_64": util.guest_run_from_text(
            "x86_64", self.only_64(util.text("complete/x86_64")))})
        row = util.compare_all(runs)["smoke.only_64"]
        self.assertEqual(util.statuses(row),
                         {"x86_64": PASS, "x86_64-ia32": NA, "i386": NA})
        self.assertEqual(row["cells"]["i386"]["reason"],
                         "not in this ABI's build (its plan is complete)")
        self.assertIs(row["agree"], True)
        self.assertEqual(row["verdict"], "only on x86_64")

    def test_the_plan_of_the_programs_own_suite_decides(self):
        # i386's image holds "robust" and "robust.x86"; only "robust"
        # reported, whole. The case of "robust.x86" is lost, not absent
        # from a complete plan: "robust"'s plan says nothing about it.
        whole = util.text("complete/i386").replace("smoke", "robust")
        x86 = util.text("complete/x86_64").replace("smoke", "robust.x86").replace(
            "    1..3\n", "    1..4\n").replace(
            "    ok 3 death_one_lock\n", "    ok 3 death_one_lock\n    ok 4 only_64\n")
        programs = ("robust", "robust.x86")
        runs = {"x86_64": util.guest_run_from_text("x86_64", x86, programs=programs),
                "i386": util.guest_run_from_text("i386", whole, programs=programs)}
        row = util.compare_all(runs)["robust.x86.only_64"]
        self.assertEqual(util.statuses(row)["i386"], MISS)

    def test_a_case_an_incomplete_plan_lacks_stays_miss(self):
        # The 32-bit program died after its second case: its plan of three
        # was not reported whole, so the case it may have had is lost.
        died = util.text("complete/i386").split("    # obs word=")[0]
        runs = util.with_runs(util.complete_runs(), {
            "x86_64": util.guest_run_from_text("x86_64", self.only_64(
                util.text("complete/x86_64"))),
            "i386": util.guest_run_from_text("i386", died, boot="incomplete")})
        row = util.compare_all(runs)["smoke.only_64"]
        self.assertEqual(util.statuses(row)["i386"], MISS)
        self.assertEqual(util.statuses(row)["x86_64-ia32"], NA)
        self.assertIs(row["agree"], False)

    def test_without_a_program_list_a_missing_case_is_miss(self):
        runs = util.with_runs(util.complete_runs(programs=()), {
            "x86_64": util.guest_run("x86_64", "extra", programs=())})
        row = util.compare_all(runs)["robust_stress"]
        self.assertEqual(util.statuses(row)["i386"], MISS)
        self.assertEqual(row["cells"]["i386"]["reason"], "not run (not reported)")

    def test_bug_dotted_program_name_missing_case_is_miss_not_na(self):
        """BUG: _cell takes the program name as key.split(".")[0], so an
        EXTRA program named "robust.x86" is "not built" on a target that
        has it but lost a case; the loss is shown as "only on i386"."""
        text = util.text("complete/i386").replace("smoke", "robust.x86")
        died = text.split("    ok 3 death_one_lock")[0]
        runs = {"i386": util.guest_run_from_text("i386", text, programs=("robust.x86",)),
                "x86_64-ia32": util.guest_run_from_text(
                    "x86_64-ia32", died, boot="incomplete", programs=("robust.x86",))}
        row = util.compare_all(runs)["robust.x86.death_one_lock"]
        self.assertEqual(util.statuses(row)["x86_64-ia32"], MISS)
        self.assertIs(row["agree"], False)

    def test_target_without_a_run_has_no_cell(self):
        runs = util.complete_runs()
        del runs["i386"]
        row = util.compare_all(runs)["smoke.set_get_roundtrip"]
        self.assertEqual(set(row["cells"]), {"x86_64", "x86_64-ia32"})
        self.assertEqual(row["verdict"], "agree; abi: head_len=24|12")


class SeriesVsStock(unittest.TestCase):
    def rows(self, series, stock=None):
        return {"series": compare.compare_targets(series, TARGETS),
                "stock": compare.compare_targets(stock or util.complete_runs(),
                                                 TARGETS)}

    def test_identical_kernels_give_no_rows(self):
        self.assertEqual(compare.compare_kernels(
            self.rows(util.complete_runs()), "stock", "series", []), [])

    def test_status_difference_is_not_ok(self):
        series = util.with_runs(util.complete_runs(),
                                {"i386": util.guest_run("i386", "fail_i386")})
        self.assertEqual(compare.compare_kernels(self.rows(series), "stock", "series", []), [
            {"case": "smoke.death_one_lock", "target": "i386",
             "difference": "status FAIL vs PASS", "deviation": None, "ok": False}])

    def test_difference_named_in_deviations_is_ok_with_the_reason(self):
        series = util.with_runs(util.complete_runs(),
                                {"i386": util.guest_run("i386", "fail_i386")})
        deviations = [("smoke.set_*", "not this one"),
                      ("smoke.death_*", "0003 leaves the word alone on i386")]
        (row,) = compare.compare_kernels(self.rows(series), "stock", "series", deviations)
        self.assertIs(row["ok"], True)
        self.assertEqual(row["deviation"], "0003 leaves the word alone on i386")

    def test_obs_difference(self):
        series = util.with_runs(util.complete_runs(), {"x86_64": util.edited(
            "x86_64", "complete/x86_64", "head_is_ours=1", "head_is_ours=0")})
        (row,) = compare.compare_kernels(self.rows(series), "stock", "series", [])
        self.assertEqual((row["case"], row["target"], row["difference"], row["ok"]),
                         ("smoke.set_get_roundtrip", "x86_64", "obs differ: head_is_ours",
                          False))

    def test_case_missing_on_stock(self):
        series = util.with_runs(util.complete_runs(), {"x86_64": util.guest_run(
            "x86_64", "extra", programs=("robust_stress", "smoke"))})
        (row,) = compare.compare_kernels(self.rows(series), "stock", "series", [])
        self.assertEqual((row["case"], row["target"], row["difference"]),
                         ("robust_stress", "x86_64", "missing on stock"))


class NegativeControl(unittest.TestCase):
    def baseline_rows(self, **replace):
        runs = util.with_runs(util.complete_runs("baseline"), replace)
        return compare.compare_targets(runs, TARGETS)

    def results(self, rows, rules=util.CONTROL):
        return {r["rule"]: r for r in compare.check_control(rows, rules)}

    def test_baseline_satisfies_the_control(self):
        results = self.results(self.baseline_rows())
        self.assertEqual(results, {
            "*.death_* FAIL": {"rule": "*.death_* FAIL", "ok": True, "cases": 1,
                               "detail": "holds"},
            "smoke.set_get_roundtrip obs set_errno=ENOSYS": {
                "rule": "smoke.set_get_roundtrip obs set_errno=ENOSYS", "ok": True,
                "cases": 1, "detail": "holds"}})

    def test_rule_matching_no_case_fails(self):
        (result,) = compare.check_control(self.baseline_rows(), [("*.never_*", "FAIL")])
        self.assertIs(result["ok"], False)
        self.assertEqual(result["detail"], "matches no case: the control proves nothing")

    def test_death_case_passing_on_one_target_violates_the_rule(self):
        rows = self.baseline_rows(i386=util.guest_run("i386", "complete/i386"))
        result = self.results(rows)["*.death_* FAIL"]
        self.assertIs(result["ok"], False)
        self.assertEqual(result["detail"], "smoke.death_one_lock on i386 is PASS")

    def test_a_death_case_the_control_skips_is_unproven(self):
        # The SMP death cases skip on one CPU: the control never showed
        # they can fail, so the rule does not hold.
        rows = self.baseline_rows(i386=util.edited(
            "i386", "baseline/i386", "not ok 3 death_one_lock",
            "ok 3 death_one_lock # SKIP 1 CPU(s) online: the race needs 2 (CPUS=2)"))
        result = self.results(rows)["*.death_* FAIL"]
        self.assertIs(result["ok"], False)
        self.assertEqual(result["detail"], "smoke.death_one_lock on i386 is SKIP (1 CPU(s) "
                         "online: the race needs 2 (CPUS=2)): unproven")

    def test_obs_rule_violated_on_a_working_kernel(self):
        result = self.results(compare.compare_targets(
            util.complete_runs(), TARGETS))[
            "smoke.set_get_roundtrip obs set_errno=ENOSYS"]
        self.assertIs(result["ok"], False)
        self.assertEqual(result["detail"], "; ".join(
            "smoke.set_get_roundtrip on %s: set_errno=0" % t for t in util.TARGET_NAMES))

    def test_missing_case_violates_a_fail_rule(self):
        rows = self.baseline_rows(i386=util.guest_run("i386", "panic", boot="incomplete"))
        result = self.results(rows)["*.death_* FAIL"]
        self.assertIs(result["ok"], False)
        self.assertIn("smoke.death_one_lock on i386 is MISS", result["detail"])

    def test_bug_unknown_expectation_does_not_hold(self):
        """BUG: an expectation that is neither FAIL nor `obs k=v` (a typo:
        "FIAL", "fail") checks nothing and is reported as holding."""
        rows = compare.compare_targets(util.complete_runs(), TARGETS)
        for expect in ("FIAL", "fail", "obs-set_errno=ENOSYS"):
            with self.subTest(expect=expect):
                (result,) = compare.check_control(rows, [("*.death_*", expect)])
                self.assertIs(result["ok"], False, result)


class LoadRules(unittest.TestCase):
    def load(self, content):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "rules.txt"
            path.write_text(content)
            return compare.load_rules(path)

    def test_tabs_comments_and_blank_lines(self):
        self.assertEqual(self.load(
            "# The negative control.\n"
            "\n"
            "*.death_*\t\t\tFAIL\n"
            "   # an indented comment\n"
            "smoke.set_get_roundtrip\t\tobs set_errno=ENOSYS\n"
            "smoke.set_bad_length   0002 changes the error   \n"), [
            ("*.death_*", "FAIL"),
            ("smoke.set_get_roundtrip", "obs set_errno=ENOSYS"),
            ("smoke.set_bad_length", "0002 changes the error")])

    def test_no_file_no_rules(self):
        self.assertEqual(compare.load_rules(None), [])
        self.assertEqual(compare.load_rules(Path("/nonexistent/deviations.txt")), [])


class ExitStatus(unittest.TestCase):
    def summary(self, runs, **kwargs):
        return util.matrix(runs, **kwargs)["summary"]

    def series(self, **replace):
        return {"series": util.with_runs(util.complete_runs(), replace)}

    def test_all_pass_is_0(self):
        s = self.summary(self.series())
        self.assertEqual((s["exit_status"], s["failures"], s["incomplete"]), (0, [], []))
        self.assertEqual(s["counts"], {PASS: 9, FAIL: 0, SKIP: 0, ERROR: 0, MISS: 0})

    def test_skip_alone_is_0(self):
        s = self.summary({"series": util.variant_runs()})
        self.assertEqual(s["exit_status"], 0)
        self.assertEqual(s["counts"][SKIP], 1)

    def test_failure_is_1(self):
        s = self.summary(self.series(i386=util.guest_run("i386", "fail_i386")))
        self.assertEqual(s["exit_status"], 1)
        self.assertIn("series/i386: smoke.death_one_lock FAIL", s["failures"])
        self.assertIn("series: smoke.death_one_lock: DIFFER: status PASS|PASS|FAIL",
                      s["failures"])

    def test_disagreement_alone_is_1(self):
        runs = util.with_runs(util.variant_runs(), {"i386": util.guest_run(
            "i386", "abi_differ", programs=util.VARIANT_PROGRAMS)})
        s = self.summary({"series": runs})
        self.assertEqual(s["exit_status"], 1)
        self.assertEqual(s["failures"],
                         ["series: robust_abi.futex_offset: DIFFER: futex_offset=8|4|8"])

    def test_console_trouble_on_a_complete_run_is_1(self):
        run = util.guest_run("i386", "complete/i386")
        run.console = [("warning", "[    1.2] WARNING: CPU: 0 PID: 47 at kernel/futex/core.c:1061")]
        s = self.summary(self.series(i386=run))
        self.assertEqual(s["exit_status"], 1)
        self.assertEqual(s["failures"], ["series/i386: kernel trouble on the console: "
                                         "[    1.2] WARNING: CPU: 0 PID: 47 at "
                                         "kernel/futex/core.c:1061"])

    def test_panic_is_1(self):
        s = self.summary(self.series(i386=util.guest_run("i386", "panic", boot="incomplete")))
        self.assertEqual(s["exit_status"], 1)
        self.assertTrue(any("kernel trouble" in f for f in s["failures"]), s["failures"])

    def test_timeout_error_is_1(self):
        s = self.summary(self.series(x86_64=util.guest_run("x86_64", "timeout")))
        self.assertEqual(s["exit_status"], 1)
        errors = [f for f in s["failures"] if f.startswith("series/x86_64: smoke.")]
        self.assertEqual(len(errors), 2, s["failures"])
        # Each names its status and why: the program's timeout.
        self.assertTrue(all(f.endswith(" ERROR (program ended before reporting it: "
                                       "TIMEOUT after 300 s)") for f in errors), errors)

    def test_incomplete_guest_with_nothing_failing_is_2(self):
        s = self.summary(self.series(**{"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete",
            detail="the guest stopped before the completion marker")}))
        self.assertEqual((s["exit_status"], s["failures"]), (2, []))
        self.assertIn("series/x86_64-ia32: guest incomplete: the guest stopped before "
                      "the completion marker", s["incomplete"])

    def test_target_not_run_is_2(self):
        runs = util.complete_runs()
        del runs["i386"]
        s = self.summary({"series": runs})
        self.assertEqual(s["exit_status"], 2)
        self.assertEqual(s["incomplete"], ["series/i386 not run"])

    def check_summary(self, **replace_by_kernel):
        return self.summary(util.check_matrix(**replace_by_kernel),
                            kernels=("series", "stock", "baseline"), control=util.CONTROL)

    def test_baseline_failures_are_not_failures(self):
        s = self.check_summary()
        self.assertEqual((s["exit_status"], s["failures"], s["incomplete"]), (0, [], []))
        self.assertEqual((s["counts"][FAIL], s["control_counts"][FAIL]), (0, 9))

    def test_baseline_violating_the_control_is_1(self):
        s = self.check_summary(baseline={"i386": util.guest_run("i386", "complete/i386")})
        self.assertEqual(s["exit_status"], 1)
        self.assertIn("negative control: *.death_* FAIL: smoke.death_one_lock on i386 "
                      "is PASS", s["failures"])

    def test_series_differing_from_stock_is_1_unless_a_deviation(self):
        changed = {t: util.edited(t, "complete/" + t, "errno=EINVAL", "errno=EFAULT")
                   for t in util.TARGET_NAMES}
        s = self.check_summary(series=changed)
        self.assertEqual(s["exit_status"], 1)
        self.assertIn("series vs stock: smoke.set_bad_length on i386: obs differ: errno",
                      s["failures"])
        allowed = self.summary(util.check_matrix(series=changed),
                               kernels=("series", "stock", "baseline"), control=util.CONTROL,
                               deviations=[("smoke.set_bad_length", "EFAULT first")])
        self.assertEqual(allowed["exit_status"], 0)

    def test_a_fix_the_stock_kernel_lacks_is_an_expected_failure_there(self):
        # The series fixes smoke.death_one_lock (say); stock fails it on
        # every target, and deviations.txt names it.
        broken = {t: util.edited(t, "complete/" + t, "ok 3 death_one_lock",
                                 "not ok 3 death_one_lock") for t in util.TARGET_NAMES}
        rule = [("smoke.death_one_lock", "fixed by the series: why")]
        s = self.summary(util.check_matrix(stock=broken), kernels=("series", "stock",
                                                                   "baseline"),
                         control=util.CONTROL, deviations=rule)
        self.assertEqual((s["exit_status"], s["failures"]), (0, []))
        self.assertEqual((s["expected_failures"], s["counts"][FAIL]), (3, 0))
        m = util.matrix(util.check_matrix(stock=broken), kernels=("stock",),
                        deviations=rule)
        row = util.rows_by_case(m["kernels"]["stock"]["cases"])["smoke.death_one_lock"]
        self.assertEqual(row["verdict"], "expected to fail here: fixed by the series")
        self.assertEqual(m["summary"]["exit_status"], 0)
        # Unnamed, the same failure fails; on the series it always fails.
        self.assertEqual(self.summary(util.check_matrix(stock=broken),
                                      kernels=("series", "stock", "baseline"),
                                      control=util.CONTROL)["exit_status"], 1)
        on_series = self.summary(util.check_matrix(series=broken),
                                 kernels=("series", "stock", "baseline"),
                                 control=util.CONTROL, deviations=rule)
        self.assertEqual(on_series["exit_status"], 1)
        self.assertIn("series/i386: smoke.death_one_lock FAIL", on_series["failures"])

    def test_an_expected_failure_on_some_targets_only_is_still_a_failure(self):
        one = {"i386": util.edited("i386", "complete/i386", "ok 3 death_one_lock",
                                   "not ok 3 death_one_lock")}
        s = self.summary(util.check_matrix(stock=one), kernels=("series", "stock",
                                                                "baseline"),
                         control=util.CONTROL,
                         deviations=[("smoke.death_one_lock", "fixed by the series")])
        self.assertEqual(s["exit_status"], 1)

    def test_a_tests_defect_fails_where_named_on_every_kernel(self):
        # tests/test-defects.txt: a case wrong on some targets whatever the
        # kernel (mainline's selftest on big-endian): it must fail there,
        # on the subject too, and pass on every other target.
        one = {"i386": util.edited("i386", "complete/i386", "ok 3 death_one_lock",
                                   "not ok 3 death_one_lock")}
        kernels = ("series", "stock", "baseline")
        with mock.patch.object(compare, "TEST_DEFECTS", self.defects(
                "smoke.death_one_lock@i386\tassumes little-endian\n")):
            s = self.summary(util.check_matrix(series=one, stock=one), kernels=kernels,
                             control=util.CONTROL)
            self.assertEqual((s["exit_status"], s["failures"]), (0, []))
            m = util.matrix(util.check_matrix(series=one), kernels=("series",))
            row = util.rows_by_case(m["kernels"]["series"]["cases"])["smoke.death_one_lock"]
            self.assertEqual(row["verdict"], "expected to fail on i386: a defect of the test, "
                             "on every kernel")
            # Named, but passing there (a test since fixed): judged as any
            # row; failing where no line names it: a failure.
            s = self.summary(util.check_matrix(), kernels=kernels, control=util.CONTROL)
            self.assertEqual(s["exit_status"], 0)
            other = {"x86_64": util.edited("x86_64", "complete/x86_64", "ok 3 death_one_lock",
                                           "not ok 3 death_one_lock")}
            s = self.summary(util.check_matrix(series=other), kernels=kernels,
                             control=util.CONTROL)
            self.assertEqual(s["exit_status"], 1)

    def test_a_defect_and_a_deviation_share_one_row(self):
        # mainline's selftest row: a deviation on one target (no COMPAT),
        # the test's defect on another (big-endian), a pass on the third.
        fail = {t: util.edited(t, "complete/" + t, "ok 3 death_one_lock",
                               "not ok 3 death_one_lock") for t in ("x86_64", "i386")}
        rule = [("smoke.death_one_lock@x86_64", "kept: no COMPAT")]
        with mock.patch.object(compare, "TEST_DEFECTS", self.defects(
                "smoke.death_one_lock@i386\tassumes little-endian\n")):
            s = self.summary(util.check_matrix(series={"i386": fail["i386"]}, stock=fail),
                             kernels=("series", "stock", "baseline"),
                             control=util.CONTROL, deviations=rule)
            self.assertEqual((s["exit_status"], s["failures"]), (0, []))

    def test_a_defect_that_only_skips_is_no_reason(self):
        skipped = {t: util.edited(t, "complete/" + t, "ok 3 death_one_lock",
                                  "ok 3 death_one_lock # SKIP not here")
                   for t in util.TARGET_NAMES}
        with mock.patch.object(compare, "TEST_DEFECTS", self.defects(
                "smoke.death_one_lock@i386\tassumes little-endian\n")):
            m = util.matrix({"series": skipped}, kernels=("series",))
        row = util.rows_by_case(m["kernels"]["series"]["cases"])["smoke.death_one_lock"]
        self.assertIsNone(row.get("expected_failure"))

    def test_a_kernel_without_the_abi_is_a_column_of_dashes(self):
        # targets.ABIS_REMOVED: never booted there; every cell "-", with
        # why; neither incomplete nor a difference from the series.
        runs = util.check_matrix()
        runs["stock"]["i386"] = util.guest_run_from_text("i386", "", boot=compare.ABSENT,
                                                         programs=())
        runs["stock"]["i386"].detail = "no such ABI here"
        m = util.matrix(runs, kernels=("series", "stock", "baseline"), control=util.CONTROL)
        self.assertEqual((m["summary"]["exit_status"], m["summary"]["incomplete"]), (0, []))
        row = util.rows_by_case(m["kernels"]["stock"]["cases"])["smoke.death_one_lock"]
        self.assertEqual((row["cells"]["i386"]["status"], row["cells"]["i386"]["reason"]),
                         (NA, "no such ABI here"))

    def defects(self, text):
        path = Path(tempfile.mkdtemp()) / "test-defects.txt"
        path.write_text(text)
        self.addCleanup(shutil.rmtree, path.parent)
        return path

    def test_a_race_fix_may_fail_on_some_targets_only(self):
        # "[race]": without the fix the case fails where the race went the
        # wrong way; a mix of targets is expected, a pass everywhere too.
        one = {"i386": util.edited("i386", "complete/i386", "ok 3 death_one_lock",
                                   "not ok 3 death_one_lock")}
        rule = [("smoke.death_one_lock", "[race] fixed by the series")]
        for stock in (one, {}):
            s = self.summary(util.check_matrix(stock=stock), kernels=("series", "stock",
                                                                      "baseline"),
                             control=util.CONTROL, deviations=rule)
            self.assertEqual((s["exit_status"], s["failures"]), (0, []))
        # On the series it is a failure as any other.
        s = self.summary(util.check_matrix(series=one), kernels=("series", "stock",
                                                                  "baseline"),
                         control=util.CONTROL, deviations=rule)
        self.assertEqual(s["exit_status"], 1)

    def test_unavailable_baseline(self):
        runs = util.check_matrix()
        del runs["baseline"]
        m = util.matrix(runs, kernels=("series", "stock", "baseline"), control=util.CONTROL,
                        unavailable={"baseline": "patches/series is empty"})
        self.assertEqual(m["control"], {"available": False, "kernel": "baseline",
                                        "reason": "patches/series is empty"})
        self.assertEqual(m["kernels"]["baseline"], {"available": False,
                                                    "role": "negative control",
                                                    "reason": "patches/series is empty"})
        self.assertEqual(m["summary"]["exit_status"], 0)


class MissingResults(unittest.TestCase):
    """What never ran is incomplete (exit 2), never a difference or a pass."""

    def summary(self, runs, **kwargs):
        return util.matrix(runs, kernels=("series", "stock", "baseline"),
                           control=util.CONTROL, **kwargs)

    def test_stock_not_run_on_a_target_leaves_its_comparisons_incomplete(self):
        runs = util.check_matrix()
        del runs["stock"]["i386"]
        m = self.summary(runs)
        s = m["summary"]
        self.assertEqual((s["exit_status"], s["failures"]), (2, []))
        self.assertIn("series vs stock: smoke.death_one_lock on i386: missing on stock",
                      s["incomplete"])
        self.assertIn("stock/i386 not run", s["incomplete"])

    def test_a_miss_on_stock_is_not_a_difference_yet(self):
        m = self.summary(util.check_matrix(stock={"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")}))
        s = m["summary"]
        self.assertEqual((s["exit_status"], s["failures"]), (2, []))
        self.assertIn("stock: smoke.death_one_lock: incomplete: MISS on x86_64-ia32",
                      s["incomplete"])
        # Not compared with the series: no verdict either way.
        row = [c for c in m["kernel_comparison"]
               if (c["case"], c["target"]) == ("smoke.death_one_lock", "x86_64-ia32")]
        self.assertEqual([c["ok"] for c in row], [None])

    def test_a_real_difference_next_to_a_missing_target_still_fails(self):
        runs = util.check_matrix(series={"i386": util.guest_run("i386", "fail_i386")})
        del runs["stock"]["x86_64"]
        self.assertEqual(self.summary(runs)["summary"]["exit_status"], 1)

    def test_a_baseline_that_never_ran_proves_nothing(self):
        runs = util.check_matrix()
        runs["baseline"] = {}
        m = self.summary(runs)
        self.assertEqual(m["control"], {"available": False, "kernel": "baseline",
                                        "reason": "no baseline guest ran"})
        self.assertEqual((m["summary"]["exit_status"], m["summary"]["failures"]), (2, []))


class LoadGuestRun(unittest.TestCase):
    def test_guest_that_left_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            run = pipeline.load_guest_run(Path(d), "i386", "boot-timeout", 60.0,
                                     "no results after 60s", ["smoke"])
        self.assertEqual((run.boot_status, run.console, run.programs),
                         ("boot-timeout", [], ("smoke",)))
        self.assertEqual(run.run.cases(), {})
        self.assertFalse(run.run.complete)

    def test_reads_results_and_console(self):
        run = util.guest_run("i386", "panic", boot="incomplete")
        self.assertEqual(len(run.console), 3)
        self.assertEqual(list(run.run.cases())[-1], "smoke.#3")


if __name__ == "__main__":
    unittest.main()


class Roles(unittest.TestCase):
    """Kernels are compared by role: a subject against each of its
    references, each reference with its own deviations file."""

    def runs(self, **replace_by_kernel):
        runs = {"series": util.complete_runs(), "stock": util.complete_runs(),
                "mainline": util.complete_runs()}
        for kernel, replacements in replace_by_kernel.items():
            runs[kernel] = util.with_runs(runs[kernel], replacements)
        return runs

    def efault(self):
        return {t: util.edited(t, "complete/" + t, "errno=EINVAL", "errno=EFAULT")
                for t in util.TARGET_NAMES}

    def test_every_variant_has_a_role_and_its_references_are_references(self):
        for name, variant in targets.KERNEL_VARIANTS.items():
            self.assertIn(variant.get("role"), targets.ROLES, name)
            for name in targets.deviations_files(name):
                self.assertTrue((config.PATCHES / name).is_file(), name)
        for c in targets.comparisons(tuple(targets.KERNEL_VARIANTS)):
            self.assertEqual(targets.role(c.reference), targets.REFERENCE, c.title)
            for name in c.deviations:
                self.assertTrue((config.PATCHES / name).is_file(), (c.title, name))

    def test_series_is_held_against_stock_and_mainline_each_with_its_file(self):
        cmps = targets.comparisons(("series", "stock", "baseline", "mainline"))
        self.assertEqual([(c.subject, c.reference, c.deviations) for c in cmps],
                         [("series", "stock", ("deviations.txt",)),
                          ("series", "mainline", ("deviations-mainline.txt",
                                                  "deviations-upstream.txt"))])
        self.assertEqual([c.title for c in targets.comparisons(("distro", "distro-stock"))],
                         ["distro vs distro-stock"])

    def test_mainline_fix_is_held_against_mainline_with_the_upstream_file_alone(self):
        cmps = targets.comparisons(("series", "mainline", "mainline-fix"))
        self.assertEqual([(c.title, c.deviations) for c in cmps], [
            ("series vs mainline", ("deviations-mainline.txt", "deviations-upstream.txt")),
            ("mainline-fix vs mainline", ("deviations-upstream.txt",))])
        kernels = ("mainline", "mainline-fix")
        runs = {"mainline": util.with_runs(util.complete_runs(), self.efault()),
                "mainline-fix": util.complete_runs()}
        fixed = ("smoke.set_bad_length", "fixed by upstream/")
        # What mainline lacks of the series: named for both, not a difference.
        m = util.matrix(runs, kernels=kernels, deviations={
            "mainline": [fixed], "mainline-fix": [], ("mainline-fix", "mainline"): []})
        self.assertEqual(m["summary"]["exit_status"], 1)
        self.assertIn("mainline-fix vs mainline: smoke.set_bad_length on i386: obs differ: "
                      "errno", m["summary"]["failures"])
        named = util.matrix(runs, kernels=kernels, deviations={
            "mainline": [fixed], "mainline-fix": [], ("mainline-fix", "mainline"): [fixed]})
        self.assertEqual(named["summary"]["exit_status"], 0, named["summary"]["failures"])
        self.assertEqual([(c["subject"], c["reference"]) for c in named["comparisons"]],
                         [("mainline-fix", "mainline")])
        # The file of the pair does not excuse mainline-fix's own failure.
        failing = {t: util.edited(t, "complete/" + t, "ok 2 set_bad_length",
                                  "not ok 2 set_bad_length") for t in util.TARGET_NAMES}
        broken = util.matrix({"mainline": failing, "mainline-fix": failing},
                             kernels=kernels, deviations={
                                 "mainline": [], "mainline-fix": [],
                                 ("mainline-fix", "mainline"): [fixed]})
        self.assertEqual(broken["summary"]["exit_status"], 1)

    def test_a_difference_from_mainline_is_named_by_mainlines_file_only(self):
        kernels = ("series", "stock", "mainline")
        m = util.matrix(self.runs(mainline=self.efault()), kernels=kernels,
                        deviations={"stock": [("smoke.set_bad_length", "stock's reason")],
                                    "mainline": []})
        self.assertEqual(m["summary"]["exit_status"], 1)
        self.assertIn("series vs mainline: smoke.set_bad_length on i386: obs differ: errno",
                      m["summary"]["failures"])
        self.assertEqual([c["reference"] for c in m["comparisons"]], ["stock", "mainline"])
        self.assertEqual(m["comparisons"][1]["deviations"],
                         "patches/deviations-mainline.txt and patches/deviations-upstream.txt")
        named = util.matrix(self.runs(mainline=self.efault()), kernels=kernels,
                            deviations={"stock": [], "mainline": [
                                ("smoke.set_bad_length", "mainline says EFAULT")]})
        self.assertEqual(named["summary"]["exit_status"], 0)
        text = report.render_text(named)
        self.assertIn("== series vs stock: every case matches on every target", text)
        self.assertIn("== series vs mainline: 3 difference(s); named in "
                      "patches/deviations-mainline.txt", text)

    def test_a_reference_fails_only_what_its_own_file_names(self):
        failing = {t: util.edited(t, "complete/" + t, "ok 2 set_bad_length",
                                  "not ok 2 set_bad_length") for t in util.TARGET_NAMES}
        kernels = ("series", "mainline")
        m = util.matrix(self.runs(mainline=failing), kernels=kernels,
                        deviations={"mainline": [("smoke.set_bad_length", "lacks it")]})
        row = util.rows_by_case(m["kernels"]["mainline"]["cases"])["smoke.set_bad_length"]
        self.assertEqual(row.get("expected_failure"), "lacks it")
        m = util.matrix(self.runs(mainline=failing), kernels=kernels,
                        deviations={"mainline": [], "stock": [
                            ("smoke.set_bad_length", "stock's, not mainline's")]})
        self.assertIsNone(util.rows_by_case(m["kernels"]["mainline"]["cases"])
                          ["smoke.set_bad_length"].get("expected_failure"))
        self.assertEqual(m["summary"]["exit_status"], 1)

    def test_a_subject_never_has_expected_failures(self):
        failing = {t: util.edited(t, "complete/" + t, "ok 2 set_bad_length",
                                  "not ok 2 set_bad_length") for t in util.TARGET_NAMES}
        m = util.matrix({"series": failing}, kernels=("series",),
                        deviations=[("smoke.set_bad_length", "named")])
        self.assertEqual(m["summary"]["exit_status"], 1)
