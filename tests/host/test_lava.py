"""LAVA: the jobs make lava writes, and the logs make lava-import reads.

The fixture is the log of a real lava-run of the series on x86_64; the
variants (a failing case, a skip, a panic, a lab that never booted the
guest) are made from it, and each must come back as the local run would
report it: never a pass."""
import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import compare, lava, pipeline, targets
from tests.host import util

LOG = (util.FIXTURES / "lava" / "series--x86_64.log").read_text()
X86_64 = targets.target("x86_64")
PROGRAMS = ("compat_int80", "death", "glibc", "smoke", "syscall", "wake")


def target_line(msg, dt="2026-12-05T02:41:56.000000"):
    return json.dumps({"dt": dt, "lvl": "target", "msg": msg}) + "\n"


def console_of(log):
    """The guest's console as LAVA's monitors see it: \\r\\n line ends."""
    return lava.guest_from_log(log)[0].replace("\n", "\r\n")


def monitor(console, programs=PROGRAMS):
    """Run the monitors over a console as lava-run's pexpect does: each
    waits for its start, then takes whichever of its end and its case
    pattern comes first in what follows (the end on a tie), until its
    end. ({program: [(case, result)]}, {program: text it covered})."""
    found, covered, pos = {}, {}, 0
    for mon in lava.monitors(programs):
        start = re.compile(mon["start"]).search(console, pos)
        if start is None:
            break
        pos, cases = start.end(), []
        while True:
            rest = console[pos:]
            end = re.compile(mon["end"]).search(rest)
            case = re.compile(mon["pattern"]).search(rest)
            if case and (end is None or case.start() < end.start()):
                cases.append((case.group("test_case_id"),
                              mon["fixupdict"][case.group("result")]))
                pos += case.end()
                continue
            covered[mon["name"]] = console[start.end():pos + (end.start() if end else 0)]
            pos += end.start() if end else len(rest)
            break
        found[mon["name"]] = cases
    return found, covered


def old_order(console):
    """A console as init printed it before KUnit's order: each program's
    "# Subtest:" line, then the program's own version line."""
    return re.sub(r"    KTAP version 1\r\n(    # Subtest: [^\r]*\r\n)(?!    KTAP)",
                  r"\1    KTAP version 1\r\n", console)


def run_of(log, d):
    console, boot = lava.guest_from_log(log)
    lava.write_guest(d, console, boot)
    return pipeline.load_guest_run(d, "x86_64", boot.status, boot.seconds, boot.detail,
                                   PROGRAMS)


class Logs(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)

    def matrix(self, log):
        run = run_of(log, self.dir / "g")
        return run, compare.build_matrix({"series": {"x86_64": run}}, (X86_64,), ("series",))

    def cell(self, m, case):
        (row,) = [r for r in m["kernels"]["series"]["cases"] if r["case"] == case]
        return row["cells"]["x86_64"]["status"]

    def test_the_real_log_is_a_complete_green_guest(self):
        run, m = self.matrix(LOG)
        self.assertEqual(run.boot_status, "complete")
        self.assertEqual(len(run.run.cases()), 75)
        self.assertEqual(run.console, [])
        self.assertEqual(m["summary"]["exit_status"], 0)

    def test_lavacli_raw_logs_read_the_same(self):
        raw = "".join("- " + l + "\n" for l in LOG.splitlines())
        self.assertEqual(lava.guest_from_log(raw)[0], lava.guest_from_log(LOG)[0])

    def with_case_line(self, line):
        """The log with compat_int80's second case reported as `line`."""
        log = LOG.replace('"msg": "    ok 2 int80_get_reads_compat_head"',
                          '"msg": "    %s"' % line, 1)
        self.assertNotEqual(log, LOG)
        return log

    def test_a_failing_case_fails(self):
        _, m = self.matrix(self.with_case_line("not ok 2 int80_get_reads_compat_head"))
        self.assertEqual(self.cell(m, "compat_int80.int80_get_reads_compat_head"), "FAIL")
        self.assertEqual(m["summary"]["exit_status"], 1)

    def test_a_skipped_case_is_a_skip_never_a_pass(self):
        _, m = self.matrix(self.with_case_line(
            "ok 2 int80_get_reads_compat_head # SKIP no int80"))
        self.assertEqual(self.cell(m, "compat_int80.int80_get_reads_compat_head"), "SKIP")

    def test_a_guest_that_panicked_is_a_failed_guest_not_a_lab_error(self):
        lines = LOG.splitlines(keepends=True)
        cut = next(i for i, l in enumerate(lines) if "# Subtest: death" in l)
        log = "".join(lines[:cut + 3]) + target_line(
            "Kernel panic - not syncing: Fatal exception") + json.dumps(
            {"dt": "2026-12-05T02:41:57.000000", "lvl": "error",
             "msg": "Connection closed"}) + "\n"
        run, m = self.matrix(log)
        self.assertEqual(run.boot_status, "incomplete")
        self.assertTrue(run.console, "the console scan must name the panic")
        self.assertEqual(m["summary"]["exit_status"], 1)

    def test_a_job_the_lab_never_booted_is_not_a_pass(self):
        log = "".join(l + "\n" for l in LOG.splitlines() if '"lvl": "target"' not in l)
        run, m = self.matrix(log)
        self.assertEqual(run.boot_status, "qemu-error")
        self.assertNotEqual(m["summary"]["exit_status"], 0)
        self.assertFalse([r for r in m["kernels"]["series"]["cases"]
                          if r["cells"]["x86_64"]["status"] == "PASS"])

    def test_the_lab_timing_out_is_a_timeout(self):
        lines = LOG.splitlines(keepends=True)
        cut = next(i for i, l in enumerate(lines) if "# Subtest: glibc" in l)
        log = "".join(lines[:cut]) + json.dumps(
            {"dt": "2026-12-05T03:00:00.000000", "lvl": "error",
             "msg": "lava-test-monitor timed out after 900 seconds"}) + "\n"
        run, m = self.matrix(log)
        self.assertEqual(run.boot_status, "timeout")
        self.assertNotEqual(m["summary"]["exit_status"], 0)


class Jobs(unittest.TestCase):
    def guest(self, target_name, programs=PROGRAMS):
        t = targets.target(target_name)
        return pipeline.Guest("series", t, Path("/k"), Path("/i.cpio"), tuple(programs),
                              Path("/out"), append="rfm.timeout=300", run_timeout=900)

    def test_monitors_find_what_the_ktap_parser_finds(self):
        # LAVA's own per-case results come from the monitors: run their
        # patterns over the console as pexpect would, and they must give
        # the parser's verdicts, a skip included.
        console = lava.guest_from_log(LOG)[0].replace("\n", "\r\n")
        console = console.replace("    ok 2 int80_get_reads_compat_head\r\n",
                                  "    ok 2 int80_get_reads_compat_head # SKIP why\r\n")
        found = {}
        for mon in lava.monitors(PROGRAMS):
            start = re.search(mon["start"], console)
            end = re.compile(mon["end"]).search(console, start.end())
            for m in re.finditer(mon["pattern"], console[start.end():end.start()]):
                found["%s.%s" % (mon["name"], m.group("test_case_id"))] = \
                    mon["fixupdict"][m.group("result")]
        self.assertEqual(len(found), 75)
        self.assertEqual(found["compat_int80.int80_get_reads_compat_head"], "skip")
        self.assertEqual(set(found.values()), {"pass", "skip"})

    def test_each_monitor_ends_where_the_next_programs_block_starts(self):
        # KUnit's order: the next block starts at its version line, before
        # its "# Subtest:" line; no line of it is in this program's part.
        console = console_of(LOG)
        found, covered = monitor(console)
        self.assertEqual(list(found), sorted(PROGRAMS))
        self.assertEqual(sum(len(c) for c in found.values()), 75)
        self.assertEqual(found["wake"], [("death_wake_rules", "pass")])
        for name, nxt in zip(sorted(PROGRAMS), sorted(PROGRAMS)[1:]):
            with self.subTest(program=name):
                part = covered[name]
                self.assertNotIn("KTAP version", part)
                self.assertNotIn("# Subtest:", part)
                self.assertTrue(part.endswith("\r\nok %d %s\r\n" % (
                    sorted(PROGRAMS).index(name) + 1, name)), part[-200:])
                after = console[console.index(part) + len(part):]
                self.assertTrue(after.startswith(
                    "    KTAP version 1\r\n    # Subtest: %s\r\n" % nxt), after[:80])
        self.assertTrue(covered["wake"].endswith("ok 6 wake\r\n"))

    def test_monitors_read_an_older_console_and_a_kernel_line_between_the_same(self):
        console = console_of(LOG)
        found, _ = monitor(console)
        old = old_order(console)
        self.assertNotEqual(old, console)
        self.assertNotIn("    KTAP version 1\r\n    # Subtest:", old)
        self.assertEqual(monitor(old)[0], found)
        between = console.replace(
            "    KTAP version 1\r\n    # Subtest: smoke\r\n",
            "    KTAP version 1\r\n[    1.234567] random: crng init done\r\n"
            "    # Subtest: smoke\r\n", 1)
        self.assertNotEqual(between, console)
        self.assertEqual(monitor(between)[0], found)

    def test_monitors_follow_inits_order_and_end_at_completion(self):
        mons = lava.monitors(("wake", "death", "smoke"))
        self.assertEqual([m["name"] for m in mons], ["death", "smoke", "wake"])
        self.assertIn("smoke", mons[0]["end"])
        self.assertIn("rfm\\-complete", mons[-1]["end"])

    def test_every_target_gets_its_arch_console_and_machine(self):
        for t in targets.TARGETS:
            job = lava.job(self.guest(t.name), "file:///k", "file:///r")
            ctx = job["context"]
            # The arch whose QEMU LAVA's template starts (arm64's is aarch64).
            self.assertEqual("qemu-system-%s" % {"arm64": "aarch64"}.get(ctx["arch"], ctx["arch"]),
                             t.qemu)
            self.assertTrue(ctx["no_kvm"])
            ramdisk = job["actions"][0]["deploy"]["images"]["ramdisk"]["image_arg"]
            # One serial stream: the results go to the console.
            self.assertIn("console=%s" % t.console, ramdisk)
            self.assertIn("rfm.results=/dev/%s" % t.console, ramdisk)
            self.assertIn("rfm.timeout=300", ramdisk)
            self.assertIn(" quiet", ramdisk)
            settings = " ".join(ctx["extra_options"] + [ctx.get("cpu", ""),
                                                         ctx.get("machine", "")])
            self.assertIn(t.cpu, settings)
            self.assertIn("accel=tcg", settings)
            if t.kernel_args:
                self.assertIn(t.kernel_args, ramdisk)

    def test_the_yaml_reads_back_as_the_job(self):
        import yaml
        job = lava.job(self.guest("i386-pentium3"), "file:///k", "file:///r")
        self.assertEqual(yaml.safe_load(lava.to_yaml(job)), job)

    def test_a_log_name_is_a_job_name(self):
        self.assertEqual(lava.split_name(lava.job_name("series", "x86_64-ia32")),
                         ("series", "x86_64-ia32"))
        with self.assertRaises(Exception):
            lava.split_name("series-x86_64")


if __name__ == "__main__":
    unittest.main()


class LabArches(unittest.TestCase):
    """Which targets the lab's qemu device type can boot, read from its
    template: Debian 12's (lava-server 2023.01) has mips64 (big-endian),
    no mips64el."""

    TEMPLATE = ("{% set qemu_misc_architectures = [\n'alpha', 's390x'] %}\n\n"
                "available_architectures:\n- arm64\n- arm\n- x86_64\n- i386\n- mips64\n"
                "{% for arch in qemu_misc_architectures %}\n- {{ arch }}\n{% endfor %}\n\n"
                "actions:\n- not-an-arch\n")

    def test_the_template_decides(self):
        with tempfile.TemporaryDirectory() as d:
            Path(d, "qemu.jinja2").write_text(self.TEMPLATE)
            with mock.patch.object(lava, "device_types", lambda: Path(d)):
                self.assertEqual(lava.qemu_arches(),
                                 {"arm64", "arm", "x86_64", "i386", "mips64", "alpha", "s390x"})
                can = {t.name: lava.lab_can_boot(t) for t in targets.TARGETS}
        self.assertTrue(all(can[n] for n in ("x86_64", "i386", "arm64-aarch32", "armhf")))
        # qemu-system-mips64 is big-endian: LAVA boots the mips64 targets only.
        self.assertEqual({n for n in targets.TARGET_GROUPS["mips"] if can[n]},
                         set(targets.TARGET_GROUPS["be"]) & set(targets.TARGET_GROUPS["mips"]))
        # LAVA's arch for the ppc64 kernel is its QEMU's (ppc64): not in this template.
        self.assertFalse(any(can[n] for n in targets.TARGET_GROUPS["ppc"]))

    def test_pairs_cross_two_sources(self):
        """lava-check merges a local shard with a LAVA one: one target per
        kernel config, or two ABIs of the only one; a lone target has none."""
        from rfmlib import lab
        pick = targets.select_targets
        with tempfile.TemporaryDirectory() as d:
            Path(d, "qemu.jinja2").write_text(self.TEMPLATE)
            with mock.patch.object(lava, "device_types", lambda: Path(d)):
                names = {s: [t.name for t in lab.lava_pairs(pick(s))]
                         for s in ("x86", "arm", "arm64,arm64-aarch32", "armhf")}
        self.assertEqual(names["x86"], ["x86_64", "i386"])
        self.assertEqual(names["arm"], ["arm64", "armhf"])
        self.assertEqual(names["arm64,arm64-aarch32"], ["arm64", "arm64-aarch32"])
        self.assertEqual(names["armhf"], ["armhf"])
