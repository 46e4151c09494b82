"""ktap.parse and ktap.scan_console on captured-style guest output."""
import re
import textwrap
import unittest

from rfmlib import ktap, report
from rfmlib.ktap import ERROR, FAIL, MISS, PASS, SKIP, Obs

from tests.host import util

INCOMPLETE = "no completion marker: the run is incomplete"


def case_statuses(run):
    """{case key: status}, in report order (dicts keep insertion order)."""
    return {key: case.status for key, case in run.cases().items()}


def nested(suite, *body, result="ok 1", directive=""):
    """A one-program results log as init prints it: the subtest's version
    and "# Subtest:" lines, the program's lines (less its own version
    line) indented by four spaces, then its result line and the marker."""
    lines = ["KTAP version 1", "1..1", "    KTAP version 1", "    # Subtest: %s" % suite]
    lines += ["    " + line for line in body]
    lines.append("%s %s%s" % (result, suite, " # " + directive if directive else ""))
    lines.append("# rfm-complete 1")
    return "\n".join(lines) + "\n"


def old_nested(suite, *body, result="ok 1", directive=""):
    """The same log as init printed it before KUnit's order: "# Subtest:"
    first, then the program's lines with its own version line."""
    lines = ["KTAP version 1", "1..1", "    # Subtest: %s" % suite]
    lines += ["    " + line for line in body]
    lines.append("%s %s%s" % (result, suite, " # " + directive if directive else ""))
    lines.append("# rfm-complete 1")
    return "\n".join(lines) + "\n"


def parsed(run):
    """Everything ktap.parse says of a log, to compare two logs by."""
    return (run.cases(), [(s.name, s.status, s.reason, s.planned) for s in run.suites],
            run.meta, run.planned, run.complete, run.problems, run.foreign_lines)


class CompleteRuns(unittest.TestCase):
    def test_every_smoke_case_passes_in_program_order(self):
        for target in util.TARGET_NAMES:
            with self.subTest(target=target):
                run = util.parse("complete/" + target)
                self.assertEqual(list(case_statuses(run).items()),
                                 [(key, PASS) for key in util.SMOKE_CASES])

    def test_run_is_complete_without_problems(self):
        run = util.parse("complete/x86_64")
        self.assertTrue(run.complete)
        self.assertEqual(run.problems, [])
        self.assertEqual(run.foreign_lines, 0)
        self.assertEqual(run.planned, 1)

    def test_meta_lines(self):
        self.assertEqual(util.parse("complete/i386").meta, {
            "target": "i386", "kernel": "Linux 6.1.192 i686", "init": "32-bit"})
        self.assertEqual(util.parse("complete/x86_64").meta["init"], "64-bit")

    def test_suite_plan_and_status(self):
        (suite,) = util.parse("complete/x86_64-ia32").suites
        self.assertEqual((suite.name, suite.status, suite.planned),
                         ("smoke", PASS, 3))

    def test_obs_attach_to_the_next_result_with_their_scope(self):
        cases = util.parse("complete/x86_64").cases()
        self.assertEqual(cases["smoke.set_get_roundtrip"].obs, {
            "set_errno": Obs("0"), "get_errno": Obs("0"),
            "head_is_ours": Obs("1"), "head_len": Obs("24", "abi")})
        self.assertEqual(cases["smoke.set_bad_length"].obs,
                         {"ret": Obs("-1"), "errno": Obs("EINVAL")})
        self.assertEqual(cases["smoke.death_one_lock"].obs,
                         {"word": Obs("0x40000000")})

    def test_abi_obs_is_12_on_the_ilp32_targets(self):
        for target in ("x86_64-ia32", "i386"):
            case = util.parse("complete/" + target).cases()["smoke.set_get_roundtrip"]
            self.assertEqual(case.obs["head_len"], Obs("12", "abi"))

    def test_crlf_input_parses_the_same(self):
        lf = util.text("complete/x86_64")
        crlf = ktap.parse(lf.replace("\n", "\r\n"))
        self.assertEqual(crlf.cases(), ktap.parse(lf).cases())
        self.assertEqual(crlf.meta["target"], "x86_64")
        self.assertTrue(crlf.complete)
        self.assertEqual(crlf.foreign_lines, 0)


class BrokenRuns(unittest.TestCase):
    def test_truncated_mid_subtest_leaves_the_rest_missing(self):
        run = util.parse("truncated")
        self.assertEqual(case_statuses(run), {
            "smoke.set_get_roundtrip": PASS, "smoke.#2": MISS, "smoke.#3": MISS})
        self.assertEqual(run.cases()["smoke.#2"].reason,
                         "log ends before this result")
        self.assertFalse(run.complete)
        self.assertIn(INCOMPLETE, run.problems)

    def test_truncated_obs_line_is_not_given_to_an_earlier_case(self):
        case = util.parse("truncated").cases()["smoke.set_get_roundtrip"]
        self.assertNotIn("ret", case.obs)
        self.assertNotIn("err", case.obs)

    def test_panic_results_stop_after_case_two(self):
        run = util.parse("panic")
        self.assertEqual(case_statuses(run), {
            "smoke.set_get_roundtrip": PASS, "smoke.set_bad_length": PASS,
            "smoke.#3": MISS})
        self.assertFalse(run.complete)

    def test_timed_out_program_leaves_its_cases_error_not_miss(self):
        run = util.parse("timeout")
        self.assertEqual(case_statuses(run), {
            "smoke.set_get_roundtrip": PASS, "smoke.#2": ERROR, "smoke.#3": ERROR})
        self.assertEqual(run.cases()["smoke.#3"].reason,
                         "program ended before reporting it: TIMEOUT after 300 s")
        (suite,) = run.suites
        self.assertEqual((suite.status, suite.reason), (FAIL, "TIMEOUT after 300 s"))
        self.assertTrue(run.complete)
        self.assertEqual(run.problems, [])

    def test_program_failing_after_all_cases_passed_is_an_error(self):
        run = ktap.parse(nested("smoke", "1..1", "ok 1 only",
                                result="not ok 1", directive="killed by signal 11"))
        self.assertEqual(case_statuses(run),
                         {"smoke.only": PASS, "smoke.(program)": ERROR})
        self.assertEqual(run.cases()["smoke.(program)"].reason, "killed by signal 11")

    def test_programs_never_reported(self):
        text = util.text("complete/i386").replace("1..1\n", "1..2\n", 1)
        run = ktap.parse(text)
        self.assertIn("1 of 2 programs never reported", run.problems)

    def test_empty_results(self):
        run = ktap.parse("")
        self.assertEqual(run.cases(), {})
        self.assertFalse(run.complete)
        self.assertEqual(run.problems, [INCOMPLETE])


class ForeignLines(unittest.TestCase):
    def test_kernel_messages_are_counted_and_ignored(self):
        run = util.parse("interleaved")
        self.assertEqual(run.foreign_lines, 4)
        self.assertEqual(run.cases(), util.parse("complete/x86_64").cases())
        self.assertTrue(run.complete)
        self.assertEqual(run.problems, [])

    def test_program_without_ktap_is_one_case_named_after_it(self):
        run = util.parse("extra")
        self.assertEqual(list(case_statuses(run).items()),
                         [("robust_stress", PASS)] + [(k, PASS) for k in util.SMOKE_CASES])
        case = run.cases()["robust_stress"]
        self.assertEqual((case.suite, case.name), ("robust_stress", ""))
        self.assertEqual(run.foreign_lines, 2)   # its two lines of plain output
        self.assertEqual(run.planned, 2)

    def test_failing_program_without_ktap(self):
        run = ktap.parse(nested("stress", "segfault at 0", result="not ok 1",
                                directive="exit status 139"))
        case = run.cases()["stress"]
        self.assertEqual((case.status, case.reason), (FAIL, "exit status 139"))

    def test_result_line_without_a_subtest_header(self):
        run = ktap.parse("KTAP version 1\n1..2\nok 1 lonely\n"
                         "not ok 2 crashy # killed by signal 11\n# rfm-complete 2\n")
        self.assertEqual(case_statuses(run), {"lonely": PASS, "crashy": FAIL})
        self.assertEqual(run.cases()["crashy"].reason, "killed by signal 11")
        self.assertEqual(run.problems, [])

    def test_subtest_without_result_line(self):
        text = ("KTAP version 1\n1..2\n    # Subtest: first\n    KTAP version 1\n"
                "    1..2\n    ok 1 a\n    # Subtest: second\n    KTAP version 1\n"
                "    1..1\n    ok 1 b\nok 2 second\n# rfm-complete 2\n")
        run = ktap.parse(text)
        self.assertIn("subtest first has no result line", run.problems)
        self.assertEqual(case_statuses(run),
                         {"first.a": PASS, "first.#2": MISS, "second.b": PASS})

    def test_subtest_without_result_line_in_kunits_order(self):
        text = ("KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: first\n"
                "    1..2\n    ok 1 a\n    KTAP version 1\n    # Subtest: second\n"
                "    1..1\n    ok 1 b\nok 2 second\n# rfm-complete 2\n")
        run = ktap.parse(text)
        self.assertEqual(run.problems, ["subtest first has no result line"])
        self.assertEqual(case_statuses(run),
                         {"first.a": PASS, "first.#2": MISS, "second.b": PASS})

    def test_indented_output_outside_a_subtest(self):
        run = ktap.parse("KTAP version 1\n1..0\n    ok 1 stray\n# rfm-complete 0\n")
        self.assertIn("indented output outside a subtest", run.problems)
        self.assertEqual(case_statuses(run), {"(unnamed).stray": PASS})


class KunitOrder(unittest.TestCase):
    """init prints each block in KUnit's order: the version line, then
    "# Subtest:", both before the program runs; the program's own version
    line is dropped."""

    def test_the_version_line_before_a_subtest_is_no_suite_and_no_problem(self):
        run = util.parse("complete/x86_64")
        self.assertIn("    KTAP version 1\n    # Subtest: smoke\n",
                      util.text("complete/x86_64"))
        self.assertEqual([s.name for s in run.suites], ["smoke"])
        self.assertEqual(run.problems, [])
        self.assertEqual(run.foreign_lines, 0)

    def test_the_plan_right_after_the_version_line_and_the_rfm_lines_after_it(self):
        text = util.text("complete/i386")
        self.assertTrue(text.startswith("KTAP version 1\n1..1\n# rfm-target: i386\n"))
        run = ktap.parse(text)
        self.assertEqual((run.planned, run.meta["target"]), (1, "i386"))

    def test_a_log_cut_after_the_next_programs_version_line(self):
        # The guest died between init's two header lines of the second
        # program: that program never started, nothing is unnamed.
        text = nested("first", "1..1", "ok 1 a").replace("1..1\n", "1..2\n", 1)
        text = text.replace("# rfm-complete 1\n", "    KTAP version 1\n")
        run = ktap.parse(text)
        self.assertEqual(case_statuses(run), {"first.a": PASS})
        self.assertEqual(run.problems, ["1 of 2 programs never reported", INCOMPLETE])

    def test_a_log_cut_after_the_subtest_line_names_the_program(self):
        run = util.parse("cut_off")
        self.assertEqual(case_statuses(run), {"a_hang": MISS})
        self.assertEqual(run.cases()["a_hang"].reason,
                         "started; the log ends before its result")

    def test_version_lines_of_tap_are_skipped_too(self):
        for version in ("KTAP version 1", "TAP version 13", "TAP version 14"):
            with self.subTest(version=version):
                run = ktap.parse(nested("s", version, "1..1", "ok 1 c"))
                self.assertEqual(case_statuses(run), {"s.c": PASS})
                self.assertEqual((run.problems, run.foreign_lines), ([], 0))

    def test_the_docstring_example_parses(self):
        example = re.search(r"\n\n( {4}KTAP version 1\n.*?rfm-complete 1\n)",
                            ktap.__doc__, re.S).group(1)
        run = ktap.parse(textwrap.dedent(example))
        self.assertEqual(case_statuses(run), {"smoke.set_bad_length": PASS,
                                              "smoke.set_get_roundtrip": PASS})
        self.assertEqual(run.cases()["smoke.set_get_roundtrip"].obs,
                         {"head_len": Obs("12", "abi")})
        self.assertEqual((run.meta, run.planned, run.complete, run.problems),
                         ({"target": "i386"}, 1, True, []))


class OlderLogs(unittest.TestCase):
    """Logs from before KUnit's order (LAVA logs, shards to merge): the
    plan after the rfm- lines, "# Subtest:" before the program's own
    version line. They read exactly as the same run in KUnit's order."""

    def test_the_old_order_fixture_reads_as_the_same_run_in_kunits_order(self):
        old = util.text("old_order")
        self.assertIn("    # Subtest: robust_owner\n    KTAP version 1\n", old)
        self.assertIn("# rfm-program-timeout: 300\n1..3\n", old)
        self.assertEqual(parsed(ktap.parse(old)), parsed(util.parse("user_programs/x86_64")))
        self.assertEqual(util.parse("old_order").problems, [])

    def test_old_and_new_order_read_the_same(self):
        bodies = [
            (("KTAP version 1", "1..2", "# obs e=EINVAL", "ok 1 a", "not ok 2 b # why"),
             ("1..2", "# obs e=EINVAL", "ok 1 a", "not ok 2 b # why"), {}),
            (("plain output",), ("plain output",), {}),
            (("KTAP version 1", "1..1", "ok 1 only"), ("1..1", "ok 1 only"),
             {"result": "not ok 1", "directive": "killed by signal 11"}),
            (("KTAP version 1", "1..3", "ok 1 x"), ("1..3", "ok 1 x"),
             {"result": "not ok 1", "directive": "TIMEOUT after 300 s"}),
        ]
        for old_body, new_body, kwargs in bodies:
            with self.subTest(body=new_body):
                self.assertEqual(parsed(ktap.parse(old_nested("p", *old_body, **kwargs))),
                                 parsed(ktap.parse(nested("p", *new_body, **kwargs))))


class CaseDetails(unittest.TestCase):
    def test_skip_with_reason(self):
        case = util.parse("variants/i386").cases()["robust_abi.pi_owner_died"]
        self.assertEqual((case.status, case.reason),
                         (SKIP, "needs CONFIG_FUTEX_PI, not in this kernel"))

    def test_skip_only_where_reported(self):
        case = util.parse("variants/x86_64").cases()["robust_abi.pi_owner_died"]
        self.assertEqual((case.status, case.reason), (PASS, ""))

    def test_target_scoped_obs_keeps_its_reason(self):
        case = util.parse("variants/x86_64-ia32").cases()["robust_abi.syscall_number"]
        self.assertEqual(case.obs["nr"], Obs(
            "311", "target", "set_robust_list has its own number in each syscall table"))

    def test_target_scope_without_a_reason(self):
        run = ktap.parse(nested("s", "# obs fault=EFAULT [target]", "ok 1 c"))
        self.assertEqual(run.cases()["s.c"].obs["fault"], Obs("EFAULT", "target", ""))

    def test_diagnostics_attach_to_the_next_result(self):
        case = util.parse("baseline/x86_64").cases()["smoke.death_one_lock"]
        self.assertEqual(case.status, FAIL)
        self.assertEqual(case.diag, [
            "child: set_robust_list: Function not implemented",
            "FAIL /work/main/tests/common/smoke.c:83: lock->futex == "
            "FUTEX_OWNER_DIED: futex word 0x31 after the owner died, want 0x40000000"])
        self.assertEqual(case.obs, {"word": Obs("0x31")})

    def test_failed_cases_do_not_add_a_program_error(self):
        run = util.parse("baseline/i386")
        self.assertEqual(list(run.cases()), list(util.SMOKE_CASES))
        self.assertEqual(run.suites[0].reason, "exit status 1")

    def test_deeper_nesting_is_diagnostics(self):
        run = ktap.parse(nested("s", "        # Subtest: inner", "        ok 1 x",
                                "ok 1 c"))
        self.assertEqual(case_statuses(run), {"s.c": PASS})
        self.assertEqual(run.cases()["s.c"].diag, ["# Subtest: inner", "ok 1 x"])

    def test_duplicate_case_names_are_kept_apart(self):
        run = ktap.parse(nested("s", "1..2", "# obs n=1",
                                "ok 1 twice", "# obs n=2", "not ok 2 twice"))
        self.assertEqual(case_statuses(run), {"s.twice": PASS, "s.twice#2": FAIL})
        self.assertEqual(run.cases()["s.twice#2"].obs, {"n": Obs("2")})
        self.assertIn("duplicate case s.twice", run.problems)

    def test_result_with_dash_before_the_name(self):
        run = ktap.parse(nested("s", "ok 1 - dashed"))
        self.assertEqual(case_statuses(run), {"s.dashed": PASS})


class ConsoleScan(unittest.TestCase):
    def test_clean_boot_logs_have_no_findings(self):
        # Their command line says "panic=-1 oops=panic": not trouble.
        for target in util.TARGET_NAMES:
            with self.subTest(target=target):
                log = util.text("complete/" + target, "console.log")
                self.assertIn("oops=panic", log)
                self.assertEqual(ktap.scan_console(log), [])

    def test_panic_log(self):
        found = ktap.scan_console(util.text("panic", "console.log"))
        self.assertEqual([kind for kind, _ in found], ["bug", "oops", "panic"])
        self.assertEqual(found[0][1], "[    0.934871] BUG: kernel NULL pointer "
                                      "dereference, address: 00000004")
        self.assertEqual(found[2][1], "[    0.940616] Kernel panic - not syncing: "
                                      "Fatal exception")

    def test_each_kind_of_trouble(self):
        lines = {
            "warning": "[    2.1] WARNING: CPU: 0 PID: 47 at kernel/futex/core.c:1061 "
                       "exit_robust_list+0x2d/0x130",
            "bug": "[    2.2] BUG: KASAN: use-after-free in handle_futex_death+0x3c/0x1a0",
            "kasan": "[    2.3] KASAN: null-ptr-deref in range "
                     "[0x0000000000000008-0x000000000000000f]",
            "oops": "[    2.4] general protection fault, probably for non-canonical "
                    "address 0xdffffc0000000001: 0000 [#1] SMP KASAN",
            "hung": "[  242.5] INFO: task smoke:47 blocked for more than 120 seconds.",
            "lockdep": "[    2.6] inconsistent lock state",
        }
        for kind, line in lines.items():
            with self.subTest(kind=kind):
                self.assertEqual(ktap.scan_console("[    1.0] ok\n%s\r\n" % line),
                                 [(kind, line)])

    def test_a_programs_own_fault_is_no_kernel_trouble(self):
        # How 7.3 reports a user program's GP fault (mainline's racy
        # robust_list selftest, clone()d children sharing libc's state).
        user = ("[   43.4] traps: ksft-robust_lis[1993] general protection fault "
                "ip:b7cf4338 sp:b7acdf00 error:0 in libc.so.6[22338,b7cf4000+179000]")
        self.assertEqual(ktap.scan_console(user + "\n"), [])
        kernel = "[    2.4] general protection fault: 0000 [#1] PREEMPT SMP"
        self.assertEqual(ktap.scan_console(kernel + "\n"), [("oops", kernel)])

    def test_one_finding_per_line(self):
        found = ktap.scan_console("Kernel panic - not syncing: Oops: BUG: in a WARNING:\n")
        self.assertEqual([kind for kind, _ in found], ["panic"])


if __name__ == "__main__":
    unittest.main()


# A program of another suite that init ran twice: its first attempt as
# comments, then the second attempt's own output.
RERUN = textwrap.dedent("""\
    KTAP version 1
    1..1
        KTAP version 1
        # Subtest: ksft-robust_list
        # rfm-first-attempt: 1..4
        # rfm-first-attempt: ok 1 global.test_a
        # rfm-first-attempt: not ok 2 global.test_b # the holder died first
        # rfm-first-attempt: ok 3 global.test_d
        # rfm-first-attempt-result: exit status 1
        # rfm-retry: 1..1
        # rfm-retry: not ok 1 global.test_d # slept through it again
        # rfm-retry-result: global.test_d: exit status 1
        # rfm-retry: 1..0
        # rfm-retry-result: global.test_d: passed
        # rfm-retry: 1..1
        # rfm-retry: ok 1 global.test_d
        # rfm-retry-result: global.test_d: passed
        # rfm-retry: 1..1
        # rfm-retry: not ok 1 global.test_c
        # rfm-retry-result: global.test_c: exit status 1
        1..4
        ok 1 global.test_a
        ok 2 global.test_b
        not ok 3 global.test_d # the waiter slept through the death
        not ok 4 global.test_c
    not ok 1 ksft-robust_list # exit status 1
    # rfm-complete 1
    """)


class Rerun(unittest.TestCase):
    def test_each_case_keeps_its_first_result(self):
        cases = ktap.parse(RERUN).cases()
        a, b, c = (cases["ksft-robust_list.global.test_%s" % n] for n in "abc")
        self.assertEqual((a.status, a.attempts, a.flaky), (PASS, (PASS, PASS), False))
        self.assertEqual((b.status, b.attempts, b.flaky),
                         (PASS, ("FAIL (the holder died first)", PASS), True))
        # Never reached on the first attempt, failed on the second and
        # when run alone.
        self.assertEqual((c.status, c.attempts, c.flaky),
                         (FAIL, ("ERROR (not reached: exit status 1)",
                                 FAIL, FAIL), False))

    def test_a_case_that_passed_when_run_alone_is_flaky(self):
        # The run that never reported test_d (1..0) is no attempt of it.
        d = ktap.parse(RERUN).cases()["ksft-robust_list.global.test_d"]
        self.assertEqual((d.status, d.attempts, d.flaky),
                         (PASS, (PASS, "FAIL (the waiter slept through the death)",
                                 "FAIL (slept through it again)", PASS), True))

    def test_a_pass_then_a_failure_is_flaky_too(self):
        text = "\n".join(l for l in RERUN.splitlines() if "rfm-retry" not in l)
        d = ktap.parse(text).cases()["ksft-robust_list.global.test_d"]
        self.assertEqual((d.status, d.attempts, d.flaky),
                         (PASS, (PASS, "FAIL (the waiter slept through the death)"), True))

    def test_a_flaky_case_accounts_for_the_programs_exit_status(self):
        # test_c passes too: test_d, failed on the kept run and passed
        # alone, is what the program's exit status 1 reports.
        text = RERUN.replace("    not ok 4 global.test_c\n", "    ok 4 global.test_c\n")
        cases = ktap.parse(text).cases()
        self.assertEqual(sorted(c.status for c in cases.values()), [PASS] * 4)
        self.assertNotIn("ksft-robust_list.(program)", cases)
        # Without the flaky case, the exit status is a failure of its own.
        text = text.replace("    not ok 3 global.test_d # the waiter slept through the death\n",
                            "    ok 3 global.test_d\n")
        self.assertEqual(ktap.parse(text).cases()["ksft-robust_list.(program)"].status, ERROR)

    def test_a_program_run_once_has_no_first_result(self):
        once = RERUN.replace("    # rfm-first-attempt-result: exit status 1\n", "")
        once = "\n".join(l for l in once.splitlines() if "rfm-first-attempt" not in l)
        self.assertTrue(all(c.attempts == () and not c.flaky
                            for c in ktap.parse(once).cases().values()))

    def test_a_flaky_case_is_named_never_a_plain_pass(self):
        runs = {t: util.guest_run_from_text(t, RERUN, programs=("ksft-robust_list",))
                for t in util.TARGET_NAMES}
        m = util.matrix({"series": runs}, kernels=("series",))
        self.assertIn("series/i386: ksft-robust_list.global.test_b: FAIL (the holder died "
                      "first), then PASS", m["summary"]["flaky"])

        text = report.render_text(m)
        self.assertIn("FLAKY (another suite's race; passed on one of its runs): series/i386: "
                      "ksft-robust_list.global.test_b", text)
        self.assertIn("series/i386: ksft-robust_list.global.test_d: PASS, then FAIL "
                      "(the waiter slept through the death), then FAIL (slept through "
                      "it again), then PASS", m["summary"]["flaky"])
        row = [line for line in text.splitlines()
               if line.startswith("ksft-robust_list.global.test_b")][0]
        self.assertIn("FLAKY", row)
        self.assertNotIn("PASS", row.split("global.test_b", 1)[1].split()[0])
        junit = report.render_junit(m)
        self.assertIn('<flakyFailure message="attempts: FAIL (the holder died first), '
                      'then PASS"', junit)


class NamelessResults(unittest.TestCase):
    """kselftest's ksft_test_result_skip() inside a harness test prints a
    result without a name before the harness's own result of the test."""

    TEXT = textwrap.dedent("""\
        KTAP version 1
        1..1
            KTAP version 1
            # Subtest: ksft-robust_list
            1..3
            ok 1 global.test_a
            ok 1 # SKIP __vdso_futex_robust_list64_try_unlock not found
            ok 2 vdso_unlock.64.test_b
            not ok 1 # set_robust_list error
            ok 3 global.test_c
        ok 1 ksft-robust_list
        # rfm-complete 1
        """)

    def test_it_is_the_next_named_results_status(self):
        run = ktap.parse(self.TEXT)
        cases = run.cases()
        self.assertEqual(sorted(cases), ["ksft-robust_list.global.test_a",
                                         "ksft-robust_list.global.test_c",
                                         "ksft-robust_list.vdso_unlock.64.test_b"])
        b = cases["ksft-robust_list.vdso_unlock.64.test_b"]
        self.assertEqual((b.status, b.reason),
                         (SKIP, "__vdso_futex_robust_list64_try_unlock not found"))
        c = cases["ksft-robust_list.global.test_c"]
        self.assertEqual((c.status, c.reason), (FAIL, "set_robust_list error"))
        self.assertEqual(run.problems, [])

    def test_one_no_named_result_follows_is_a_case_of_its_own(self):
        text = self.TEXT.replace("    ok 3 global.test_c\n", "")
        text = text.replace("1..3", "1..2")
        cases = ktap.parse(text).cases()
        self.assertEqual(cases["ksft-robust_list"].status, FAIL)
