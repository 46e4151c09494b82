"""Users' own programs: the ELF reader, shared libraries for dynamically
linked programs, the NAME.m64/.m32/.mx32 convention of EXTRA=DIR, and
what a guest reports about them (fixtures user_programs/, many_programs/)."""
import dataclasses
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import pipeline, compare, elf, guest, report, sharedlibs, targets
from rfmlib.compare import NA
from rfmlib.ktap import FAIL, MISS, PASS
from rfmlib.log import Fatal, Usage

from tests.host import util

USERS = targets.USERLANDS
# The four targets user_programs/ was captured on (the table may hold more).
ALL_TARGETS = targets.select_targets("x86_64,x86_64-ia32,i386,x86_64-x32")
PROGRAM = "int main(void) { return 0; }\n"
LIBRARY = "int answer(void) { return 42; }\n"
USES_LIBRARY = "int answer(void);\nint main(void) { return answer() != 42; }\n"


# The ABIs whose loader and libc are the host's own (multilib, multiarch).
# A cross ABI's come from its cross libc's directory (/usr/<triple>/lib),
# and are placed at the loader's path in the image: not covered here.
HOST_USERS = [u for u in USERS.values() if u.x86]


def gcc(out, source, *flags, link=(), cc="gcc"):
    """Compile `source` text to `out` (linked with `link` after it); None
    if this host's compiler `cc` (gcc, or clang for a cross ABI) cannot."""
    src = Path(str(out) + ".c")
    src.write_text(source)
    r = subprocess.run([cc, *flags, "-o", str(out), str(src), *link],
                       capture_output=True, text=True)
    src.unlink()
    return Path(out) if r.returncode == 0 else None


def resolve_in_image(closure, path):
    """Where `path` leads in the image a Closure describes, or None."""
    parts = path.strip("/").split("/")
    current = ""
    for i, part in enumerate(parts):
        here = current + "/" + part
        if here in closure.links:
            target = os.path.normpath(os.path.join(current or "/", closure.links[here]))
            return resolve_in_image(closure, "/".join([target] + parts[i + 1:]))
        if i < len(parts) - 1 and here not in closure.dirs:
            return None
        current = here
    return current


class Built(unittest.TestCase):
    """Programs compiled once per class in a temporary directory."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc"):
            raise unittest.SkipTest("no gcc on this host")
        cls._tmp = tempfile.TemporaryDirectory()
        cls.bin = Path(cls._tmp.name)
        cls.dynamic = {u.name: gcc(cls.bin / ("dyn." + u.suffix), PROGRAM, u.cflag, cc=u.cc)
                       for u in USERS.values()}
        cls.static64 = gcc(cls.bin / "static64", PROGRAM, "-static", "-m64")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def need(self, user):
        if self.dynamic[user] is None:
            self.skipTest("%s %s cannot link a dynamic program here"
                          % (USERS[user].cc, USERS[user].cflag))
        return self.dynamic[user]

    def fresh_dir(self):
        return Path(tempfile.mkdtemp(dir=self.bin))


class ElfReader(Built):
    def test_dynamic_programs_name_their_loader_and_libc(self):
        loaders = {"lp64": "/lib64/ld-linux-x86-64.so.2", "ilp32": "/lib/ld-linux.so.2",
                   "x32": "/libx32/ld-linux-x32.so.2"}
        for user in HOST_USERS:
            with self.subTest(user=user.name):
                found = elf.read(self.need(user.name))
                self.assertEqual(found.kind, user.elf)
                self.assertEqual(found.interp, loaders[user.name])
                self.assertIn("libc.so.6", found.needed)

    def test_static_program_has_no_interpreter(self):
        found = elf.read(self.static64)
        self.assertIsNone(found.interp)
        self.assertFalse(found.dynamic)
        self.assertEqual(found.needed, [])

    def test_runpath_rpath_and_soname(self):
        for user in ("lp64", "ilp32"):
            self.need(user)
            with self.subTest(user=user):
                flag = USERS[user].cflag
                d = self.fresh_dir()
                lib = gcc(d / "libanswer.so.1", LIBRARY, flag, "-shared", "-fPIC",
                          "-Wl,-soname,libanswer.so.1")
                self.assertEqual(elf.read(lib).soname, "libanswer.so.1")
                for dtags, field in (("--enable-new-dtags", "runpath"),
                                     ("--disable-new-dtags", "rpath")):
                    prog = gcc(d / ("prog" + field), USES_LIBRARY, flag,
                               "-Wl,%s,-rpath,$ORIGIN/lib:/opt/x" % dtags, link=[str(lib)])
                    found = elf.read(prog)
                    self.assertEqual(getattr(found, field), ["$ORIGIN/lib", "/opt/x"])
                    self.assertEqual(found.needed[0], "libanswer.so.1")

    def test_not_a_program(self):
        script = self.bin / "script.sh"
        script.write_text("#!/bin/sh\n")
        self.assertIsNone(elf.read(script))
        obj = gcc(self.bin / "object.o", PROGRAM, "-c")
        self.assertIsNone(elf.read(obj))

    def test_truncated_program_is_an_error(self):
        cut = self.bin / "cut"
        cut.write_bytes(self.need("lp64").read_bytes()[:200])
        with self.assertRaises(elf.BadElf):
            elf.read(cut)


class Libraries(Built):
    def closure(self, user, program):
        c = sharedlibs.Closure(USERS[user] if isinstance(user, str) else user)
        c.add_program(program, "prog")
        return c

    def test_loader_and_libc_at_their_host_paths_with_links(self):
        for user in HOST_USERS:
            with self.subTest(user=user.name):
                program = self.need(user.name)
                c = self.closure(user.name, program)
                interp = elf.read(program).interp
                # The loader's real file is in, and every link to it.
                self.assertIn(os.path.realpath(interp), c.files)
                spec = "\n".join(c.cpio_spec())
                # The paths the guest's loader opens lead to the files
                # through the image's own links (/lib/ld-linux.so.2 ->
                # /lib32/ld-linux.so.2, /lib32 -> usr/lib32).
                for path in (interp, c.libc):
                    self.assertIn(resolve_in_image(c, path), c.files)
                for link, target in c.links.items():
                    self.assertEqual(os.readlink(link), target)
                    self.assertIn("slink %s %s " % (link, target), spec)
                self.assertTrue(c.libc and os.path.realpath(c.libc) in c.files, c.files)
                self.assertEqual(elf.read(c.libc).kind, user.elf)
                self.assertEqual(c.library_path, [os.path.dirname(c.libc)])
                # Parents come before what they hold.
                dirs = [l.split()[1] for l in c.cpio_spec() if l.startswith("dir ")]
                self.assertEqual(dirs, sorted(dirs))
                for f in c.files:
                    self.assertIn(os.path.dirname(f), c.dirs | {"/"})

    def test_origin_runpath_library_is_copied(self):
        d = self.fresh_dir()
        (d / "lib").mkdir()
        self.need("lp64")
        lib = gcc(d / "lib" / "libanswer.so.1", LIBRARY, "-shared", "-fPIC",
                  "-Wl,-soname,libanswer.so.1")
        prog = gcc(d / "prog", USES_LIBRARY, "-Wl,-rpath,$ORIGIN/lib", link=[str(lib)])
        c = self.closure("lp64", prog)
        # Not at its host path ($ORIGIN is /tests in the guest; /tmp is
        # mounted over): in the one directory for users' libraries.
        self.assertEqual(c.user_libs, {"/usr/local/lib/rfm/libanswer.so.1": str(lib)})
        self.assertNotIn(str(lib), c.files)
        self.assertIn("file /usr/local/lib/rfm/libanswer.so.1 %s 755 0 0" % lib,
                      c.cpio_spec())
        self.assertIn("dir /usr/local/lib/rfm 0755 0 0", c.cpio_spec())
        self.assertEqual(c.library_path[0], "/usr/local/lib/rfm")
        self.assertIn(os.path.dirname(c.libc), c.library_path)

    def test_two_user_libraries_of_one_name_are_refused(self):
        self.need("lp64")
        d = self.fresh_dir()
        for sub, source in (("a", LIBRARY), ("b", LIBRARY.replace("42", "41"))):
            (d / sub).mkdir()
            gcc(d / sub / "libanswer.so.1", source, "-shared", "-fPIC",
                "-Wl,-soname,libanswer.so.1")
        c = sharedlibs.Closure(USERS["lp64"])
        for sub in ("a", "b"):
            prog = gcc(d / ("prog" + sub), USES_LIBRARY, "-Wl,-rpath,%s" % (d / sub),
                       link=[str(d / sub / "libanswer.so.1")])
            if sub == "a":
                c.add_program(prog, "proga")
        with self.assertRaisesRegex(Fatal, "two different libraries would be "
                                           "/usr/local/lib/rfm/libanswer.so.1"):
            c.add_program(prog, "progb")

    def test_wrong_abi_copy_is_not_taken(self):
        """A 64-bit libanswer beside a 32-bit program is not its library."""
        self.need("ilp32")
        d = self.fresh_dir()
        lib32 = gcc(d / "libanswer.so.1", LIBRARY, "-m32", "-shared", "-fPIC",
                    "-Wl,-soname,libanswer.so.1")
        prog = gcc(d / "prog", USES_LIBRARY, "-m32", "-Wl,-rpath,%s" % d, link=[str(lib32)])
        gcc(d / "libanswer.so.1", LIBRARY, "-m64", "-shared", "-fPIC",
            "-Wl,-soname,libanswer.so.1")
        with self.assertRaisesRegex(sharedlibs.MissingLibrary, "needs libanswer.so.1"):
            self.closure("ilp32", prog)

    def test_missing_glibc_names_the_abis_package(self):
        empty = self.fresh_dir()
        for user, package in (("ilp32", "libc6-i386"), ("x32", "libc6-x32"),
                              ("lp64", "libc6")):
            with self.subTest(user=user):
                program = self.need(user)
                nowhere = dataclasses.replace(USERS[user], lib_dirs=(str(empty),))
                with self.assertRaisesRegex(
                        Fatal, r"prog needs libc\.so\.6 \(%s ABI\), not found in %s: "
                        r"install the package %s \(glibc for %s\): apt-get install %s$"
                        % (user, empty, package, user, package)):
                    self.closure(nowhere, program)

    def test_gcc_runtime_packages_per_abi(self):
        for user, package in (("lp64", "libgcc-s1"), ("ilp32", "lib32gcc-s1"),
                              ("x32", "libx32gcc-s1")):
            self.assertEqual(sharedlibs.package_for("libgcc_s.so.1", USERS[user])[0],
                             package)
        self.assertEqual(sharedlibs.package_for("libstdc++.so.6", USERS["ilp32"])[0],
                         "lib32stdc++6")

    def test_missing_interpreter_is_named(self):
        program = self.need("ilp32")
        data = bytearray(program.read_bytes())
        at = data.find(b"/lib/ld-linux.so.2\0")
        data[at:at + 19] = b"/opt/ld-linux.so.2\0"
        broken = self.bin / "broken_interp"
        broken.write_bytes(bytes(data))
        with self.assertRaisesRegex(sharedlibs.MissingLibrary,
                                    r"needs ld-linux\.so\.2 \(ilp32 ABI\), not found in "
                                    r"/opt/ld-linux\.so\.2: install the package libc6-i386"):
            self.closure("ilp32", broken)

    def test_unknown_library_without_any_clue(self):
        with mock.patch("shutil.which", return_value=None):
            self.assertEqual(sharedlibs.package_for("libnowhere-rfm.so.7", USERS["ilp32"]),
                             (None, None))
        self.need("lp64")
        d = self.fresh_dir()
        lib = gcc(d / "libnowhere-rfm.so.7", LIBRARY, "-shared", "-fPIC",
                  "-Wl,-soname,libnowhere-rfm.so.7")
        prog = gcc(d / "prog", USES_LIBRARY, link=[str(lib)])
        lib.unlink()
        with mock.patch("shutil.which", return_value=None):
            with self.assertRaisesRegex(Fatal, "no package is known.*apt-file search "
                                               r"libnowhere-rfm\.so\.7"):
                self.closure("lp64", prog)

    def test_another_abis_copy_names_the_multiarch_package(self):
        """libfoo.so.1 of lp64 from libfoo1:amd64 -> libfoo1:i386 for ilp32."""
        def find(soname, user, *args, **kwargs):
            return "/usr/lib/x86_64-linux-gnu/" + soname if user.name == "lp64" else None
        with mock.patch("shutil.which", return_value=None), \
                mock.patch.object(sharedlibs, "find_library", side_effect=find), \
                mock.patch.object(sharedlibs, "dpkg_owner", return_value="libfoo1:amd64"):
            package, how = sharedlibs.package_for("libfoo.so.1", USERS["ilp32"])
        self.assertEqual(package, "libfoo1:i386")
        self.assertIn("libfoo1:amd64", how)

    def test_dpkg_owner_tries_the_merged_usr_name(self):
        asked = []

        def dpkg(cmd, **kwargs):
            asked.append(cmd[-1])
            ok = cmd[-1] == "/lib32/libc.so.6"
            return subprocess.CompletedProcess(cmd, 0 if ok else 1,
                                               "libc6-i386: /lib32/libc.so.6\n" if ok else "")
        with mock.patch("subprocess.run", side_effect=dpkg):
            self.assertEqual(sharedlibs.dpkg_owner("/usr/lib32/libc.so.6"), "libc6-i386")
        self.assertIn("/usr/lib32/libc.so.6", asked)


class ExtraConvention(Built):
    """NAME.m64, NAME.m32 and NAME.mx32 are one program NAME."""

    def extra(self, **files):
        d = self.fresh_dir()
        for name, src in files.items():
            shutil.copy2(src, d / name.replace("_dot_", "."))
        return d

    def test_three_builds_one_name(self):
        for user in ("lp64", "ilp32", "x32"):
            self.need(user)
        d = self.extra(foo_dot_m64=self.dynamic["lp64"], foo_dot_m32=self.dynamic["ilp32"],
                       foo_dot_mx32=self.dynamic["x32"], plain=self.static64)
        self.assertEqual(guest.extra_programs(d, USERS["lp64"]),
                         [("foo", d / "foo.m64"), ("plain", d / "plain")])
        self.assertEqual(guest.extra_programs(d, USERS["ilp32"]), [("foo", d / "foo.m32")])
        self.assertEqual(guest.extra_programs(d, USERS["x32"]), [("foo", d / "foo.mx32")])

    def test_suffix_of_another_abi_is_refused(self):
        d = self.extra(foo_dot_m32=self.need("lp64"))
        for user in USERS.values():
            with self.assertRaisesRegex(Fatal, r"foo\.m32 is lp64 \(-m64\), but its suffix "
                                               r"\.m32 says ilp32 \(-m32\)"):
                guest.extra_programs(d, user)

    def test_x32_and_ia32_are_told_apart(self):
        d = self.extra(foo_dot_mx32=self.need("ilp32"))
        with self.assertRaisesRegex(Fatal, r"is ilp32 \(-m32\), but its suffix \.mx32 "
                                           r"says x32 \(-mx32\)"):
            guest.extra_programs(d, USERS["x32"])

    def test_suffix_on_a_non_program_is_refused(self):
        d = self.fresh_dir()
        (d / "notes.m64").write_text("not a program\n")
        with self.assertRaisesRegex(Fatal, r"notes\.m64 is not an ELF program"):
            guest.extra_programs(d, USERS["lp64"])

    def test_two_files_for_one_name_are_refused(self):
        d = self.extra(foo=self.static64, foo_dot_m64=self.need("lp64"))
        with self.assertRaisesRegex(Fatal, "would both be /tests/foo on lp64"):
            guest.extra_programs(d, USERS["lp64"])


def user_runs(**replace):
    """{target: GuestRun} of user_programs/ on all four targets."""
    programs = ("leave_child", "leave_child_after", "robust_owner")
    runs = {t.name: util.guest_run(t.name, "user_programs/%s" % t.name, programs=programs)
            for t in ALL_TARGETS}
    runs.update(replace)
    return runs


def rows(runs):
    return util.rows_by_case(compare.compare_targets(runs, ALL_TARGETS))


class UserProgramsInTheMatrix(unittest.TestCase):
    def test_three_builds_are_one_row_of_four_cells_that_agree(self):
        got = rows(user_runs())
        for case in ("robust_owner.word_size", "robust_owner.owner_died"):
            with self.subTest(case=case):
                self.assertEqual(util.statuses(got[case]),
                                 {t.name: PASS for t in ALL_TARGETS})
                self.assertIs(got[case]["agree"], True)
        self.assertEqual(got["robust_owner.word_size"]["verdict"],
                         "agree; abi: long_bytes=8|4|4|4")
        self.assertFalse([k for k in got if "robust_owner" in k and k not in (
            "robust_owner.word_size", "robust_owner.owner_died")])

    def test_a_case_only_the_64_bit_build_has_is_not_a_missing_result(self):
        # robust_owner.m64 has a third case under #ifdef __x86_64__; the
        # other builds printed their whole plan of two: "-" there, and the
        # run is complete.
        m64 = util.guest_run_from_text("x86_64", util.text("user_programs/x86_64").replace(
            "    1..2\n    # obs long_bytes=8", "    1..3\n    # obs long_bytes=8").replace(
            "    ok 2 owner_died\n", "    ok 2 owner_died\n    ok 3 arch_prctl_fs\n"),
            programs=("leave_child", "leave_child_after", "robust_owner"))
        row = rows(user_runs(x86_64=m64))["robust_owner.arch_prctl_fs"]
        self.assertEqual(util.statuses(row), {"x86_64": PASS, "x86_64-ia32": NA,
                                              "x86_64-x32": NA, "i386": NA})
        self.assertIs(row["agree"], True)
        self.assertEqual(row["verdict"], "only on x86_64")

    def test_x32_disagreeing_with_ia32_on_an_abi_value_differs(self):
        broken = util.edited("x86_64-x32", "user_programs/x86_64-x32",
                             "long_bytes=4 [abi]", "long_bytes=8 [abi]",
                             programs=("robust_owner",))
        row = rows(user_runs(**{"x86_64-x32": broken}))["robust_owner.word_size"]
        self.assertIs(row["agree"], False)
        self.assertEqual(row["verdict"], "DIFFER: long_bytes=8|4|4|8")

    def test_program_that_left_processes_fails_naming_them(self):
        got = rows(user_runs())
        row = got["leave_child"]
        self.assertEqual(util.statuses(row), {t.name: FAIL for t in ALL_TARGETS})
        for t in ALL_TARGETS:
            self.assertRegex(row["cells"][t.name]["reason"],
                             r"^left 2 process\(es\) running: own_session\[\d+\] "
                             r"own_group\[\d+\]$")
        # ...and the next program found nothing of them.
        after = got["leave_child_after.nothing_left"]
        self.assertEqual(set(util.statuses(after).values()), {PASS})
        self.assertEqual(after["verdict"], "agree")

    def test_leftovers_are_named_in_the_failures(self):
        m = compare.build_matrix({"series": user_runs()}, ALL_TARGETS, ["series"])
        self.assertIn("series/i386: leave_child FAIL (left 2 process(es) running: "
                      "own_session[94] own_group[95])", m["summary"]["failures"])

    def test_program_timeout_is_in_each_guests_record(self):
        m = compare.build_matrix({"series": user_runs()}, ALL_TARGETS, ["series"])
        self.assertEqual({g["program_timeout"] for g in
                          m["kernels"]["series"]["guests"].values()}, {"300"})


class ProgramsThatNeverRan(unittest.TestCase):
    """A guest cut off by its timeout: the programs after the hung one
    never started. Each is a row, MISS, never absent, never a pass."""

    def cut_off(self, target, fixture, boot="timeout"):
        return util.guest_run(target, fixture, boot=boot,
                              programs=("smoke", "zz_after_smoke"))

    def test_program_cut_off_on_one_target(self):
        runs = {t: self.cut_off(t, "complete/%s" % t, boot="complete")
                for t in util.TARGET_NAMES}
        runs["i386"] = self.cut_off("i386", "truncated")
        row = util.compare_all(runs)["zz_after_smoke"]
        self.assertEqual(set(util.statuses(row).values()), {MISS})
        self.assertEqual(row["cells"]["i386"]["reason"], "not run (guest run timeout)")
        self.assertFalse(row["agree"])

    def test_real_guest_cut_off_during_a_hung_program(self):
        programs = ("a_hang", "compat_int80", "death", "glibc", "smoke", "syscall",
                    "zz_last")
        run = util.guest_run("x86_64", "cut_off", boot="timeout", programs=programs)
        m = compare.build_matrix({"series": {"x86_64": run}}, (targets.target("x86_64"),),
                                 ["series"])
        got = util.rows_by_case(m["kernels"]["series"]["cases"])
        self.assertEqual(sorted(got), list(programs))
        self.assertEqual(got["a_hang"]["cells"]["x86_64"]["reason"],
                         "started; the log ends before its result")
        for name in programs[1:]:
            self.assertEqual(got[name]["cells"]["x86_64"],
                             {"status": MISS, "reason": "not run (guest run timeout)",
                              "obs": {}, "diag": []})
        self.assertEqual(m["summary"]["exit_status"], 2)
        self.assertEqual(m["summary"]["counts"][MISS], 7)

    def test_every_target_cut_off(self):
        runs = {t: util.guest_run_from_text(t, "", boot="boot-timeout",
                                            programs=("smoke", "zz_after_smoke"))
                for t in util.TARGET_NAMES}
        m = util.matrix({"series": runs})
        got = util.rows_by_case(m["kernels"]["series"]["cases"])
        self.assertEqual(sorted(got), ["smoke", "zz_after_smoke"])
        for row in got.values():
            self.assertEqual(set(util.statuses(row).values()), {MISS})
            self.assertTrue(row["verdict"].startswith("incomplete: MISS"))
        self.assertEqual(m["summary"]["exit_status"], 2)
        self.assertEqual(m["summary"]["counts"][PASS], 0)
        self.assertEqual(m["summary"]["counts"][MISS], 6)


class ManyPrograms(unittest.TestCase):
    """many_programs/: 300 one-line EXTRA programs (p000 to p299) on x86_64,
    more than init's old fixed limit of 256."""

    def test_all_300_are_rows_that_pass(self):
        names = tuple("p%03d" % i for i in range(300))
        run = util.guest_run("x86_64", "many_programs", programs=names)
        got = util.rows_by_case(compare.compare_targets({"x86_64": run},
                                                        (targets.target("x86_64"),)))
        self.assertEqual(sorted(k for k in got if k.startswith("p")), list(names))
        self.assertEqual({util.statuses(got[n])["x86_64"] for n in names}, {PASS})
        self.assertTrue(run.run.complete)
        self.assertEqual(run.run.problems, [])


class KnobsAndMeta(unittest.TestCase):
    def test_libc_knob(self):
        for value, want in (("", "static"), ("static", "static"), ("shared", "shared")):
            with mock.patch.dict(os.environ, {"LIBC": value}):
                self.assertEqual(pipeline.libc_mode(), want)
        with mock.patch.dict(os.environ, {"LIBC": "dynamic"}):
            with self.assertRaisesRegex(Usage, "LIBC=dynamic: not one of static, shared"):
                pipeline.libc_mode()

    def test_program_timeout_knob(self):
        with mock.patch.dict(os.environ, {"PROGRAM_TIMEOUT": ""}):
            self.assertEqual(pipeline.program_timeout(), 300)
        with mock.patch.dict(os.environ, {"PROGRAM_TIMEOUT": "1200"}):
            self.assertEqual(pipeline.program_timeout(), 1200)
        for bad in ("0", "-5", "5m", "1.5"):
            with mock.patch.dict(os.environ, {"PROGRAM_TIMEOUT": bad}):
                with self.assertRaisesRegex(Usage, "PROGRAM_TIMEOUT=%s: not a whole"
                                            % bad.replace(".", r"\.")):
                    pipeline.program_timeout()

    def test_matrix_states_libc_and_timeout(self):
        libc = {"x86_64": {"link": "static", "package": "libc6-dev:amd64",
                           "version": "2.36-9+deb12u14", "path": "/usr/lib/x86_64-linux-gnu/libc.a"},
                "x86_64-ia32": {"link": "shared", "package": "libc6-i386",
                                "version": "2.36-9+deb12u14", "path": "/lib32/libc.so.6"},
                "i386": {"link": "shared", "package": "libc6-i386",
                         "version": "2.36-9+deb12u14", "path": "/lib32/libc.so.6"}}
        m = util.matrix({"series": util.complete_runs()})
        m["meta"].update({"libc": libc, "program_timeout": 600})
        lines = report.render_text(m).splitlines()
        self.assertEqual(lines[1], "program timeout: 600 s each")
        self.assertEqual(lines[2], "libc: x86_64 static (libc6-dev:amd64 2.36-9+deb12u14), "
                         "x86_64-ia32 shared (libc6-i386 2.36-9+deb12u14), "
                         "i386 shared (libc6-i386 2.36-9+deb12u14)")

    def test_shared_libc_links_only_robust_mutex_programs(self):
        sources = guest.sources_for(USERS["ilp32"])
        self.assertEqual(guest.shared_programs(sources, "static"), set())
        shared = guest.shared_programs(sources, "shared")
        self.assertIn("glibc", shared)
        self.assertNotIn("smoke", shared)

    def test_suites_take_their_programs_and_extras_once(self):
        stress = dict(guest.sources_for(USERS["ilp32"], "stress"))
        self.assertEqual(sorted(stress), ["robust_stress", "unlock_stress"])
        self.assertEqual(stress["unlock_stress"].parent.name, "common")
        self.assertNotIn("unlock_stress", dict(guest.sources_for(USERS["ilp32"], "fuzz")))
        self.assertIn("unlock_stress", dict(guest.sources_for(USERS["ilp32"])))


if __name__ == "__main__":
    unittest.main()
