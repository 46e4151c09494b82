"""Build helpers: kconfig symbol checks, ELF kinds of EXTRA programs,
patch bookkeeping, and the target/kernel selection."""
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import config, guest, kbuild, knobs, targets, toolchain, tree
from rfmlib.log import Fatal

from tests.host import util

LP64, ILP32 = targets.USERLANDS["lp64"], targets.USERLANDS["ilp32"]

ELFCLASS64, ELFCLASS32, EM_X86_64, EM_386 = 2, 1, 62, 3
C_PROGRAM = "int main(void) { return 0; }\n"


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)

    def write(self, name, content):
        path = self.dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return path


class KconfigSymbols(TempDirTest):
    def test_requested_symbols(self):
        common = self.write("common.config", "# Console\nCONFIG_PRINTK=y\n"
                            "# CONFIG_MODULES is not set\nCONFIG_FUTEX=y\n\n"
                            'CONFIG_CMDLINE="rfm.mode=tests"\n')
        arch = self.write("x86_64.config", "CONFIG_64BIT=y\nCONFIG_FUTEX=n\n")
        self.assertEqual(kbuild.requested_symbols([common, arch]), {
            "CONFIG_PRINTK": "y", "CONFIG_MODULES": "n", "CONFIG_FUTEX": "n",
            "CONFIG_CMDLINE": '"rfm.mode=tests"', "CONFIG_64BIT": "y"})

    def test_project_fragments_ask_for_futex(self):
        paths = kbuild.fragment_paths(targets.KERNEL_CONFIGS["x86_64"])
        self.assertEqual(kbuild.requested_symbols(paths).get("CONFIG_FUTEX"), "y")

    def test_missing_symbols(self):
        dotconfig = ("CONFIG_PRINTK=y\n# CONFIG_MODULES is not set\n"
                     "CONFIG_FUTEX=m\nCONFIG_HZ=250\n")
        want = {"CONFIG_PRINTK": "y",       # =y: present
                "CONFIG_MODULES": "n",      # =n via "is not set"
                "CONFIG_SMP": "n",          # =n via absence
                "CONFIG_FUTEX": "y",        # value mismatch
                "CONFIG_HZ": "1000",        # value mismatch
                "CONFIG_SERIAL_8250": "y"}  # absent
        self.assertEqual(kbuild.missing_symbols(dotconfig, want), [
            "CONFIG_FUTEX=y (got m)", "CONFIG_HZ=1000 (got 250)",
            "CONFIG_SERIAL_8250=y (got n)"])

    def test_nothing_missing(self):
        self.assertEqual(kbuild.missing_symbols("CONFIG_A=y\n", {"CONFIG_A": "y"}), [])

    def test_not_set_is_not_the_wanted_y(self):
        self.assertEqual(kbuild.missing_symbols("# CONFIG_FUTEX is not set\n",
                                                {"CONFIG_FUTEX": "y"}),
                         ["CONFIG_FUTEX=y (got n)"])


def compile_c(out, *flags):
    """gcc the trivial program to `out`; None if this gcc cannot."""
    src = out.with_suffix(".c")
    src.write_text(C_PROGRAM)
    r = subprocess.run(["gcc", *flags, "-o", str(out), str(src)],
                       capture_output=True, text=True)
    src.unlink()
    return out if r.returncode == 0 else None


class ElfPrograms(unittest.TestCase):
    """Small programs compiled once for the class, in a temporary dir."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc"):
            raise unittest.SkipTest("no gcc on this host")
        cls._tmp = tempfile.TemporaryDirectory()
        cls.bin = Path(cls._tmp.name)
        cls.static64 = compile_c(cls.bin / "static64", "-static", "-m64")
        cls.static32 = compile_c(cls.bin / "static32", "-static", "-m32")
        cls.dynamic64 = compile_c(cls.bin / "dynamic64", "-m64")
        cls.object64 = compile_c(cls.bin / "object64.o", "-c", "-m64")
        if cls.static64 is None or cls.dynamic64 is None:
            cls._tmp.cleanup()
            raise unittest.SkipTest("gcc cannot build static -m64 programs here")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def need_m32(self):
        if self.static32 is None:
            self.skipTest("gcc -static -m32 fails here (no 32-bit libc: "
                          "apt-get install gcc-multilib)")

    def extra_dir(self, *programs, others=()):
        """A fresh EXTRA directory holding copies of `programs`."""
        d = Path(tempfile.mkdtemp(dir=self.bin))
        for p in programs:
            shutil.copy2(p, d / p.name)
        for name, content in others:
            (d / name).write_text(content)
        return d

    def test_static_64(self):
        self.assertEqual(guest.elf_kind(self.static64), (ELFCLASS64, EM_X86_64, True))

    def test_static_pie_is_static(self):
        pie = compile_c(self.bin / "static_pie64", "-static-pie", "-fPIE", "-m64")
        if pie is None:
            self.skipTest("gcc -static-pie fails here")
        self.assertEqual(guest.elf_kind(pie), (ELFCLASS64, EM_X86_64, True))

    def test_static_32(self):
        self.need_m32()
        self.assertEqual(guest.elf_kind(self.static32), (ELFCLASS32, EM_386, True))

    def test_dynamic_64(self):
        self.assertEqual(guest.elf_kind(self.dynamic64), (ELFCLASS64, EM_X86_64, False))

    def test_not_elf(self):
        script = self.bin / "run.sh"
        script.write_text("#!/bin/sh\nexec /tests/smoke\n")
        self.assertIsNone(guest.elf_kind(script))

    def test_elf_kinds_table_matches_what_gcc_builds(self):
        self.assertEqual(guest.elf_kind(self.static64)[:2], LP64.elf)
        self.need_m32()
        self.assertEqual(guest.elf_kind(self.static32)[:2], ILP32.elf)

    def test_extra_programs_by_word_size(self):
        self.need_m32()
        d = self.extra_dir(self.static64, self.static32,
                           others=[("README", "how to build these\n")])
        (d / "subdir").mkdir()
        self.assertEqual(guest.extra_programs(d, LP64), [("static64", d / "static64")])
        self.assertEqual(guest.extra_programs(str(d), ILP32),
                         [("static32", d / "static32")])

    def test_no_extra_dir(self):
        self.assertEqual(guest.extra_programs(None, LP64), [])
        self.assertEqual(guest.extra_programs("", ILP32), [])

    def test_extra_dir_must_exist(self):
        with self.assertRaisesRegex(Fatal, "is not a directory"):
            guest.extra_programs(self.bin / "nonexistent", LP64)

    def test_dynamic_program_is_taken(self):
        d = self.extra_dir(self.static64, self.dynamic64)
        self.assertEqual(guest.extra_programs(d, LP64), [
            ("dynamic64", d / "dynamic64"), ("static64", d / "static64")])
        self.assertEqual(guest.extra_programs(d, ILP32), [])

    def test_bug_object_file_is_not_a_program(self):
        """BUG: elf_kind ignores e_type, so a relocatable object (no
        program headers, hence no PT_INTERP) in EXTRA=DIR counts as a
        static program and lands in /tests, where exec fails."""
        d = self.extra_dir(self.static64, self.object64)
        self.assertEqual(guest.extra_programs(d, LP64), [("static64", d / "static64")])


FORMAT_PATCH = """\
From 3f1c2a7 Mon Sep 17 00:00:00 2001
From: Some One <some.one@example.org>
Subject: [PATCH 2/3] futex: move the robust list walk to its own file

The walk moves from kernel/futex/core.c to kernel/futex/robust.c; the
old header is gone (see a/b testing notes).
---
 include/linux/futex_robust_old.h |  9 ---------
 kernel/futex/Makefile            |  2 +-
 kernel/futex/robust.c            | 12 ++++++++++++
 3 files changed, 13 insertions(+), 10 deletions(-)

diff --git a/include/linux/futex_robust_old.h b/include/linux/futex_robust_old.h
deleted file mode 100644
index 1111111..0000000
--- a/include/linux/futex_robust_old.h
+++ /dev/null
@@ -1,2 +0,0 @@
-/* old */
-#define FUTEX_ROBUST_OLD 1
diff --git a/kernel/futex/Makefile b/kernel/futex/Makefile
index 2222222..3333333 100644
--- a/kernel/futex/Makefile
+++ b/kernel/futex/Makefile
@@ -1,3 +1,3 @@
 # SPDX-License-Identifier: GPL-2.0
-obj-y += core.o syscalls.o pi.o requeue.o waitwake.o
+obj-y += core.o syscalls.o pi.o requeue.o waitwake.o robust.o
diff --git a/kernel/futex/robust.c b/kernel/futex/robust.c
new file mode 100644
index 0000000..4444444
--- /dev/null
+++ b/kernel/futex/robust.c
@@ -0,0 +1,2 @@
+// SPDX-License-Identifier: GPL-2.0
+#include "futex.h"
--
2.39.2
"""


class Patches(TempDirTest):
    def test_touched_files(self):
        patch = self.write("0002-move.patch", FORMAT_PATCH)
        self.assertEqual(tree.touched_files(patch), {
            "include/linux/futex_robust_old.h",   # deleted
            "kernel/futex/Makefile",              # changed
            "kernel/futex/robust.c"})             # created

    def test_patch_key_follows_the_diffs_and_their_order(self):
        a = self.write("0001-a.patch", FORMAT_PATCH)
        b = self.write("0002-b.patch", FORMAT_PATCH.replace("robust.o", "robust.o walk.o"))
        key = tree.patch_key([a, b])
        self.assertEqual(len(key), 16)
        self.assertEqual(tree.patch_key([a, b]), key)
        self.assertNotEqual(tree.patch_key([b, a]), key)
        self.assertNotEqual(tree.patch_key([a]), key)
        a.write_text(FORMAT_PATCH + "\n")
        self.assertNotEqual(tree.patch_key([a, b]), key)

    def test_patch_key_ignores_changelog_subject_and_name(self):
        a = self.write("0001-a.patch", FORMAT_PATCH)
        key = tree.patch_key([a])
        self.assertIn("Subject: [PATCH", FORMAT_PATCH)
        reworded = (FORMAT_PATCH.replace("Subject: [PATCH", "Subject: [PATCH v2", 1)
                    .replace("The walk moves", "It moves", 1))
        self.assertNotEqual(reworded.replace("v2", ""), FORMAT_PATCH)
        self.assertEqual(tree.patch_key([self.write("0001-renamed.patch", reworded)]), key)

    def series(self, text, *patches):
        for name in patches:
            self.write(name, FORMAT_PATCH)
        if text is not None:
            self.write("series", text)
        return mock.patch.object(config, "PATCHES", self.dir)

    def test_read_series_in_quilt_order(self):
        with self.series("# the series\n0002-b.patch\n\n0001-a.patch  # first? no\n",
                         "0001-a.patch", "0002-b.patch"):
            self.assertEqual(tree.read_series(),
                             [self.dir / "0002-b.patch", self.dir / "0001-a.patch"])

    def test_read_series_names_a_missing_patch(self):
        with self.series("0001-a.patch\n0009-gone.patch\n", "0001-a.patch"):
            with self.assertRaisesRegex(Fatal, "0009-gone.patch"):
                tree.read_series()

    def test_no_series_file(self):
        with self.series(None):
            self.assertEqual(tree.read_series(), [])

    def test_patches_for_each_variant(self):
        with self.series("0001-a.patch\n0002-b.patch\n", "0001-a.patch", "0002-b.patch"):
            self.assertEqual(tree.patches_for("all"),
                             [self.dir / "0001-a.patch", self.dir / "0002-b.patch"])
            self.assertEqual(tree.patches_for("first"), [self.dir / "0001-a.patch"])
            self.assertEqual(tree.patches_for("none"), [])
            self.assertRaises(ValueError, tree.patches_for, "some")

    def test_empty_series_has_no_baseline(self):
        with self.series("# nothing yet\n"):
            self.assertIsNone(tree.patches_for("first"))
            self.assertEqual(tree.patches_for("all"), [])


def names(selected):
    return [t.name for t in selected]


class Selection(unittest.TestCase):
    def test_the_x86_targets_by_default(self):
        # The default is the knob table's, and only there.
        with mock.patch.dict(os.environ, {"TARGETS": ""}):
            self.assertEqual(names(knobs.get("TARGETS")),
                             ["x86_64", "x86_64-ia32", "i386", "x86_64-x32", "i386-pentium3"])
        self.assertRaisesRegex(ValueError, "names no target", targets.select_targets, "")

    def test_targets_in_table_order(self):
        self.assertEqual(names(targets.select_targets("i386,x86_64")), ["x86_64", "i386"])
        self.assertEqual(names(targets.select_targets(" i386  x86_64-ia32 ")),
                         ["x86_64-ia32", "i386"])

    def test_unknown_target(self):
        with self.assertRaisesRegex(ValueError, "riscv64.*known: x86_64, x86_64-ia32, i386"
                                    ".*groups: x86, arm, mips, ppc, s390, be, all"):
            targets.select_targets("x86_64,riscv64")

    def test_groups(self):
        names = lambda spec: [t.name for t in targets.select_targets(spec)]
        x86 = ["x86_64", "x86_64-ia32", "i386", "x86_64-x32", "i386-pentium3"]
        arm = ["arm64", "arm64-aarch32", "armhf"]
        mips = ["mips64el", "mips64el-n32", "mips64el-o32", "mips64", "mips64-n32", "mips64-o32"]
        ppc = ["ppc64", "ppc64-ppc32"]
        s390 = ["s390x", "s390x-s390"]
        self.assertEqual(names("x86"), x86)
        self.assertEqual(names("arm"), arm)
        self.assertEqual(names("mips"), mips)
        self.assertEqual(names("ppc"), ppc)
        self.assertEqual(names("s390"), s390)
        self.assertEqual(names("be"), mips[3:] + ppc + s390)
        self.assertEqual(names("all"), x86 + arm + mips + ppc + s390)
        self.assertEqual(names("arm,i386"), ["i386"] + arm)

    def test_a_tree_without_an_abi_cannot_run_its_targets(self):
        # 7.3 removed s390's 31-bit compat: mainline cannot boot that init.
        s390 = targets.target("s390x-s390")
        self.assertIn("ENOEXEC", targets.variant_lacks_abi("mainline", s390))
        self.assertIsNone(targets.variant_lacks_abi("series", s390))
        self.assertIsNone(targets.variant_lacks_abi("mainline", targets.target("s390x")))

    def test_bisect_configs_follow_targets(self):
        # Unset: every config, ARM included. A group or a target narrows
        # it to those kernels, and x86_64 brings its no-IA32 build along.
        configs = lambda spec: targets.bisect_configs(targets.select_targets(spec))
        self.assertEqual(targets.bisect_configs(), targets.BISECT_CONFIGS)
        self.assertEqual(set(targets.BISECT_CONFIGS),
                         {t.kconfig for t in targets.TARGETS} | {"x86_64-noia32"})
        self.assertEqual(configs("x86"), ("x86_64", "x86_64-noia32", "i386"))
        self.assertEqual(configs("arm"), ("arm64", "arm"))
        self.assertEqual(configs("mips"), ("mips64el", "mips64"))
        self.assertEqual(configs("ppc"), ("ppc64",))
        self.assertEqual(configs("s390"), ("s390x",))
        self.assertEqual(configs("be"), ("mips64", "ppc64", "s390x"))
        self.assertEqual(configs("x86_64-x32"), ("x86_64", "x86_64-noia32"))
        self.assertEqual(configs("i386-pentium3,armhf"), ("i386", "arm"))
        self.assertEqual(configs("all"), targets.BISECT_CONFIGS)

    def test_kernels(self):
        self.assertEqual(targets.select_kernels("", ("series",)), ("series",))
        self.assertEqual(targets.select_kernels("baseline stock,series", ()),
                         ("series", "stock", "baseline"))
        with self.assertRaisesRegex(ValueError, "upstream"):
            targets.select_kernels("series,upstream", ())

    def test_the_two_ilp32_targets_share_an_abi(self):
        abi = {t.name: t.abi for t in targets.TARGETS}
        self.assertEqual(abi["x86_64-ia32"], abi["i386"])
        self.assertNotEqual(abi["x86_64"], abi["i386"])
        self.assertEqual(abi["x86_64-x32"], abi["i386"])
        self.assertEqual([targets.target(n).user.cflag for n in util.TARGET_NAMES],
                         ["-m64", "-m32", "-m32"])
        self.assertEqual(targets.target("x86_64-x32").user.cflag, "-mx32")
        # Both ARM 32-bit targets, compat and native, are of the ILP32
        # group; arm64 is LP64 like x86_64.
        self.assertEqual(abi["arm64-aarch32"], abi["i386"])
        self.assertEqual(abi["armhf"], abi["i386"])
        self.assertEqual(abi["arm64"], abi["x86_64"])
        self.assertEqual(targets.target("arm64-aarch32").kconfig, "arm64")
        self.assertRaises(KeyError, targets.target, "riscv64")


if __name__ == "__main__":
    unittest.main()


class ArmTargets(TempDirTest):
    """The ARM rows of the table: cross-built programs of the ELF kind the
    table says, and QEMU command lines with the virt machine's ports."""

    def test_elf_kinds_match_what_clang_builds(self):
        src = self.write("p.c", C_PROGRAM)
        for name in ("arm64", "armhf"):
            user = targets.USERLANDS[name]
            out = self.dir / name
            r = subprocess.run(user.compiler() + ["-static", "-o", str(out), str(src)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                self.skipTest("%s cannot build here: %s" % (" ".join(user.compiler()),
                                                             r.stderr[-200:]))
            self.assertEqual(guest.elf_kind(out), user.elf + (True,), name)

    def command(self, name, kernel_dir):
        from rfmlib import qemu
        t = targets.target(name)
        return t, qemu.qemu_command(t, kernel_dir / "bzImage", self.dir / "u.cpio", "tcg",
                                    "tests", self.dir / "console.log",
                                    self.dir / "results.ktap")

    def test_virt_ports_and_command_line(self):
        kdir = self.dir / "k"
        kdir.mkdir()
        self.write("u.cpio", "cpio")
        for name in ("arm64", "arm64-aarch32", "armhf"):
            t, cmd = self.command(name, kdir)
            line = " ".join(cmd)
            self.assertEqual(cmd[0], "qemu-system-arm" if name == "armhf"
                             else "qemu-system-aarch64")
            self.assertIn("-machine virt,accel=tcg", line)
            self.assertNotEqual(t.cpu, "host")
            self.assertIn("-serial file:%s" % (self.dir / "console.log"), line)
            self.assertIn("virtconsole,chardev=hvc0", line)
            self.assertIn("file,id=hvc0,path=%s" % (self.dir / "results.ktap"), line)
            append = cmd[cmd.index("-append") + 1]
            self.assertIn("console=ttyAMA0", append)
            self.assertIn("rfm.results=/dev/hvc0", append)
            self.assertNotIn("tsc", append)
            self.assertEqual(cmd[cmd.index("-initrd") + 1], str(self.dir / "u.cpio"))
        t, cmd = self.command("x86_64", kdir)
        append = cmd[cmd.index("-append") + 1]
        self.assertIn("console=ttyS0", append)
        self.assertIn("rfm.results=/dev/ttyS1", append)
        self.assertEqual(cmd.count("-serial"), 2)

    def test_modules_of_a_prebuilt_kernel_follow_the_image(self):
        kdir = self.dir / "k"
        (kdir / "modules").mkdir(parents=True)
        (kdir / "modules" / "01-virtio_mmio.ko").write_bytes(b"\x7fELF mmio")
        (kdir / "modules" / "02-virtio_console.ko").write_bytes(b"\x7fELF console")
        tool = self.dir / "cache" / "tools" / "gen_init_cpio"
        tool.parent.mkdir(parents=True)
        # A stand-in for the kernel's gen_init_cpio: prints its spec.
        tool.write_text("#!/bin/sh\ncat \"$1\"\n")
        tool.chmod(0o755)
        cpio = self.write("u.cpio", "USERLAND\n")
        with mock.patch.object(config, "cache_dir", lambda: self.dir / "cache"):
            out = guest.initrd_for(kdir, cpio)
            self.assertEqual(guest.initrd_for(kdir, cpio), out)     # cached
            self.assertEqual(guest.initrd_for(self.dir, cpio), cpio)  # no modules/
        text = out.read_text()
        self.assertTrue(text.startswith("USERLAND\n"), text)
        self.assertLess(text.index("01-virtio_mmio.ko"), text.index("02-virtio_console.ko"))
        self.assertIn("file /lib/modules/rfm/01-virtio_mmio.ko", text)


class MipsTargets(TempDirTest):
    """The MIPS rows: Debian's cross gcc from the cache, one compiler for
    three ABIs; Malta's two UARTs; one CPU."""

    def fake_toolchain(self, with_binutils=True):
        triple = targets.MIPS64EL_TRIPLE
        root = self.dir / "tc"
        (root / "bin").mkdir(parents=True)
        for tool in ("gcc", "as", "ld") if with_binutils else ("gcc",):
            (root / "bin" / ("%s-%s" % (triple, tool))).write_text("")
        return mock.patch.object(toolchain, "_root", lambda t: root), root, triple

    def test_one_compiler_for_three_abis(self):
        patch, root, triple = self.fake_toolchain()
        with patch, mock.patch.object(toolchain, "_link_runtime", lambda r, t: None):
            got = {u: toolchain.user_compiler(targets.USERLANDS[u])
                   for u in ("mips-n64", "mips-n32", "mips-o32")}
            make = toolchain.kernel_make_args(targets.KERNEL_CONFIGS["mips64el"])
        gcc = str(root / "bin" / ("%s-gcc" % triple))
        self.assertEqual(got, {"mips-n64": [gcc, "-mabi=64"], "mips-n32": [gcc, "-mabi=n32"],
                               "mips-o32": [gcc, "-mabi=32"]})
        # The tools by name: kbuild.make_env() puts bin/ (behind ccache's
        # wrapper of its gcc) on make's PATH.
        self.assertEqual(make, ["CROSS_COMPILE=%s-" % triple])
        with patch, mock.patch.object(toolchain, "_link_runtime", lambda r, t: None), \
                mock.patch.object(kbuild, "ccache_wrappers", lambda cross_gcc=None: None):
            env = kbuild.make_env(targets.KERNEL_CONFIGS["mips64el"])
        self.assertTrue(env["PATH"].startswith(str(root / "bin") + ":"))
        # The others keep theirs.
        self.assertEqual(toolchain.user_compiler(targets.USERLANDS["ilp32"]), ["gcc", "-m32"])
        self.assertEqual(toolchain.kernel_make_args(targets.KERNEL_CONFIGS["x86_64"]), [])

    def test_missing_binutils_is_one_clear_error(self):
        patch, _, triple = self.fake_toolchain(with_binutils=False)
        with patch, mock.patch.object(toolchain, "_link_runtime", lambda r, t: None):
            with self.assertRaisesRegex(Fatal, "binutils-%s: run `make deps`" % triple):
                toolchain.gcc(triple)

    def test_elf_kinds_of_both_byte_orders(self):
        # The ELF reader reads big-endian headers too, and says so.
        src = self.write("p.c", C_PROGRAM)
        for name in ("mips-n64", "mips-o32", "mipsbe-n64", "mipsbe-n32"):
            user = targets.USERLANDS[name]
            out = self.dir / name
            try:
                cc = toolchain.user_compiler(user)
            except Fatal as e:
                self.skipTest("no %s toolchain here: %s" % (user.gcc_triple, e))
            r = subprocess.run(cc + ["-static", "-o", str(out), str(src)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                self.skipTest("%s cannot build here: %s" % (" ".join(cc), r.stderr[-200:]))
            self.assertEqual(guest.elf_kind(out), user.elf + (True,), name)

    def test_malta_ports_and_one_cpu(self):
        from rfmlib import qemu
        kdir = self.dir / "k"
        kdir.mkdir()
        self.write("u.cpio", "cpio")
        t = targets.target("mips64el-o32")
        cmd = qemu.qemu_command(t, kdir / "bzImage", self.dir / "u.cpio", "tcg", "tests",
                                self.dir / "console.log", self.dir / "results.ktap", cpus=1)
        self.assertEqual(cmd[0], "qemu-system-mips64el")
        self.assertEqual(cmd.count("-serial"), 2)   # the PIIX4's ttyS0 and ttyS1
        self.assertIn("rfm.results=/dev/ttyS1", " ".join(cmd))
        self.assertEqual(t.max_cpus, 1)

    def test_pseries_hypervisor_consoles(self):
        """pseries's hvc ports are its -serial ones, in order, not virtio
        consoles as on virt (whose guests call theirs hvc too)."""
        from rfmlib import qemu
        kdir = self.dir / "k"
        kdir.mkdir()
        self.write("u.cpio", "cpio")
        t = targets.target("ppc64-ppc32")
        cmd = qemu.qemu_command(t, kdir / "vmlinux", self.dir / "u.cpio", "tcg", "tests",
                                self.dir / "console.log", self.dir / "results.ktap", cpus=2,
                                coverage=self.dir / "gcov.txt")
        self.assertEqual(cmd[0], "qemu-system-ppc64")
        self.assertEqual(cmd.count("-serial"), 3)   # hvc0, hvc1, hvc2
        self.assertNotIn("virtconsole", " ".join(cmd))
        self.assertIn("console=hvc0", " ".join(cmd))
        self.assertIn("rfm.results=/dev/hvc1", " ".join(cmd))
        arm = qemu.qemu_command(targets.target("arm64"), kdir / "Image", self.dir / "u.cpio",
                                "tcg", "tests", self.dir / "c", self.dir / "r")
        self.assertIn("virtconsole,chardev=hvc0", " ".join(arm))


class OutDirLock(TempDirTest):
    def test_a_second_writer_is_refused_with_a_way_out(self):
        from rfmlib import cli
        with mock.patch.dict("os.environ", {"RFM_OUT": str(self.dir / "out")}):
            with cli.out_dir_lock():
                with self.assertRaises(Fatal) as e:
                    with cli.out_dir_lock():
                        pass
                self.assertIn("RFM_OUT=", str(e.exception))
            with cli.out_dir_lock():   # free again once the first one ends
                pass

    def test_every_command_that_writes_out_takes_the_lock(self):
        from rfmlib import cli
        self.assertTrue({"run", "matrix-check", "bench", "fuzz", "stress"} <= cli.WRITES_OUT)
