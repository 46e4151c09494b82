"""mutate.py: the catalogue format, and how a mutant's matrix is judged."""
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from rfmlib import config, mutate

shutil_which = shutil.which
from rfmlib.log import Fatal

from tests.host import util

DIFF = """--- a/kernel/futex/robust.c
+++ b/kernel/futex/robust.c
@@ -1 +1 @@
-	if (!IS_ALIGNED((unsigned long)uaddr, sizeof(*uaddr)))
+	if (0)
"""


class Catalogue(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-mutants-"))
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, name, header):
        (self.dir / name).write_text(header + "\n" + DIFF)

    def test_header_fields(self):
        self.write("walk-align.patch", "Rule: aligned words only\n"
                   "Expect: death.death_stops_at_misaligned_futex, fuzz.*\n")
        m = mutate.load_catalogue(self.dir)[0]
        self.assertEqual((m.name, m.rule, m.expect, m.equivalent),
                         ("walk-align", "aligned words only",
                          ("death.death_stops_at_misaligned_futex", "fuzz.*"), ""))

    def test_a_mutant_must_say_what_it_breaks_and_what_catches_it(self):
        self.write("a.patch", "Expect: x.y\n")
        with self.assertRaisesRegex(Fatal, "no 'Rule:'"):
            mutate.load_catalogue(self.dir)
        self.write("a.patch", "Rule: r\n")
        with self.assertRaisesRegex(Fatal, "no 'Expect:'"):
            mutate.load_catalogue(self.dir)
        self.write("a.patch", "Rule: r\nEquivalent: the same code at -O2\n")
        self.assertEqual(mutate.load_catalogue(self.dir)[0].equivalent,
                         "the same code at -O2")

    def test_targets_a_mutant_needs(self):
        self.write("a.patch", "Rule: r\nExpect: x\nTargets: x86_64-noia32\n")
        self.assertEqual(mutate.load_catalogue(self.dir)[0].targets, ("x86_64-noia32",))
        self.write("a.patch", "Rule: r\nExpect: x\nTargets: x86_65\n")
        with self.assertRaisesRegex(Fatal, "names no target x86_65"):
            mutate.load_catalogue(self.dir)

    def test_selection_and_bad_input(self):
        self.write("a.patch", "Rule: r\nExpect: x\n")
        self.write("b.patch", "Rule: r\nExpect: x\n")
        self.assertEqual([m.name for m in mutate.load_catalogue(self.dir, "b")], ["b"])
        with self.assertRaisesRegex(ValueError, "unknown mutant.*nope"):
            mutate.load_catalogue(self.dir, "a,nope")
        with self.assertRaisesRegex(Fatal, "not a directory"):
            mutate.load_catalogue(self.dir / "missing")
        (self.dir / "c.patch").write_text("Rule: r\nExpect: x\n")
        with self.assertRaisesRegex(Fatal, "has no diff"):
            mutate.load_catalogue(self.dir)

    def test_the_project_catalogue_loads(self):
        mutants = mutate.load_catalogue(config.REPO / "tests" / "mutants")
        self.assertGreaterEqual(len(mutants), 1)
        for m in mutants:
            self.assertTrue(m.expect or m.equivalent, m.name)

    def test_a_mutant_of_the_mails_names_mainline_with_them(self):
        mutants = mutate.load_catalogue(config.REPO / "tests" / "mutants-upstream")
        self.assertTrue(mutants and all(m.expect for m in mutants))
        self.assertEqual({m.kernel for m in mutants}, {"mainline-fix", "mainline-fix-window"})
        # mainline itself carries no mail: nothing of ours to mutate.
        self.write("a.patch", "Rule: r\nExpect: x\nKernel: mainline\n")
        with self.assertRaisesRegex(Fatal, "'Kernel: mainline' is not a variant"):
            mutate.load_catalogue(self.dir)


def matrix(series_runs):
    return util.matrix({"series": series_runs, "stock": util.complete_runs()},
                       kernels=("series", "stock"))


M = mutate.Mutant("m", Path("m.patch"), "a rule", ("smoke.death_one_lock",))


class Judge(unittest.TestCase):
    def test_a_green_matrix_means_the_mutant_survived(self):
        o = mutate.judge(M, matrix(util.complete_runs()), 1.0)
        self.assertEqual((o.result, o.killers), ("survived", []))
        self.assertTrue(mutate.failed(o))

    def test_a_failing_case_kills_it_and_is_named_with_its_target(self):
        o = mutate.judge(M, matrix(util.with_runs(util.complete_runs(), {
            "i386": util.guest_run("i386", "fail_i386")})), 1.0)
        self.assertEqual(o.result, "killed")
        self.assertIn({"case": "smoke.death_one_lock", "target": "i386", "why": "FAIL"},
                      o.killers)
        self.assertTrue(o.expected_killer)
        self.assertFalse(mutate.failed(o))

    def test_a_difference_from_stock_alone_kills_it(self):
        changed = {t: util.edited(t, "complete/" + t, "errno=EINVAL", "errno=EFAULT")
                   for t in util.TARGET_NAMES}
        o = mutate.judge(M, matrix(changed), 1.0)
        self.assertEqual(o.result, "killed")
        self.assertEqual({k["case"] for k in o.killers}, {"smoke.set_bad_length"})
        self.assertFalse(o.expected_killer)

    def test_a_panic_kills_it(self):
        o = mutate.judge(M, matrix(util.with_runs(util.complete_runs(), {
            "i386": util.guest_run("i386", "panic", boot="incomplete")})), 1.0)
        self.assertIn("(console)", {k["case"] for k in o.killers})
        self.assertIn("(guest run)", {k["case"] for k in o.killers})

    def test_a_mutant_of_a_reference_is_held_against_its_run_alone(self):
        # mainline-fix fails what deviations-mainline.txt names: the same
        # failure in its mutant is no sign; a changed status or
        # observation, a guest that stopped, are.
        failing = util.with_runs(util.complete_runs(), {
            "i386": util.guest_run("i386", "fail_i386")})
        targets = util.FIXTURE_TARGETS
        self.assertEqual(mutate.killers_against(failing, failing, targets, "mainline-fix"), [])
        found = mutate.killers_against(util.complete_runs(), failing, targets, "mainline-fix")
        self.assertIn({"case": "smoke.death_one_lock", "target": "i386",
                       "why": "vs mainline-fix: status PASS vs FAIL"}, found)
        stopped = util.with_runs(failing, {
            "i386": util.guest_run("i386", "panic", boot="incomplete")})
        cases = {k["case"] for k in mutate.killers_against(stopped, failing, targets,
                                                           "mainline-fix")}
        self.assertTrue({"(console)", "(guest run)"} <= cases)

    def test_equivalent_mutants(self):
        eq = mutate.Mutant("e", Path("e.patch"), "r", (), "cannot be told apart")
        self.assertEqual(mutate.judge(eq, matrix(util.complete_runs()), 1).result,
                         "equivalent")
        killed = mutate.judge(eq, matrix(util.with_runs(util.complete_runs(), {
            "i386": util.guest_run("i386", "fail_i386")})), 1)
        self.assertEqual(killed.result, "killed (marked equivalent)")
        self.assertTrue(mutate.failed(killed))

    def test_score_and_report(self):
        killed = mutate.judge(M, matrix(util.with_runs(util.complete_runs(), {
            "i386": util.guest_run("i386", "fail_i386")})), 2.0)
        survived = mutate.judge(M, matrix(util.complete_runs()), 3.0)
        eq = mutate.judge(mutate.Mutant("e", Path("e.patch"), "r", (), "why"),
                          matrix(util.complete_runs()), 1.0)
        not_run = mutate.Outcome(M, mutate.NOT_RUN, [], 0.0,
                                 "needs TARGETS to include x86_64-noia32")
        self.assertEqual(mutate.score([killed, survived, eq, not_run]), (1, 2))
        self.assertFalse(mutate.failed(not_run))
        text = mutate.render([killed, survived, eq, not_run], "cat", 6.0)
        self.assertIn("mutation score: 1 of 2 killed (50%), 1 equivalent, 1 not run: "
                      "their targets are not in TARGETS (counted apart)", text)
        self.assertIn("SURVIVED: m: a rule", text)
        with tempfile.TemporaryDirectory() as d:
            mutate.write(Path(d), [killed], "cat", 2.0, {})
            doc = json.loads((Path(d) / "mutate.json").read_text())
        self.assertEqual(doc["score"], {"killed": 1, "counted": 1, "percent": 100.0})
        self.assertEqual(doc["mutants"][0]["result"], "killed")


class BisectSmoke(unittest.TestCase):
    """bisect-check: what smoke must show at each step of the series."""

    def test_the_x86_64_table_is_read_from_the_diffs(self):
        from rfmlib import bisect, tree
        series = tree.read_series()
        wired = [bisect.x86_64_table_wired(series[:n]) for n in range(len(series) + 1)]
        self.assertTrue(wired[0])                  # the pristine tree has the calls
        self.assertFalse(wired[1])                 # patch 1 removes them
        first = wired.index(True, 1)
        self.assertFalse(any(wired[1:first]))
        self.assertTrue(all(wired[first:]))        # once back, they stay
        self.assertIn("x86_64", series[first - 1].name)

    def test_smoke_verdicts(self):
        from rfmlib import bisect, targets
        t = targets.target("x86_64")
        working = util.guest_run("x86_64", "complete/x86_64")
        enosys = util.guest_run("x86_64", "baseline/x86_64")
        self.assertTrue(bisect.smoke_verdict(working, t, wired=True)[0])
        self.assertTrue(bisect.smoke_verdict(enosys, t, wired=False)[0])
        self.assertFalse(bisect.smoke_verdict(enosys, t, wired=True)[0])
        self.assertFalse(bisect.smoke_verdict(working, t, wired=False)[0])

    def test_smoke_alone_is_judged_whatever_else_the_image_holds(self):
        # The bisect boot loads the initramfs of the whole contract but
        # runs smoke alone: the other programs are not MISS. (Before this
        # was so, every step from the one that wires up x86_64 failed.)
        from rfmlib import bisect, targets
        t = targets.target("x86_64")
        image = ("compat_int80", "death", "glibc", "smoke", "syscall", "wake")
        working = util.guest_run("x86_64", "complete/x86_64", programs=image)
        enosys = util.guest_run("x86_64", "baseline/x86_64", programs=image)
        self.assertEqual(bisect.smoke_verdict(working, t, wired=True), (True, "smoke passes"))
        self.assertTrue(bisect.smoke_verdict(enosys, t, wired=False)[0])
        self.assertFalse(bisect.smoke_verdict(enosys, t, wired=True)[0])

    def test_arm_alone_builds_and_boots_nothing_of_x86(self):
        # TARGETS=arm: arm64 and arm after every step, no smoke column
        # (there is no x86_64 kernel to boot), and no problem counted
        # for the boot that was never meant to happen.
        from types import SimpleNamespace
        from unittest import mock
        from rfmlib import bisect, deps, kbuild, pipeline, tree
        built = []
        series = [SimpleNamespace(name="0001-a.patch"), SimpleNamespace(name="0002-b.patch")]
        with mock.patch.dict("os.environ", {"TARGETS": "arm"}), \
                mock.patch.object(deps, "ensure"), \
                mock.patch.object(tree, "read_series", return_value=series), \
                mock.patch.object(kbuild, "build",
                                  side_effect=lambda slot, p, kc, **_: built.append((slot, kc))
                                  or Path("/nonexistent")), \
                mock.patch.object(kbuild, "kernel_warnings", return_value=set()), \
                mock.patch.object(pipeline.Pipeline, "build_initramfs") as initramfs, \
                mock.patch.object(pipeline.qemu, "boot") as boot, \
                mock.patch("sys.stdout", new_callable=io.StringIO) as out:
            self.assertEqual(bisect.cmd_bisect_check(None), 0)
        self.assertEqual(sorted(set(kc for _, kc in built)), ["arm", "arm64"])
        self.assertEqual(len(built), 2 + 2 * 2)       # stock, then two steps
        initramfs.assert_not_called()
        boot.assert_not_called()
        self.assertNotIn("smoke", out.getvalue().split("\n", 2)[1])
        self.assertIn("2 steps, 4 builds, 0 smoke boots: 0 problem(s)", out.getvalue())


class IdenticalImages(unittest.TestCase):
    """make mutate skips the boots of a mutant whose kernel image is the
    series' own: sound only if builds are reproducible and the comparison
    is exact."""

    def test_builds_pin_what_a_kernel_embeds_about_its_build(self):
        from unittest import mock
        from rfmlib import kbuild
        env = kbuild.make_env()
        for var in ("KBUILD_BUILD_TIMESTAMP", "KBUILD_BUILD_USER", "KBUILD_BUILD_HOST",
                    "KBUILD_BUILD_VERSION"):
            self.assertIn(var, env)
        fake = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, fake)
        (fake / "links").mkdir()
        (fake / "links" / "gcc").symlink_to(shutil.which("true"))
        with mock.patch.object(kbuild, "CCACHE_BIN", fake / "links"), \
                mock.patch.object(shutil, "which", side_effect=lambda n, path=None:
                                  "/usr/bin/%s" % n), \
                mock.patch.object(config, "cache_dir", return_value=fake / "cache"):
            env = kbuild.make_env()
        # By PATH, not CC=: the objects' command lines stay as they were.
        wrappers = fake / "cache" / "tools" / ("ccache-wrappers-%d" % kbuild.BUILD_RECIPE)
        self.assertTrue(env["PATH"].startswith("%s:" % wrappers))
        self.assertEqual(sorted(p.name for p in wrappers.iterdir()), ["gcc"])
        self.assertTrue(env["CCACHE_DIR"].startswith(str(fake / "cache")))
        self.assertNotIn("CC", env.keys() - os.environ.keys())

    def test_a_ccache_link_further_on_path_is_no_compiler(self):
        """Wrapping a ccache link would run the wrapper again, for ever."""
        from unittest import mock
        from rfmlib import kbuild
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        for sub in ("links", "other", "bin"):
            (d / sub).mkdir()
        ccache = shutil.which("ccache") or "/usr/bin/ccache"
        (d / "links" / "gcc").symlink_to(ccache)
        (d / "links" / "cc").symlink_to(ccache)
        (d / "other" / "gcc").symlink_to(ccache)          # someone's own ccache link
        (d / "bin" / "gcc").write_text("#!/bin/sh\n")
        (d / "bin" / "cc").write_text("#!/bin/sh\n")
        for p in (d / "bin").iterdir():
            p.chmod(0o755)
        path = "%s:%s" % (d / "other", d / "bin")
        with mock.patch.object(kbuild, "CCACHE_BIN", d / "links"), \
                mock.patch.object(shutil, "which", side_effect=lambda n, path=None:
                                  ccache if n == "ccache" else
                                  shutil_which(n, path=path)), \
                mock.patch.dict(os.environ, {"PATH": path}), \
                mock.patch.object(config, "cache_dir", return_value=d / "cache"):
            wrappers = kbuild.ccache_wrappers()
            self.assertEqual(sorted(p.name for p in wrappers.iterdir()), ["cc"])
            self.assertIn(str(d / "bin" / "cc"), (wrappers / "cc").read_text())
            (wrappers / "cc").chmod(0o644)              # a cache restored without modes
            (wrappers / "gone").write_text("")          # a compiler since removed
            kbuild.ccache_wrappers()
            self.assertTrue(os.access(wrappers / "cc", os.X_OK))
            self.assertFalse((wrappers / "gone").exists())
            # A cross gcc unpacked into the cache (MIPS, PowerPC, s390) is
            # wrapped by its name; another build's call leaves it.
            cross = d / "cache" / "toolchains" / "tc" / "bin" / "s390x-linux-gnu-gcc"
            cross.parent.mkdir(parents=True)
            cross.write_text("#!/bin/sh\n")
            kbuild.ccache_wrappers(str(cross))
            self.assertIn(str(cross), (wrappers / "s390x-linux-gnu-gcc").read_text())
            kbuild.ccache_wrappers()
            self.assertTrue((wrappers / "s390x-linux-gnu-gcc").exists())

    def test_assembler_sources_bypass_ccache(self):
        """ccache cannot see what .incbin takes in (piggy.S takes the
        compressed kernel): an assembler source goes to the compiler."""
        from rfmlib import kbuild
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        script = d / "gcc"
        script.write_text(kbuild.CCACHE_WRAPPER % {"real": "echo REAL", "ccache": "echo CCACHE"})
        script.chmod(0o755)

        def run(*args):
            return subprocess.run([str(script)] + list(args), capture_output=True,
                                  text=True, check=True).stdout.split()

        self.assertEqual(run("-c", "arch/x86/boot/compressed/piggy.S", "-o", "piggy.o"),
                         ["REAL", "-c", "arch/x86/boot/compressed/piggy.S", "-o", "piggy.o"])
        self.assertEqual(run("-c", "kernel/futex/robust.c")[:4],
                         ["CCACHE", "echo", "REAL", "-c"])
        self.assertEqual(run("-Wp,-MMD,a/.piggy.o.d", "-c", "x.s")[0], "REAL")

    def test_a_new_build_recipe_keys_every_kernel_anew(self):
        from unittest import mock
        from rfmlib import kbuild, targets
        kc = targets.KERNEL_CONFIGS["x86_64"]
        now = kbuild.kernel_key(kc, "t")
        with mock.patch.object(kbuild, "BUILD_RECIPE", kbuild.BUILD_RECIPE + 1):
            self.assertNotEqual(now, kbuild.kernel_key(kc, "t"))

    def test_a_salt_keys_a_kernel_apart_and_no_salt_keeps_the_old_key(self):
        from rfmlib import kbuild, targets
        kc = targets.KERNEL_CONFIGS["x86_64"]
        plain = kbuild.kernel_key(kc, "t")
        self.assertEqual(plain, kbuild.kernel_key(kc, "t", salt=""))
        self.assertNotEqual(plain, kbuild.kernel_key(kc, "t", salt="pinned"))

    def test_identical_means_every_byte(self):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        for name, data in (("a", b"\x00" * 4096), ("b", b"\x00" * 4096),
                           ("c", b"\x00" * 4095 + b"\x01")):
            (d / name).mkdir()
            (d / name / "bzImage").write_bytes(data)
        self.assertTrue(mutate.identical_image(d / "a", d / "b"))
        self.assertFalse(mutate.identical_image(d / "a", d / "c"))


if __name__ == "__main__":
    unittest.main()
