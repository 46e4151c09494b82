"""The project's own apt (archive.py) against a fake Debian archive, and
make deps' handling of the host's apt-get (deps.py) with a fake apt-get.

Real apt-get reads the fake archive through file:// mirrors: the pinned
tree is downloaded and checked; once Debian no longer serves it, the
newest 6.1 tree is taken and said so; an index that fails to download is
a warning, not the end; what is cached needs no network; make repin
moves the pin only to a tree the series applies to."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib.targets import KERNEL_VARIANTS
from rfmlib import archive, cli, config, deps, kcidb, knobs, log, matrix, tree
from rfmlib.targets import select_targets

from tests.host import debarchive

REPO = Path(__file__).resolve().parents[2]
PINNED = "6.1.192-3"


class ArchiveTest(unittest.TestCase):
    """A temporary cache, pins file and fake archive (bookworm and
    bookworm-security in one directory, as two file:// mirrors)."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)
        self.debs = self.dir / "debs"
        self.debs.mkdir()
        self.archive = debarchive.FakeArchive(self.dir / "mirror")
        self.pins = self.dir / "trees.json"
        for p in (mock.patch.dict(os.environ, {
                      "RFM_CACHE": str(self.dir / "cache"),
                      "DEBIAN_MIRROR": self.archive.url,
                      "DEBIAN_SECURITY_MIRROR": self.archive.url}),
                  mock.patch.object(config, "TREE_PINS", self.pins)):
            p.start()
            self.addCleanup(p.stop)
        tree._SOURCES.clear()
        self.addCleanup(tree._SOURCES.clear)

    def tree_deb(self, version, files=None):
        return debarchive.linux_source_deb(self.debs, version, files)

    def pin(self, deb, version=PINNED):
        self.pins.write_text(json.dumps({"linux-source-6.1": {
            "archive": "bookworm", "version": version,
            "sha256": debarchive.sha256(deb), "size": deb.stat().st_size}}))

    def serve(self, *debs, suite="bookworm-security", broken=()):
        for deb in debs:
            self.archive.add(suite, deb, "all")
        self.archive.write(broken)

    def source(self, **how):
        warnings = io.StringIO()
        with contextlib.redirect_stderr(warnings), contextlib.redirect_stdout(io.StringIO()):
            src = archive.kernel_source("linux-source-6.1", **how)
        return src, warnings.getvalue()


class PinnedTree(ArchiveTest):
    def test_the_pinned_tree_is_downloaded_and_checked(self):
        deb = self.tree_deb(PINNED)
        self.pin(deb)
        self.serve(deb, self.tree_deb("6.1.176-1"))
        src, warnings = self.source()
        self.assertEqual((src.version, src.is_pinned, warnings), (PINNED, True, ""))
        self.assertEqual(debarchive.sha256(src.deb), debarchive.sha256(deb))
        self.assertIn("(pinned)", src.describe())

    def test_a_cached_tree_needs_no_network(self):
        deb = self.tree_deb(PINNED)
        self.pin(deb)
        self.serve(deb)
        self.source()
        with mock.patch.dict(os.environ, {"DEBIAN_MIRROR": "file:///nonexistent",
                                          "DEBIAN_SECURITY_MIRROR": "file:///nonexistent"}), \
                mock.patch.object(archive.procs, "run", side_effect=AssertionError("ran")):
            src, _ = self.source()
        self.assertTrue(src.is_pinned)

    def test_a_tree_whose_sha256_is_not_the_pinned_one_is_refused(self):
        deb = self.tree_deb(PINNED)
        self.serve(deb)
        (self.dir / "other").mkdir()
        self.pin(debarchive.linux_source_deb(self.dir / "other", PINNED, {"x": "changed"}))
        with self.assertRaisesRegex(log.Fatal, "refused"):
            self.source()
        self.assertFalse(list((self.dir / "cache" / "debs").rglob("*.deb")))


class NewerTree(ArchiveTest):
    """Debian's next 6.1 security release replaces the pinned build."""

    def setUp(self):
        super().setUp()
        self.pin(self.tree_deb(PINNED))
        self.newest = self.tree_deb("6.1.195-1")
        self.serve(self.newest, self.tree_deb("6.1.194-1"))
        self.serve(self.tree_deb("6.1.176-1"), suite="bookworm")

    def test_the_newest_6_1_tree_is_taken_and_said(self):
        src, warnings = self.source()
        self.assertEqual((src.version, src.is_pinned, src.linux), ("6.1.195-1", False, "6.1.195"))
        self.assertIn("6.1.192-3, which the series is pinned to, is no longer served", warnings)
        self.assertIn("6.1.195-1", warnings)
        self.assertIn("make repin", warnings)
        self.assertIn("pinned 6.1.192-3 is no longer served", src.describe())

    def test_run_json_kcidb_and_the_matrix_header_name_it(self):
        tree._SOURCES[config.LINUX_SOURCE_PACKAGE] = self.source()[0]
        self.assertIn("6.1.195-1 (pinned 6.1.192-3 is no longer served",
                      matrix.run_meta("tcg", {})["tree"])
        record = tree.source().record()
        self.assertEqual((record["version"], record["pinned"], record["is_pinned"]),
                         ("6.1.195-1", PINNED, False))
        meta = {"provenance": {"tree": record, "patches": {"series": []}}}
        _, checkout = kcidb._checkout("series", meta, "rfm")
        self.assertEqual(checkout["misc"]["debian_version"], "6.1.195-1")
        self.assertEqual(checkout["misc"]["pinned_version"], PINNED)
        self.assertIn("no longer served", checkout["comment"])

    def test_the_choice_holds_offline(self):
        first, _ = self.source()
        tree._SOURCES.clear()
        with mock.patch.dict(os.environ, {"DEBIAN_SECURITY_MIRROR": "file:///nonexistent"}):
            again, _ = self.source()
        self.assertEqual(again.version, first.version)

    def patches(self, first_line):
        """A patches/ directory: a series of one patch whose context is
        the Makefile's `first_line`, and a test-only patch in each
        directory a kernel variant stacks (each creates a file of its own)."""
        patches = self.dir / "patches"
        patches.mkdir()
        (patches / "series").write_text("0001-a.patch\n")
        (patches / "0001-a.patch").write_text(
            "--- a/Makefile\n+++ b/Makefile\n@@ -1,2 +1,3 @@\n %s\n+# rfm\n"
            " PATCHLEVEL = 1\n" % first_line)
        stacked = {d for v in KERNEL_VARIANTS.values()
                   for d in v.get("patches", "").split("+")[1:]}
        for name in sorted(stacked):
            (patches / name).mkdir()
            (patches / name / "0001-t.patch").write_text(
                "--- /dev/null\n+++ b/%s.txt\n@@ -0,0 +1 @@\n+%s\n" % (name, name))
        return patches

    def repin(self, patches):
        with mock.patch.object(config, "PATCHES", patches), \
                contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()):
            status = tree.cmd_repin(None)
        return status, out.getvalue()

    def test_repin_moves_the_pin_when_every_variant_applies(self):
        status, out = self.repin(self.patches("VERSION = 6"))
        self.assertEqual(status, 0)
        pin = json.loads(self.pins.read_text())["linux-source-6.1"]
        self.assertEqual(pin["version"], "6.1.195-1")
        self.assertEqual(pin["sha256"], debarchive.sha256(self.newest))
        self.assertIn("6.1.192-3 -> 6.1.195-1", out)
        self.assertIn("bench-exit-stock", out)
        # repin's choice is not a run's: nothing remembered for fallbacks.
        self.assertFalse(list((self.dir / "cache" / "debs").rglob("*.newest.json")))

    def test_repin_refuses_a_tree_the_series_does_not_apply_to(self):
        before = self.pins.read_text()
        with self.assertRaisesRegex(log.Fatal, "0001-a.patch does not apply exactly"):
            self.repin(self.patches("VERSION = 7"))
        self.assertEqual(self.pins.read_text(), before)

    def test_repin_refuses_a_test_only_patch_that_does_not_apply(self):
        patches = self.patches("VERSION = 6")
        (patches / "bench-exit" / "0001-t.patch").write_text(
            "--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-VERSION = 7\n+VERSION = 8\n")
        before = self.pins.read_text()
        with self.assertRaisesRegex(log.Fatal, r"0001-t.patch does not apply exactly .*"
                                               r"\(kernel bench-exit"):
            self.repin(patches)
        self.assertEqual(self.pins.read_text(), before)

    def test_a_step_of_make_check_builds_from_the_tree_its_runner_chose(self):
        first, _ = self.source()
        with mock.patch.dict(os.environ, {archive.CHOSEN_ENV: json.dumps(
                first.package.__dict__), "DEBIAN_SECURITY_MIRROR": "file:///nonexistent"}), \
                mock.patch.object(archive.procs, "run", side_effect=AssertionError("ran")):
            again, _ = self.source()
        self.assertEqual(again.package, first.package)


class StaleIndexes(ArchiveTest):
    """Indexes downloaded before the pin moved, or a mirror that lists only
    older trees: never a fallback to a tree older than the pin."""

    def setUp(self):
        super().setUp()
        p = mock.patch.object(archive, "RETRY_SECONDS", 0)
        p.start()
        self.addCleanup(p.stop)

    def test_the_pin_newer_than_the_indexes_downloads_them_again(self):
        older = self.tree_deb("6.1.190-1")
        self.serve(older)
        with contextlib.redirect_stdout(io.StringIO()):
            archive.State("bookworm", "amd64").update()     # a run of before the repin
        deb = self.tree_deb(PINNED)
        self.pin(deb)
        self.serve(deb)
        src, warnings = self.source()
        self.assertEqual((src.version, src.is_pinned, warnings), (PINNED, True, ""))

    def test_no_fallback_to_an_older_tree(self):
        self.pin(self.tree_deb(PINNED))
        self.serve(self.tree_deb("6.1.190-1"), self.tree_deb("6.1.176-1"))
        with self.assertRaisesRegex(log.Fatal, "serves no linux-source-6.1 6.1.192-3, the "
                                               "pinned version, nor a newer one"):
            self.source()
        self.assertFalse(list((self.dir / "cache" / "debs").rglob("*.newest.json")))

    def test_repin_refuses_while_an_index_failed(self):
        self.pin(self.tree_deb(PINNED))
        self.serve(self.tree_deb("6.1.176-1"), suite="bookworm")
        self.serve(self.tree_deb("6.1.195-1"), broken=("bookworm-security",))
        with self.assertRaisesRegex(log.Fatal, "cannot tell"):
            self.source(newest=True)


class MirrorSync(ArchiveTest):
    """An index that fails to download, as in a mirror sync."""

    def test_a_failed_index_is_a_warning_and_the_others_are_used(self):
        deb = self.tree_deb(PINNED)
        self.pin(deb)
        self.serve(deb, suite="bookworm")
        self.serve(self.tree_deb("6.1.195-1"), suite="bookworm-security",
                   broken=("bookworm-security",))
        src, warnings = self.source()
        self.assertTrue(src.is_pinned)
        self.assertIn("bookworm-security/main/binary-amd64/Packages not downloaded", warnings)

    def test_a_failed_index_is_seen_in_any_locale(self):
        # A mirror that refuses the connection: apt exits 0 and says so
        # only in a W: line, in the user's language unless told otherwise.
        self.pin(self.tree_deb(PINNED))
        self.serve(self.tree_deb("6.1.176-1"), suite="bookworm")
        with mock.patch.dict(os.environ, {"LANGUAGE": "de", "LANG": "C.UTF-8", "LC_ALL": "",
                                          "DEBIAN_SECURITY_MIRROR": "http://127.0.0.1:9/"}):
            with self.assertRaisesRegex(log.Fatal, "cannot tell whether Debian still serves"):
                self.source()

    def test_the_pin_missing_with_an_index_missing_is_no_fallback(self):
        deb = self.tree_deb(PINNED)
        self.pin(deb)
        self.serve(self.tree_deb("6.1.176-1"), suite="bookworm")
        self.serve(deb, suite="bookworm-security", broken=("bookworm-security",))
        with self.assertRaisesRegex(log.Fatal, "cannot tell whether Debian still serves it"):
            self.source()

    def test_busybox_of_a_foreign_architecture(self):
        for arch in ("amd64", "i386"):
            self.archive.add("bookworm", debarchive.make_deb(
                self.debs, "busybox-static", "1:1.35.0-4", arch,
                {"bin/busybox": b"busybox " + arch.encode()}), arch)
        self.archive.add("bookworm-security", self.tree_deb(PINNED), "all")
        # 2026-12-05 on deb.debian.org: bookworm-security's i386 index.
        self.archive.write(broken=[("bookworm-security", "i386")])
        with contextlib.redirect_stderr(io.StringIO()) as warnings, \
                contextlib.redirect_stdout(io.StringIO()):
            package, deb = archive.newest("busybox-static", "i386")
        self.assertEqual((package.version, package.arch), ("1:1.35.0-4", "i386"))
        self.assertIn("not downloaded", warnings.getvalue())
        root = archive.unpack(deb, self.dir / "bb")
        self.assertEqual((root / "bin" / "busybox").read_bytes(), b"busybox i386")


class Versions(unittest.TestCase):
    def test_debian_order(self):
        ordered = ["1.0~rc1", "1.0", "1.0-1", "1.0-1+deb12u1", "1.0.1", "6.1.99-1",
                   "6.1.170-3", "6.1.192-2", "6.1.192-3", "1:0.1"]
        for a, b in zip(ordered, ordered[1:]):
            self.assertEqual(archive.compare_versions(a, b), -1, (a, b))
            self.assertEqual(archive.compare_versions(b, a), 1, (a, b))
        self.assertEqual(archive.compare_versions("6.1.192-3", "6.1.192-3"), 0)
        self.assertEqual(archive.upstream_version("6.1.192-3"), "6.1.192")

    def test_failed_fetches_of_a_mirror_sync(self):
        out = ("Err:5 http://deb.debian.org/debian-security bookworm-security/main i386 "
               "Packages\n  File has unexpected size (371952 != 372316). Mirror sync in "
               "progress? [IP: 203.0.113.80 80]\n"
               "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-"
               "security/main/binary-i386/Packages.xz  File has unexpected size (371952 != "
               "372316). Mirror sync in progress? [IP: 203.0.113.80 80]\n"
               "E: Some index files failed to download. They have been ignored, or old ones "
               "used instead.\n")
        failed = archive.failed_fetches(out)
        self.assertEqual(len(failed), 1, failed)
        self.assertTrue(failed[0][0].endswith("binary-i386/Packages.xz"))
        self.assertIn("Mirror sync in progress?", failed[0][1])


# ---- the host's apt-get, faked ----

FAKE_APT = """#!/bin/sh
# apt-get as a mirror in the middle of a sync leaves it.
echo "$@" >> "$RFM_FAKE_LOG"
case "$1" in
update)
    echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-i386/Packages.xz  File has unexpected size (371952 != 372316). Mirror sync in progress? [IP: 203.0.113.80 80]" >&2
    echo "E: Some index files failed to download. They have been ignored, or old ones used instead." >&2
    exit "${RFM_FAKE_UPDATE_RC:-100}" ;;
install)
    for p in "$@"; do
        case "$p" in
        -*|install) ;;
        no-such-*) echo "E: Unable to locate package $p" >&2; exit 100 ;;
        "$RFM_FAKE_REFUSE") echo "E: Package '$p' has no installation candidate" >&2; exit 100 ;;
        *) echo "$p" >> "$RFM_FAKE_INSTALLED" ;;
        esac
    done ;;
esac
"""

FAKE_DPKG_QUERY = """#!/bin/sh
# dpkg-query -W -f=FORMAT PACKAGE: installed if apt-get installed it.
p="$3"
if grep -qx "$p" "$RFM_FAKE_INSTALLED" 2>/dev/null; then
    printf 'install ok installed\\t1.0'; exit 0
fi
exit 1
"""


class HostApt(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)
        bin_dir = self.dir / "bin"
        bin_dir.mkdir()
        for name, text in (("apt-get", FAKE_APT), ("dpkg-query", FAKE_DPKG_QUERY)):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        self.env = {"PATH": "%s:%s" % (bin_dir, os.environ["PATH"]),
                    "RFM_FAKE_LOG": str(self.dir / "log"),
                    "RFM_FAKE_INSTALLED": str(self.dir / "installed")}
        p = mock.patch.dict(os.environ, self.env)
        p.start()
        self.addCleanup(p.stop)

    def test_an_update_that_fails_for_some_indexes_is_a_warning(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            deps.apt_install(["qemu-system-x86", "sparse"])
        self.assertIn("binary-i386/Packages.xz not downloaded", err.getvalue())
        self.assertIn("Mirror sync in progress?", err.getvalue())
        self.assertEqual((self.dir / "installed").read_text().split(),
                         ["qemu-system-x86", "sparse"])

    def test_an_update_that_exits_0_with_failures_is_a_warning_too(self):
        with mock.patch.dict(os.environ, {"RFM_FAKE_UPDATE_RC": "0"}), \
                contextlib.redirect_stderr(io.StringIO()) as err:
            deps.apt_install(["sparse"])
        self.assertIn("binary-i386/Packages.xz not downloaded", err.getvalue())

    def test_a_package_that_cannot_be_installed_is_one_error_naming_it(self):
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(log.Fatal) as caught:
                deps.apt_install(["qemu-system-x86", "no-such-package"])
        message = str(caught.exception)
        self.assertEqual(len(message.splitlines()), 1, message)
        self.assertIn("cannot install no-such-package", message)
        self.assertNotIn("qemu-system-x86,", message)
        self.assertIn("Unable to locate package no-such-package", message)

    @unittest.skipUnless(os.geteuid() == 0, "make deps installs only as root")
    def test_make_deps_never_ends_in_a_traceback(self):
        r = subprocess.run([sys.executable, str(REPO / "scripts" / "rfm"), "deps"],
                           capture_output=True, text=True, cwd=REPO,
                           env=dict(os.environ, RFM_CACHE=str(self.dir / "cache"),
                                    DEPS_FOR="run", RFM_FAKE_REFUSE="qemu-system-x86"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertRegex(r.stderr, r"(?m)^error: cannot install qemu-system-x86 \(some indexes "
                         r"did not download: http://\S+binary-i386/Packages.xz\); apt-get said: "
                         r".*no installation candidate$")
        self.assertIn("warning: apt-get update: http://", r.stderr)


# ---- which packages each command needs ----

ARM_WORDS = ("arm", "aarch64", "clang")


class PackageSets(unittest.TestCase):
    def names(self, command, targets):
        with mock.patch.object(knobs, "serving", lambda: command):
            return {n.name for n in deps.needs_of(command, select_targets(targets))}

    def test_an_x86_run_needs_no_arm_lava_or_sparse_tooling(self):
        for command in ("run", "check"):
            got = self.names(command, "x86")
            self.assertFalse([n for n in got if any(w in n for w in ARM_WORDS)], command)
            self.assertIn("qemu-system-x86", got)
            self.assertIn("busybox-static:i386", got)
        run = self.names("run", "x86")
        self.assertFalse({"lava-dispatcher", "sparse", "python3-git", "nodejs"} & run)
        # What a fresh Debian 12 lacks and the series needs: patch(1).
        self.assertIn("patch", run)

    def test_check_has_its_own(self):
        got = self.names("check", "x86")
        self.assertTrue({"sparse", "python3-ply", "dwarves", "ci-tools", "python3-jsonschema",
                         "git", "patch"} <= got, got)
        # LAVA's round trip left make check for CI's schedule (2026-12-06).
        self.assertFalse({"lava-dispatcher", "lava-server"} & got, got)
        self.assertTrue({"lava-dispatcher", "lava-server"} <= self.names("lava-check", "x86"))

    def test_a_command_s_own_default_targets(self):
        # bisect-check's TARGETS default is all: its ARM toolchains too.
        got = {n.name for n in deps.needs_of("bisect-check")}
        self.assertTrue({"clang", "qemu-system-x86", "qemu-system-arm"} <= got, got)
        # checkpatch reads no TARGETS: what it needs, whatever is given.
        got = {n.name for n in deps.needs_of("checkpatch", select_targets("arm"))}
        self.assertTrue({"patch", "perl", "python3-ply"} <= got, got)
        self.assertNotIn("clang", got)

    def test_the_arm_targets_add_theirs(self):
        got = self.names("run", "arm")
        self.assertTrue({"clang", "qemu-system-arm", "binutils-aarch64-linux-gnu",
                         "libc6-dev-armhf-cross", "busybox-static:arm64",
                         "busybox-static:armhf"} <= got, got)
        self.assertFalse({"qemu-system-x86", "gcc-multilib", "busybox-static:i386"} & got)
        self.assertEqual(self.names("run", "x86_64") & {"gcc-multilib", "busybox-static:i386"},
                         set())

    def test_the_mips_targets_add_theirs_and_no_others(self):
        got = self.names("run", "mips")
        self.assertTrue({"qemu-system-mips", "binutils-mips64el-linux-gnuabi64",
                         "gcc-12-mips64el-linux-gnuabi64", "cpp-12-mips64el-linux-gnuabi64",
                         "libc6-dev-mipsn32-mips64el-cross", "lib32gcc-12-dev-mips64el-cross",
                         "busybox-static:mips64el"} <= got, got)
        self.assertFalse([n for n in got if any(w in n for w in ARM_WORDS + ("x86", "s390"))],
                         got)
        # Debian's cross gcc conflicts with gcc-multilib: it is unpacked
        # into the cache (a deb row), never installed.
        kinds = {n.name: n.kind for n in deps.needs_of("run", select_targets("mips"))}
        self.assertEqual(kinds["gcc-12-mips64el-linux-gnuabi64"], deps.DEB)
        # n64 alone needs neither multilib.
        self.assertFalse({"libc6-dev-mipsn32-mips64el-cross", "libc6-dev-mips32-mips64el-cross"}
                         & self.names("run", "mips64el"))
        self.assertFalse([n for n in self.names("run", "x86") if "mips" in n])

    def test_a_missing_program_is_one_error_line(self):
        def missing(_args):
            raise FileNotFoundError(2, "No such file or directory", "patch")
        table = tuple(("deps", missing, about) if name == "deps" else (name, fn, about)
                      for name, fn, about in cli.COMMANDS)
        with mock.patch.object(cli, "COMMANDS", table), \
                contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(cli.main(["deps"]), 1)
        self.assertEqual(err.getvalue(), "error: No such file or directory: patch\n")

    def test_make_deps_lists_exactly_that_set(self):
        for targets in ("x86", "arm"):
            r = subprocess.run([sys.executable, str(REPO / "scripts" / "rfm"), "deps", "--list"],
                               capture_output=True, text=True, cwd=REPO,
                               env=dict(os.environ, TARGETS=targets, DEPS_FOR="run"))
            self.assertEqual(r.returncode, 0, r.stderr)
            listed = {line.split()[1] for line in r.stdout.splitlines()[1:-1]}
            self.assertEqual(listed, self.names("run", targets))


if __name__ == "__main__":
    unittest.main()
