"""Bad input: every knob is checked before any work, with one wording for
every command, and bad usage is one line and exit 2."""
import contextlib
import io
import os
import struct
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import bzimage as bzimage_header
from rfmlib import cli, knobs, targets
from rfmlib.log import Fatal, Usage

STARTED = 99   # the status of a command that got past the checks


class Started(Fatal):
    def __init__(self):
        super().__init__("started: the checks let it through", STARTED)

# Every command that boots or builds, as make calls them.
COMMANDS = ("run", "matrix-check", "shell", "kernels", "guest-selftest", "bench",
            "fuzz", "stress")


def bzimage(path, bits=64, protocol=(2, 15), loadflags=0x01, magic=b"HdrS"):
    """A file with an x86 boot protocol header and nothing else."""
    data = bytearray(0x1000)
    data[0x1FE:0x200] = b"\x55\xaa"
    data[0x202:0x206] = magic
    data[0x206], data[0x207] = protocol[1], protocol[0]
    data[0x211] = loadflags
    struct.pack_into("<H", data, 0x236, 0x1 if bits == 64 else 0)
    version = b"6.1.192 (test@host) #1\0"
    struct.pack_into("<H", data, 0x20E, 0x400)
    data[0x600:0x600 + len(version)] = version
    Path(path).write_bytes(bytes(data))
    return str(path)


class Env(unittest.TestCase):
    """Each test runs with only the knobs it sets (and its own out/cache)."""

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-knobs-"))
        self.addCleanup(__import__("shutil").rmtree, self.dir)
        clean = {k: v for k, v in os.environ.items() if k not in knobs.BY_NAME}
        clean.update(RFM_OUT=str(self.dir / "out"), RFM_CACHE=str(self.dir / "cache"))
        patcher = mock.patch.dict(os.environ, clean, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)

    def main(self, command, **env):
        """cli.main() with env; nothing may start: deps.ensure (the first
        thing every command does) ends it with status STARTED."""
        err = io.StringIO()
        with mock.patch.dict(os.environ, env), \
                mock.patch("rfmlib.deps.ensure", side_effect=Started()), \
                contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = cli.main([command])
        return status, err.getvalue()


class BadValues(Env):
    CASES = (
        ({"TARGET": "nope"}, ("shell",),
         "TARGET=nope: unknown target(s) nope; known: x86_64, x86_64-ia32, i386, x86_64-x32"),
        ({"TARGETS": "nope"}, ("run", "kernels", "fuzz"),
         "TARGETS=nope: unknown target(s) nope; known: x86_64, x86_64-ia32, i386, x86_64-x32"),
        ({"TARGETS": ","}, ("run",), "TARGETS=,: names no target"),
        ({"KERNELS": "nope"}, ("run", "bench", "stress"), "KERNELS=nope: unknown kernel(s) nope"),
        ({"KERNEL": "series,stock"}, ("shell",), "KERNEL=series,stock: names 2 kernels; want one"),
        ({"JOBS": "0"}, COMMANDS, "JOBS=0: not a whole number greater than 0"),
        ({"JOBS": "two"}, COMMANDS, "JOBS=two: not a whole number greater than 0"),
        ({"BOOT_TIMEOUT": "abc"}, ("run", "shell", "bench", "fuzz", "stress", "guest-selftest"),
         "BOOT_TIMEOUT=abc: not a whole number of seconds greater than 0"),
        ({"RUN_TIMEOUT": "0"}, ("run", "bench"),
         "RUN_TIMEOUT=0: not a whole number of seconds greater than 0"),
        ({"FUZZ_SECONDS": "1.5"}, ("fuzz",),
         "FUZZ_SECONDS=1.5: not a whole number of seconds greater than 0"),
        ({"FUZZ_ITERATIONS": "-3"}, ("fuzz",),
         "FUZZ_ITERATIONS=-3: not a whole number greater than 0"),
        ({"FUZZ_SEED": "x"}, ("fuzz",), "FUZZ_SEED=x: not a whole number of 0 or more"),
        ({"STRESS_SECONDS": "soon"}, ("stress",),
         "STRESS_SECONDS=soon: not a whole number of seconds greater than 0"),
        ({"ACCEL": "xen"}, ("run", "shell"), "ACCEL=xen: not one of tcg, kvm"),
        ({"V": "yes"}, ("run", "kernels"), "V=yes: not 0 or 1"),
        ({"GUEST_MEM": "lots"}, ("run",), "GUEST_MEM=lots: not a memory size"),
        ({"EXTRA": "/nonexistent-rfm"}, ("run", "shell"),
         "EXTRA=/nonexistent-rfm: no such directory"),
        ({"BZIMAGE": "/nonexistent-rfm"}, ("run", "shell", "kernels"),
         "BZIMAGE=/nonexistent-rfm: no such file"),
    )

    def test_one_line_and_exit_2_everywhere(self):
        for env, commands, want in self.CASES:
            for command in commands:
                with self.subTest(command=command, env=env):
                    status, err = self.main(command, **env)
                    self.assertEqual(status, 2, err)
                    self.assertEqual(err.count("\n"), 1, err)
                    self.assertTrue(err.startswith("error: " + want), err)

    def test_every_bad_knob_is_named(self):
        status, err = self.main("run", JOBS="0", BOOT_TIMEOUT="x")
        self.assertEqual(status, 2)
        self.assertEqual(err.splitlines(), [
            "error: JOBS=0: not a whole number greater than 0",
            "error: BOOT_TIMEOUT=x: not a whole number of seconds greater than 0"])

    def test_empty_means_the_default(self):
        # make exports unset variables empty
        self.assertEqual(knobs.problems("run"), [])
        with mock.patch.dict(os.environ, {"JOBS": "", "TARGETS": "", "BZIMAGE": ""}):
            self.assertEqual(knobs.problems("run"), [])
            self.assertEqual(knobs.get("JOBS"), os.cpu_count())
            self.assertEqual(knobs.get("TARGETS"), targets.select_targets("x86"))
            self.assertIsNone(knobs.get("BZIMAGE"))

    def test_each_default_is_in_the_table_and_read_as_a_value_is(self):
        # Every default reads without error, for every command that reads
        # the knob: a default is text the knob's reader accepts.
        for k in knobs.KNOBS:
            for command in k.commands:
                with self.subTest(knob=k.name, command=command), \
                        mock.patch.dict(os.environ, {k.name: ""}):
                    text = knobs.default_text(k, command)
                    if text is not None:
                        k.read(text)

    def test_a_command_has_its_own_default(self):
        env = {"KERNELS": "", "TARGETS": "", "RUN_TIMEOUT": "", "ACCEL": ""}
        self.addCleanup(knobs.serve, None)
        with mock.patch.dict(os.environ, env):
            for command, kernels, run_timeout in (
                    ("run", ("series",), 900),
                    ("matrix-check", ("series", "stock", "baseline"), 900),
                    ("bench", ("series", "stock", "bench-1m"), 1800),
                    ("fuzz", ("debug",), 900)):
                knobs.serve(command)
                self.assertEqual(knobs.get("KERNELS"), kernels, command)
                self.assertEqual(knobs.get("RUN_TIMEOUT"), run_timeout, command)
                self.assertIsNone(knobs.get("ACCEL"), command)   # the probe decides
            knobs.serve("merge")                 # the kernels the shards ran
            self.assertIsNone(knobs.get("KERNELS"))
            self.assertEqual(knobs.get("TARGETS"), targets.select_targets("x86"))
            knobs.serve("bisect-check")
            self.assertEqual(knobs.get("TARGETS"), targets.select_targets("all"))
            self.assertEqual(knobs.get("ACCEL"), "tcg")

    def test_the_table_shows_each_commands_default(self):
        text = knobs.table()
        self.assertIn("900 (bench, perf-gate: 1800)", text)
        self.assertIn("x86 (bisect-check, lava, upstream-check: all)", text)
        row = next(l for l in text.splitlines() if l.startswith("KERNELS "))
        self.assertIn("matrix-check, lava, lava-check: series,stock,baseline", row)
        self.assertIn("merge: -", row)

    def test_good_values(self):
        with mock.patch.dict(os.environ, {"JOBS": "3", "TARGETS": "i386,x86_64",
                                          "FUZZ_SEED": "0x10", "GUEST_MEM": "1G"}):
            self.assertEqual(knobs.problems("fuzz"), [])
            self.assertEqual(knobs.get("JOBS"), 3)
            self.assertEqual([t.name for t in knobs.get("TARGETS")], ["x86_64", "i386"])
            self.assertEqual(knobs.get("FUZZ_SEED"), 16)

    def test_a_knob_of_another_command_is_not_checked_there(self):
        status, err = self.main("report", FUZZ_SECONDS="x")
        self.assertEqual(status, 2)
        self.assertIn("no run to report", err)   # not the fuzz knob

    def test_a_near_miss_is_warned_about(self):
        err = io.StringIO()
        with mock.patch.dict(os.environ, {"TARGET": "i386"}), contextlib.redirect_stderr(err):
            knobs.check("run")
        self.assertEqual(err.getvalue(),
                         "warning: TARGET=i386 is ignored by run, which reads TARGETS\n")

    def test_every_knob_has_a_reader_a_meaning_and_readers(self):
        for k in knobs.KNOBS:
            with self.subTest(knob=k.name):
                self.assertTrue(callable(k.read) and k.about and k.commands)
                self.assertEqual(k.name.upper(), k.name)
        # docs/knobs.md shows the table as make knobs prints it.
        page = (Path(__file__).resolve().parents[2] / "docs" / "knobs.md").read_text()
        self.assertIn(knobs.table(markdown=True), page,
                      "docs/knobs.md: paste `scripts/rfm knobs --markdown`")


class KernelImages(Env):
    def test_the_header_is_read(self):
        info = bzimage_header.read_bzimage(bzimage(self.dir / "bz64"))
        self.assertEqual((info.protocol, info.bits, info.version),
                         ("2.15", 64, "6.1.192 (test@host) #1"))
        self.assertEqual(bzimage_header.read_bzimage(bzimage(self.dir / "bz32", bits=32)).bits, 32)

    def refused(self, env):
        status, err = self.main("run", **env)
        self.assertEqual(status, 2, err)
        self.assertEqual(err.count("\n"), 1, err)
        return err

    def test_text_is_not_a_bzimage(self):
        (self.dir / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n" * 200)
        err = self.refused({"BZIMAGE": str(self.dir / "passwd")})
        self.assertIn("not an x86 bzImage (no boot protocol header 'HdrS' at 0x202)", err)

    def test_an_elf_is_not_a_bzimage(self):
        (self.dir / "vmlinux").write_bytes(b"\x7fELF" + bytes(0x400))
        err = self.refused({"BZIMAGE": str(self.dir / "vmlinux")})
        self.assertIn("an ELF file (a vmlinux?), not a bzImage", err)

    def test_the_word_size_must_fit_the_targets(self):
        err = self.refused({"BZIMAGE": bzimage(self.dir / "bz32", bits=32)})
        self.assertIn("a 32-bit kernel (no XLF_KERNEL_64 in xloadflags); want a 64-bit one", err)
        self.assertIn("a 32-bit kernel goes in BZIMAGE32", err)
        err = self.refused({"BZIMAGE32": bzimage(self.dir / "bz64")})
        self.assertIn("a 64-bit kernel (xloadflags XLF_KERNEL_64); want a 32-bit one "
                      "(ARCH=i386) for i386", err)

    def test_old_protocol_and_zimage(self):
        err = self.refused({"BZIMAGE": bzimage(self.dir / "old", protocol=(2, 10))})
        self.assertIn("boot protocol 2.10: older than 2.12", err)
        err = self.refused({"BZIMAGE": bzimage(self.dir / "z", loadflags=0)})
        self.assertIn("a zImage", err)

    def test_every_target_needs_its_image(self):
        err = self.refused({"BZIMAGE": bzimage(self.dir / "bz64"), "TARGETS": "x86_64,i386"})
        self.assertEqual(err, "error: target i386 with the user kernel needs "
                              "BZIMAGE32=<a 32-bit bzImage>\n")
        status, err = self.main("shell", KERNEL="user", TARGET="i386")
        self.assertEqual((status, err), (2, "error: target i386 with the user kernel "
                                            "needs BZIMAGE32=<a 32-bit bzImage>\n"))

    def test_a_good_image_gets_past_the_checks(self):
        status, err = self.main("run", BZIMAGE=bzimage(self.dir / "bz64"))
        self.assertEqual(status, STARTED, err)


class Extra(Env):
    def test_a_directory_without_programs(self):
        (self.dir / "extra").mkdir()
        (self.dir / "extra" / "notes.txt").write_text("hello\n")
        status, err = self.main("run", EXTRA=str(self.dir / "extra"))
        self.assertEqual(status, 2)
        self.assertEqual(err, "error: EXTRA=%s: holds no ELF program (want static "
                              "programs: x86_64, i386, x32, arm64 or armhf)\n"
                         % (self.dir / "extra"))

    def test_no_program_for_the_chosen_targets(self):
        (self.dir / "extra").mkdir()
        elf = bytearray(64)
        elf[:4], elf[4] = b"\x7fELF", 1                   # 32-bit, i386, static
        struct.pack_into("<HH", elf, 16, 2, 3)
        (self.dir / "extra" / "prog32").write_bytes(bytes(elf))
        status, err = self.main("run", EXTRA=str(self.dir / "extra"), TARGETS="x86_64")
        self.assertEqual(status, 2)
        self.assertIn("no program for x86_64", err)


class Report(Env):
    def test_report_without_a_run(self):
        status, err = self.main("report")
        self.assertEqual(status, 2)
        self.assertIn("run.json: no run to report", err)


class Usage2(unittest.TestCase):
    def test_usage_is_a_fatal_with_status_2(self):
        self.assertEqual(Usage("x").status, 2)


if __name__ == "__main__":
    unittest.main()
