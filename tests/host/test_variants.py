"""Kernel variants with test-only patches (exec-window), and mutants of them."""
import shutil
import tempfile
import unittest
from pathlib import Path

from rfmlib import config, kbuild, mutate, sparse, targets, tree
from rfmlib.log import Fatal

DIFF = "--- a/fs/exec.c\n+++ b/fs/exec.c\n@@ -1 +1 @@\n-a\n+b\n"


class ExecWindow(unittest.TestCase):
    def test_the_series_then_its_own_patches(self):
        patches = tree.patches_for(targets.KERNEL_VARIANTS["exec-window"]["patches"])
        self.assertEqual(patches[:-1], tree.read_series())
        self.assertEqual(patches[-1].parent, config.PATCHES / "exec-window")

    def test_it_carries_the_series_and_asks_for_its_window(self):
        self.assertTrue(targets.has_series("exec-window"))
        self.assertFalse(targets.has_series("stock"))
        self.assertFalse(targets.has_series("debian"))
        self.assertIn("exec_window_ms=", targets.kernel_append("exec-window"))
        self.assertEqual(targets.kernel_append("series"), "")

    def test_an_empty_patch_directory_is_refused(self):
        with self.assertRaisesRegex(Fatal, "holds no patch"):
            tree.patches_for("all+no-such-dir")


class BenchExit(unittest.TestCase):
    def test_the_same_counter_on_the_series_and_on_stock(self):
        series = targets.PERF_GATE_KERNELS["series"]
        stock = targets.PERF_GATE_KERNELS["stock"]
        on_series = tree.patches_for(targets.KERNEL_VARIANTS[series]["patches"])
        on_stock = tree.patches_for(targets.KERNEL_VARIANTS[stock]["patches"])
        # The series, the exit counter stock gets too, then the counter of
        # the series' own signal hook, which stock does not have.
        n = len(tree.read_series())
        self.assertEqual(on_series[:n], tree.read_series())
        self.assertEqual(on_series[n:n + 1], on_stock)
        self.assertEqual(on_stock[0].parent, config.PATCHES / "bench-exit")
        self.assertEqual([p.parent for p in on_series[n + 1:]],
                         [config.PATCHES / "bench-signal"])
        self.assertTrue(targets.has_series(series))
        self.assertFalse(targets.has_series(stock))

    def test_mainline_gets_its_own_counter_in_its_own_slot(self):
        # 7.3's version of the counter, on mainline's tree, from mainline's
        # config: an incremental build in mainline's slot.
        kernel = targets.PERF_GATE_KERNELS["mainline"]
        v, m = targets.KERNEL_VARIANTS[kernel], targets.KERNEL_VARIANTS["mainline"]
        self.assertEqual([p.parent for p in tree.patches_for(v["patches"])],
                         [config.PATCHES / "bench-exit-mainline"])
        self.assertEqual(targets.variant_tree(kernel), targets.variant_tree("mainline"))
        self.assertEqual(targets.variant_slot(kernel), targets.variant_slot("mainline"))
        for name in targets.variant_configs(kernel):
            self.assertEqual(v["fragments"][name], m["fragments"][name])
        self.assertEqual(set(targets.variant_configs(kernel)), {"x86_64", "i386"})

    def test_an_unknown_base_or_directory_is_refused(self):
        with self.assertRaisesRegex(Fatal, "holds no patch"):
            tree.patches_for("none+no-such-dir")
        self.assertRaises(ValueError, tree.patches_for, "some+bench-exit")


class Distro(unittest.TestCase):
    def test_debians_config_is_part_of_the_key(self):
        kc = targets.KERNEL_CONFIGS["x86_64"]
        d = Path(tempfile.mkdtemp(prefix="rfm-base-"))
        self.addCleanup(shutil.rmtree, d)
        (d / "a").write_text("CONFIG_X86_5LEVEL=y\n")
        (d / "b").write_text("CONFIG_X86_5LEVEL=n\n")
        keys = {kbuild.kernel_key(kc, "t"), kbuild.kernel_key(kc, "t", (), d / "a"),
                kbuild.kernel_key(kc, "t", (), d / "b")}
        self.assertEqual(len(keys), 3)

    def test_debians_modules_are_left_out_not_built_in(self):
        from rfmlib import prebuilt
        text = "CONFIG_EXT4_FS=y\nCONFIG_AFS_FS=m\n# CONFIG_FOO is not set\nCONFIG_S=\"m\"\n"
        self.assertEqual(prebuilt.without_modules(text),
                         "CONFIG_EXT4_FS=y\n# CONFIG_AFS_FS is not set\n"
                         "# CONFIG_FOO is not set\nCONFIG_S=\"m\"\n")

    def test_the_pae_pair_is_debians_686_pae_flavour_on_i386_alone(self):
        for k in ("distro-pae", "distro-pae-stock"):
            v = targets.KERNEL_VARIANTS[k]
            self.assertEqual(v["base"], "debian")
            self.assertEqual(v["base_package"], {"i386": "linux-image-686-pae:i386"})
            self.assertEqual(set(v["fragments"]), {"i386"})
        self.assertTrue(targets.has_series("distro-pae"))
        self.assertFalse(targets.has_series("distro-pae-stock"))

    def test_the_distro_variants_start_from_debians_config(self):
        for k in ("distro", "distro-stock"):
            v = targets.KERNEL_VARIANTS[k]
            self.assertEqual(v["base"], "debian")
            self.assertEqual(set(v["fragments"]), {"x86_64", "i386"})
        self.assertTrue(targets.has_series("distro"))
        self.assertFalse(targets.has_series("distro-stock"))

    def test_la57_is_in_no_group(self):
        self.assertNotIn("x86_64-la57", targets.TARGET_GROUPS["x86"])
        self.assertNotIn("x86_64-la57", targets.TARGET_GROUPS["all"])
        self.assertEqual([t.name for t in targets.select_targets("x86_64-la57")],
                         ["x86_64-la57"])
        self.assertIn("+la57", targets.target("x86_64-la57").cpu)


class MutantKernel(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-mutants-"))
        self.addCleanup(shutil.rmtree, self.dir)

    def load(self, header):
        (self.dir / "m.patch").write_text("Rule: r\nExpect: death.x\n" + header + "\n" + DIFF)
        return mutate.load_catalogue(self.dir)[0]

    def test_series_unless_said(self):
        self.assertEqual(self.load("").kernel, "series")
        self.assertEqual(self.load("Kernel: exec-window").kernel, "exec-window")

    def test_only_a_variant_made_of_the_series(self):
        for bad in ("stock", "baseline", "debug", "nope"):
            with self.assertRaisesRegex(Fatal, "Kernel: %s" % bad):
                self.load("Kernel: %s" % bad)

    def test_the_catalogue_names_its_exec_window_mutants(self):
        catalogue = mutate.load_catalogue(config.REPO / "tests" / "mutants")
        windowed = {m.name for m in catalogue if m.kernel == "exec-window"}
        self.assertIn("exec-release-before-de_thread", windowed)


class Sparse(unittest.TestCase):
    def test_findings_without_line_numbers(self):
        log = ("$ make C=2 kernel/futex/robust.o\n"
               "  CHECK   kernel/futex/robust.c\n"
               "kernel/futex/robust.c:254:9: warning: context imbalance in 'f' - wrong count at exit\n"
               "fs/exec.c:12:1: error: bad thing\n")
        self.assertEqual(sparse.findings(log), {
            "kernel/futex/robust.c: warning: context imbalance in 'f' - wrong count at exit",
            "fs/exec.c: error: bad thing"})

    def test_the_same_finding_in_two_trees_is_one(self):
        series = ("/c/src/6.1.192-3/series/linux-source-6.1/fs/exec.c:1240:17: "
                  "warning: incorrect type in argument 1 (different address spaces)\n")
        stock = ("/c/src/6.1.192-3/pristine/linux-source-6.1/fs/exec.c:1229:17: "
                 "warning: incorrect type in argument 1 (different address spaces)\n")
        self.assertEqual(sparse.findings(series), sparse.findings(stock))
        self.assertEqual(sparse.findings(series), {
            "fs/exec.c: warning: incorrect type in argument 1 (different address spaces)"})

    def test_a_renamed_function_keeps_stock_s_finding(self):
        stock = sparse.findings("kernel/futex/pi.c:1101:5: warning: context imbalance "
                                "in 'futex_unlock_pi' - different lock contexts\n")
        series = sparse.findings("kernel/futex/pi.c:1101:12: warning: context imbalance "
                                 "in '__futex_unlock_pi' - different lock contexts\n")
        renames = sparse.load_renames(sparse.RENAMED.read_text())
        self.assertIn(("futex_unlock_pi", "__futex_unlock_pi"), renames)
        self.assertEqual(series - sparse.renamed(stock, renames), set())
        # Only the quoted name: a longer one that contains it is not it.
        other = sparse.findings("kernel/futex/pi.c:1:1: warning: x in "
                                "'futex_unlock_pi_foo'\n")
        self.assertEqual(sparse.renamed(other, renames), other)

    def test_the_series_c_files(self):
        sources = sparse.series_sources(tree.read_series())
        self.assertIn("kernel/futex/robust.c", sources)
        self.assertIn("fs/exec.c", sources)
        self.assertTrue(all(s.endswith(".c") for s in sources))
