"""bench.py: figures from a boot's records, the two methods side by side,
and the performance gate on the exact figures."""
import os
import unittest
from unittest import mock

from rfmlib import bench, kbuild, knobs, targets
from rfmlib.log import Fatal


def records(walk_u, walk_c, no_list, empty_list, user=700, n=2048, signal=3000):
    """The "# bench" records of one boot, as robust_bench prints them."""
    recs = [{"path": "machine", "cpu": "QEMU"},
            {"path": "signal_delivery", "runs": 3, "ns": signal}]
    for path, contention, v in (("kernel_walk", "uncontended", walk_u),
                                ("kernel_walk", "contended", walk_c),
                                ("kernel_walk", "waiters", 2 * walk_c),
                                ("user_unlock", "uncontended", user)):
        for size in (16, n):
            recs.append({"path": path, "contention": contention, "n": size,
                         "ns_per_lock": v, "total_ns": v * size})
    for kind, v in (("no_list", no_list), ("empty_list", empty_list),
                    ("one_lock", empty_list + 50)):
        recs.append({"path": "thread_create_exit", "list": kind, "ns": v})
    return recs


def counted(recs, no_list, empty_list, hook=None):
    """The same boot on a bench-exit kernel: its exit release counter, and
    the series' signal hook counter (hook=)."""
    recs = recs + [{"path": "exit_release", "list": kind, "exits": 600, "insns_min": v,
                    "insns_mean": v + 3.5}
                   for kind, v in (("no_list", no_list), ("empty_list", empty_list))]
    if hook is not None:
        recs.append({"path": "signal_hook", "calls": 603, "insns_min": hook,
                     "insns_mean": hook + 0.5})
    return recs


def part(series, stock, target="i386"):
    return bench.summarize_method({"series": {target: series}, "stock": {target: stock}})


class Figures(unittest.TestCase):
    def test_a_walk_lost_in_the_noise_is_no_figure(self):
        # Seen by the wall clock on a loaded host: the median death with
        # 2048 locks no slower than the median with none, robust_bench
        # prints 0 per lock. That is not a walk that costs nothing.
        f = bench.figures(records(0, 519, 24551, 24687))
        self.assertIsNone(f["walk_uncontended_ns"])
        self.assertIsNone(f["contended_vs_uncontended"])
        self.assertIsNone(f["walk_vs_user_uncontended"])
        p = part(records(0, 519, 24551, 24687), records(176, 588, 24553, 24621))
        self.assertIsNone(p["series_vs_stock"]["i386"]["walk_uncontended_ns"])
        self.assertEqual(bench.figures(records(1, 519, 24551, 24687))["walk_uncontended_ns"], 1)

    def test_figures_and_ratios(self):
        f = bench.figures(records(107, 519, 24551, 24687))
        self.assertEqual((f["n"], f["walk_uncontended_ns"], f["walk_contended_ns"]),
                         (2048, 107, 519))
        self.assertEqual(f["empty_vs_no_list"], round(24687 / 24551, 2))
        p = part(records(107, 519, 24551, 24687), records(176, 588, 24553, 24621))
        self.assertEqual(p["series_vs_stock"]["i386"]["walk_uncontended_ns"], 0.61)

    def test_both_methods_are_kept_apart_and_compared(self):
        raw = {"wall": {"series": {"x86_64": records(57, 402, 60100, 60900)},
                        "stock": {"x86_64": records(124, 531, 58700, 58700)}},
               "icount": {"series": {"x86_64": records(38, 238, 20000, 20050)},
                          "stock": {"x86_64": records(63, 262, 20000, 20040)}}}
        doc = bench.summarize(raw, "tcg")
        self.assertEqual(set(doc["methods"]), {"wall", "icount"})
        self.assertEqual(doc["units"], {"wall": "ns", "icount": "instructions"})
        self.assertEqual(doc["ratios_by_method"]["x86_64"]["walk_uncontended_ns"],
                         {"wall": 0.46, "icount": 0.6})
        text = bench.render(doc)
        self.assertIn("kernel walk, uncontended (instructions/lock) (icount)", text)
        self.assertIn("kernel walk, uncontended (ns/lock) ", text)
        self.assertIn("0.46 | 0.6", text)


    def test_mainline_gets_columns_of_its_own_when_it_was_booted(self):
        raw = {"icount": {"series": {"x86_64": records(91, 615, 20000, 20050)},
                          "stock": {"x86_64": records(165, 679, 20000, 20040)},
                          "mainline": {"x86_64": records(156, 869, 21000, 21040)}}}
        doc = bench.summarize(raw, "tcg")
        self.assertEqual(doc["methods"]["icount"]["series_vs_mainline"]["x86_64"]
                         ["walk_uncontended_ns"], round(91 / 156, 2))
        text = bench.render(doc)
        header = [l for l in text.splitlines() if l.startswith("figure")][0]
        self.assertIn("series/mainline", header)
        row = [l for l in text.splitlines()
               if l.startswith("kernel walk, uncontended (instructions/lock)")][0]
        self.assertIn("156", row)
        self.assertIn(str(round(91 / 156, 2)), row)
        # Without mainline's boots, no such column.
        del raw["icount"]["mainline"]
        self.assertNotIn("mainline", bench.render(bench.summarize(raw, "tcg")))


class Gate(unittest.TestCase):
    def verdicts(self, series, stock, target="i386"):
        return {check: ok for _, check, _, _, ok in bench.gate(part(series, stock, target))}

    def test_a_walk_no_dearer_than_stock_passes(self):
        v = self.verdicts(counted(records(107, 519, 24551, 24611), 49, 103, hook=19),
                          counted(records(176, 588, 24553, 24621), 52, 114))
        self.assertEqual(set(v.values()), {True})

    def test_one_instruction_more_than_stock_fails(self):
        v = self.verdicts(records(177, 519, 24551, 24611), records(176, 588, 24553, 24621))
        self.assertFalse(v["walk_uncontended <= stock"])
        self.assertTrue(v["walk_contended <= stock"])
        v = self.verdicts(records(107, 589, 24551, 24611), records(176, 588, 24553, 24621))
        self.assertFalse(v["walk_contended <= stock"])

    def test_an_empty_list_costs_a_bounded_number_of_instructions(self):
        # Where the exit release is not counted (ARM), the bound is the
        # target's kernel architecture's: the same 105 instructions pass on
        # armhf, whose user reads switch domains, and fail on arm64.
        for target, arch in (("arm64-aarch32", "arm64"), ("armhf", "arm")):
            bound = bench.EMPTY_LIST_BOUNDS[arch]
            self.assertEqual(bench.empty_list_bound(target), bound)
            ok = self.verdicts(records(1, 1, 1000, 1000 + bound), records(2, 2, 1000, 1000),
                               target)
            bad = self.verdicts(records(1, 1, 1000, 1001 + bound), records(2, 2, 1000, 1000),
                                target)
            check = "empty list - no list <= %d (no exit counter)" % bound
            self.assertTrue(ok[check], target)
            self.assertFalse(bad[check], target)
        # Every architecture is judged one way or the other, never both,
        # or refused by name.
        ways = (set(bench.EMPTY_LIST_BOUNDS), set(bench.COUNTED_ARCHES), set(bench.NOT_GATED))
        self.assertEqual(set().union(*ways), {c.arch for c in targets.KERNEL_CONFIGS.values()})
        self.assertEqual(sum(len(w) for w in ways), len(set().union(*ways)))
        self.assertLess(bench.empty_list_bound("arm64"), 105)
        self.assertGreaterEqual(bench.empty_list_bound("armhf"), 105)

    def test_a_target_with_no_bound_is_refused_by_name(self):
        with mock.patch.dict(os.environ, {"TARGETS": "x86_64,mips64el-n32",
                                          "KERNELS": "bench-exit,bench-exit-stock"}), \
                mock.patch.object(knobs, "serving", lambda: "perf-gate"):
            with self.assertRaisesRegex(Fatal, "mips64el-n32: no bound measured yet for MIPS"):
                bench.cmd_perf_gate(None)

    def test_the_exit_release_counted_where_it_runs_replaces_the_bound(self):
        # Equal to stock passes; one instruction more on either kind fails,
        # whatever the create+exit averages say.
        ok = self.verdicts(counted(records(1, 1, 9000, 9000), 91, 130, hook=19),
                           counted(records(2, 2, 1000, 1000), 91, 130), "x86_64")
        self.assertEqual(ok, {"walk_uncontended <= stock": True,
                              "walk_contended <= stock": True,
                              "signal hook <= %d" % bench.SIGNAL_HOOK_BOUND: True,
                              "exit release, no list <= stock": True,
                              "exit release, empty list <= stock": True})
        bad = self.verdicts(counted(records(1, 1, 1000, 1000), 91, 131),
                            counted(records(2, 2, 1000, 1000), 91, 130), "x86_64")
        self.assertFalse(bad["exit release, empty list <= stock"])
        self.assertTrue(bad["exit release, no list <= stock"])
        bad = self.verdicts(counted(records(1, 1, 1000, 1000), 92, 100),
                            counted(records(2, 2, 1000, 1000), 91, 130), "x86_64")
        self.assertFalse(bad["exit release, no list <= stock"])

    def test_mainline_is_a_second_reference_with_the_unlock_paths(self):
        # Against mainline: the same walk and exit rules, and the unlock
        # ways of the 2026 ABI (stock has none, so they are not held
        # against it); one instruction more than mainline fails.
        def unlocks(recs, vdso, wake_robust):
            return recs + [{"path": "robust_unlock", "way": "vdso", "ns": vdso},
                           {"path": "robust_unlock", "way": "wake_robust", "ns": wake_robust}]
        series = unlocks(counted(records(1, 1, 1000, 1000), 91, 130, hook=19), 40, 900)
        stock = counted(records(2, 2, 1000, 1000), 91, 130)
        mainline = unlocks(counted(records(2, 2, 1000, 1000), 95, 140), 40, 899)
        rows = bench.gate(bench.summarize_method(
            {"series": {"x86_64": series}, "stock": {"x86_64": stock},
             "mainline": {"x86_64": mainline}}))
        v = {check: ok for _, check, _, _, ok in rows}
        self.assertTrue(v["walk_uncontended <= mainline"])
        self.assertTrue(v["exit release, empty list <= mainline"])
        self.assertTrue(v["unlock, vDSO try-unlock <= mainline"])
        self.assertFalse(v["unlock, FUTEX_WAKE|FUTEX_ROBUST_UNLOCK <= mainline"])
        self.assertNotIn("unlock, vDSO try-unlock <= stock", v)
        self.assertEqual(sum(c.startswith("signal hook") for c in v), 1)
        # Without mainline's boot there are no mainline rows at all.
        v = self.verdicts(series, stock, "x86_64")
        self.assertFalse([c for c in v if "mainline" in c])

    def test_an_x86_boot_without_the_count_fails_not_falls_back(self):
        # The counter did not run on x86 (a kernel without bench-exit):
        # that is no figure, not a reason to judge by the bound instead.
        v = self.verdicts(records(1, 1, 1000, 1000), records(2, 2, 1000, 1000), "x86_64")
        self.assertFalse(v["exit release, empty list <= stock"])
        self.assertFalse(v["exit release, no list <= stock"])
        self.assertNotIn("empty list - no list <= 100 (no exit counter)", v)

    def test_the_signal_hook_costs_a_bounded_number_of_instructions(self):
        bound = bench.SIGNAL_HOOK_BOUND
        check = "signal hook <= %d" % bound
        for target in ("x86_64", "i386"):
            ok = self.verdicts(counted(records(1, 1, 1000, 1000), 1, 1, hook=bound),
                               counted(records(2, 2, 1000, 1000), 1, 1), target)
            bad = self.verdicts(counted(records(1, 1, 1000, 1000), 1, 1, hook=bound + 1),
                                counted(records(2, 2, 1000, 1000), 1, 1), target)
            self.assertTrue(ok[check], target)
            self.assertFalse(bad[check], target)
            # An x86 kernel that did not count it: no figure, no pass.
            none = self.verdicts(counted(records(1, 1, 1000, 1000), 1, 1),
                                 counted(records(2, 2, 1000, 1000), 1, 1), target)
            self.assertFalse(none[check], target)
        # ARM has no hook: no rule, and the delivery's own cost is no gate.
        arm = self.verdicts(records(1, 1, 1000, 1000, signal=9999),
                            records(2, 2, 1000, 1000), "armhf")
        self.assertNotIn(check, arm)

    def test_the_new_unlock_ways_are_figures_of_the_series_alone(self):
        recs = records(1, 1, 1000, 1000) + [
            {"path": "robust_unlock", "way": w, "ns": v}
            for w, v in (("classic", 10), ("vdso", 12), ("wake", 400), ("wake_robust", 380))]
        f = bench.figures(recs)
        self.assertEqual((f["unlock_vdso_ns"], f["vdso_vs_classic"]), (12, 1.2))
        self.assertEqual(f["wake_robust_vs_wake"], 0.95)
        stock = bench.figures(records(2, 2, 1000, 1000))
        self.assertIsNone(stock["unlock_vdso_ns"])
        self.assertIsNone(stock["vdso_vs_classic"])
        self.assertNotIn("unlock_vdso_ns", bench.RATIO_KEYS)

    def test_a_stock_without_the_counter_fails_the_direct_rule(self):
        v = self.verdicts(counted(records(1, 1, 1000, 1000), 91, 100),
                          records(2, 2, 1000, 1000), "x86_64")
        self.assertFalse(v["exit release, empty list <= stock"])

    def test_a_missing_figure_fails(self):
        series = [r for r in records(1, 1, 1, 1) if r.get("contention") != "uncontended"]
        v = self.verdicts(series, records(2, 2, 1, 1))
        self.assertFalse(v["walk_uncontended <= stock"])


class Warnings(unittest.TestCase):
    LOG = ("$ make -C /t O=/b ARCH=x86_64 bzImage\n"
           "/c/src/series/linux-source-6.1/kernel/futex/robust.c:12:3: warning: "
           "unused variable 'x' [-Wunused-variable]\n"
           "<stdin>:1519:2: warning: #warning syscall set_robust_list not implemented\n"
           "vmlinux.o: warning: objtool: futex_exit_robust_list+0x4a: call to "
           "futex_wake() with UACCESS enabled\n"
           "  CC      kernel/fork.o\n")

    def test_locations_and_offsets_do_not_make_a_warning_new(self):
        got = kbuild.build_warnings(self.LOG)
        self.assertEqual(len(got), 3)
        moved = self.LOG.replace(":12:3:", ":40:3:").replace("+0x4a", "+0x9c").replace(
            "/c/src/series/", "/c/src/bisect/")
        self.assertEqual(kbuild.build_warnings(moved), got)
        self.assertNotEqual(kbuild.build_warnings(self.LOG.replace("'x'", "'y'")), got)


if __name__ == "__main__":
    unittest.main()
