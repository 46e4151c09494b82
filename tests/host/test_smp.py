"""Two CPUs and the preemption model (issue 38): how CPUS and PREEMPT
reach QEMU, the kernel builds and the guest's report."""
import os
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import compare, config, kbuild, ktap, mutate, pipeline, procs, qemu, targets
from rfmlib.targets import kernel_config, preempt_append


def run_with_meta(**meta):
    lines = ["KTAP version 1", "1..0"] + ["# rfm-%s: %s" % (k.replace("_", "-"), v)
                                          for k, v in meta.items()]
    return compare.GuestRun(target="x86_64", boot_status="complete",
                            run=ktap.parse("\n".join(lines) + "\n"), console=(),
                            console_seen=True, programs=(), seconds=1.0, detail="")


class Qemu(unittest.TestCase):
    def command(self, cpus, icount=False):
        t = targets.target("x86_64")
        return qemu.qemu_command(t, "/nonexistent/bzImage", "/nonexistent/i.cpio", "tcg",
                                 "tests", "c.log", "r.ktap", icount=icount, cpus=cpus)

    def test_one_cpu_is_the_command_line_of_before(self):
        cmd = self.command(1)
        self.assertIn("pc,accel=tcg", cmd)
        self.assertEqual(cmd[cmd.index("-smp") + 1], "1,sockets=1")
        self.assertNotIn("-accel", cmd)

    def test_two_cpus_run_in_threads_of_their_own_each_its_own_socket(self):
        cmd = self.command(2)
        self.assertEqual(cmd[cmd.index("-accel") + 1], "tcg,thread=multi")
        self.assertEqual(cmd[cmd.index("-smp") + 1], "2,sockets=2")
        self.assertIn("rfm.cpus=2", cmd[cmd.index("-append") + 1].split())

    def test_icount_counts_on_one_cpu_only(self):
        cmd = self.command(1, icount=True)
        self.assertEqual(cmd[cmd.index("-smp") + 1], "1,sockets=1")
        self.assertIn("-icount", cmd)
        with self.assertRaises(ValueError):
            self.command(2, icount=True)


class GuestVcpus(unittest.TestCase):
    """Each guest's vCPUs: CPUS=, the variant's minimum, one under -icount."""

    def guests(self, kernels, cpus, **how):
        p = pipeline.Pipeline(kernels, (targets.target("x86_64"),))
        p.initrds = {"lp64": (Path("/i.cpio"), ())}
        p.images = {(k, "x86_64"): Path("/k") for k in kernels}
        with mock.patch.dict(os.environ, {"CPUS": str(cpus)}):
            return {g.kernel: g.cpus for g in p.guests(Path("/out"), **how)}

    def test_the_negative_control_runs_its_races_on_two_cpus(self):
        self.assertEqual(self.guests(("series", "stock", "baseline"), 1),
                         {"series": 1, "stock": 1, "baseline": 2})
        self.assertEqual(self.guests(("series", "baseline"), 3), {"series": 3, "baseline": 3})

    def test_icount_boots_one_cpu_whatever_the_variant(self):
        self.assertEqual(self.guests(("baseline",), 2, icount=True), {"baseline": 1})

    def test_never_more_than_the_targets_machine_runs(self):
        malta = targets.target("mips64el")
        self.assertEqual(malta.max_cpus, 1)
        self.assertEqual(targets.guest_cpus("baseline", 1, malta), 1)
        self.assertEqual(targets.guest_cpus("series", 4, malta), 1)
        self.assertEqual(targets.guest_cpus("baseline", 1, targets.target("x86_64")), 2)


class BeyondTheMachine(unittest.TestCase):
    """A case that skips for want of CPUs its target's machine cannot have
    is "-" there, with the reason; anywhere else it stays a skip."""

    def cell(self, target, reason, status=ktap.SKIP):
        case = mock.Mock(status=status, reason=reason, obs={}, diag=[], attempts=())
        run = mock.Mock(target=target)
        return compare._cell(run, "smp.x", {"smp.x": case})

    def test_malta_cannot_have_a_second_cpu(self):
        cell = self.cell("mips64el", "1 CPU(s) online: the race needs 2 (CPUS=2)")
        self.assertEqual(cell["status"], compare.NA)
        self.assertIn("needs 2 CPUs: QEMU's Malta", cell["reason"])

    def test_a_machine_that_could_stays_a_skip(self):
        self.assertEqual(self.cell("x86_64", "1 CPU(s) online: the race needs 2 (CPUS=2)")
                         ["status"], ktap.SKIP)

    def test_other_skips_and_results_stay(self):
        self.assertEqual(self.cell("mips64el", "no PTRACE_SINGLESTEP")["status"], ktap.SKIP)
        self.assertEqual(self.cell("mips64el", "1 CPU(s) online: the race needs 2",
                                   status=ktap.FAIL)["status"], ktap.FAIL)


class Slots(unittest.TestCase):
    """LocalQemu's host threads: a guest of two vCPUs takes two."""

    def test_guests_start_in_turn_and_never_overbook_the_threads(self):
        slots, lock, held, most, order = procs.Slots(2), threading.Lock(), [0], [0], []

        def one(item):
            turn, need = item
            with slots.taken(turn, need):
                with lock:
                    held[0] += need
                    most[0] = max(most[0], held[0])
                    order.append(turn)
                time.sleep(0.02)
                with lock:
                    held[0] -= need
        procs.parallel(one, list(enumerate((1, 2, 1, 1, 2, 1))), 2)
        self.assertEqual(most[0], 2)
        self.assertEqual(order, [0, 1, 2, 3, 4, 5])

    def test_a_stopped_run_releases_the_waiters(self):
        slots = procs.Slots(1)
        with slots.taken(0, 1):
            procs._stopping.set()
            try:
                with self.assertRaises(procs.Interrupted):
                    with slots.taken(1, 1):
                        pass
            finally:
                procs._stopping.clear()


class PreemptModel(unittest.TestCase):
    def test_the_model_built_in(self):
        self.assertEqual(qemu.preempt_model("CONFIG_PREEMPT_NONE=y\n", ""), "none")
        self.assertEqual(qemu.preempt_model("CONFIG_PREEMPT=y\nCONFIG_PREEMPTION=y\n", ""),
                         "full")
        self.assertEqual(qemu.preempt_model("CONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT=y\n", ""),
                         "lazy")
        self.assertEqual(qemu.preempt_model("", ""), "")

    def test_a_dynamic_kernel_takes_the_command_lines(self):
        config = "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n"
        self.assertEqual(qemu.preempt_model(config, "quiet"), "dynamic-voluntary")
        self.assertEqual(qemu.preempt_model(config, "a preempt=full b"), "dynamic-full")


class KernelConfigs(unittest.TestCase):
    def test_unset_is_the_build_of_before(self):
        self.assertEqual(kernel_config("x86_64", "series"), targets.KERNEL_CONFIGS["x86_64"])
        self.assertEqual(kernel_config("x86_64", "series").build_name, "x86_64")

    def test_a_model_is_a_fragment_and_a_build_directory_of_its_own(self):
        kc = kernel_config("x86_64", "series", "full")
        self.assertEqual(kc.tiny_fragments[-1], "preempt-full.config")
        self.assertEqual(kc.build_name, "x86_64-preempt-full")
        for model in targets.PREEMPT_MODELS:
            self.assertTrue((config.KCONFIG / ("preempt-%s.config" % model)).exists(), model)

    def test_debians_dynamic_kernels_take_it_on_the_command_line(self):
        self.assertEqual(kernel_config("x86_64", "distro", "full"),
                         targets.KERNEL_CONFIGS["x86_64"])
        self.assertEqual(preempt_append("distro", "full"), "preempt=full")
        self.assertEqual(preempt_append("debian", "none"), "preempt=none")
        self.assertEqual(preempt_append("series", "full"), "")
        self.assertEqual(preempt_append("distro", None), "")

    def test_every_tinyconfig_kernel_is_smp(self):
        for name, kc in targets.KERNEL_CONFIGS.items():
            wanted = kbuild.requested_symbols(kbuild.fragment_paths(kc))
            if kc.arch == "arm64":
                continue    # always SMP (arch/arm64/Kconfig)
            self.assertEqual(wanted.get("CONFIG_SMP"), "y", name)


class GuestCpus(unittest.TestCase):
    def test_fewer_cpus_online_than_asked_fails_the_guest(self):
        self.assertEqual(compare.cpus_missing(run_with_meta(cpus_asked=2, cpus_online=1)),
                         "2 vCPU(s) asked, 1 online")
        self.assertEqual(compare.cpus_missing(run_with_meta(cpus_asked=2, cpus_online=2)), "")

    def test_a_run_that_does_not_say_is_not_judged(self):
        self.assertEqual(compare.cpus_missing(run_with_meta()), "")


class MutantCpus(unittest.TestCase):
    def test_the_retry_mutant_needs_two_cpus(self):
        m = mutate.parse_header(config.REPO / "tests" / "mutants"
                                / "cmpxchg-changed-value-accepted.patch")
        self.assertEqual(m.cpus, 2)
        self.assertFalse(m.equivalent)
        self.assertIn("smp.death_cmpxchg_races_waiters_bit", m.expect)

    def test_a_bad_count_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "x.patch"
            p.write_text("Rule: r\nExpect: a.b\nCpus: two\n\n--- a/f\n+++ b/f\n")
            with self.assertRaises(mutate.Fatal):
                mutate.parse_header(p)


if __name__ == "__main__":
    unittest.main()
