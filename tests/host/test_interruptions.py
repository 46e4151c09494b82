"""Interruptions and concurrent runs: children die with the driver, locks
outlive it while its children run, cache entries appear whole, a build
directory or tree killed half way is repaired, progress lines stay whole.
(scripts/interrupt-check does the same with real runs, slowly.)"""
import contextlib
import fcntl
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import atomic, config, kbuild, log, procs, tree

from tests.host import debarchive

SCRIPTS = str(Path(__file__).resolve().parents[2] / "scripts")


def gone(pid, seconds=5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.05)
    return False


class TempDir(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-int-"))
        self.addCleanup(shutil.rmtree, self.dir, True)


class Children(TempDir):
    def driver(self, code):
        """A driver process running `code` (with rfmlib importable) that
        prints child pids, one a line; returns (driver, first line)."""
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=SCRIPTS))
        self.addCleanup(p.stdout.close)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p, p.stdout.readline().strip()

    def test_a_child_dies_with_a_killed_driver(self):
        drv, pid = self.driver("from rfmlib import procs; import time\n"
                               "p = procs.popen(['sleep', '60']); print(p.pid, flush=True)\n"
                               "time.sleep(60)")
        pid = int(pid)
        self.addCleanup(lambda: gone(pid, 0) or os.kill(pid, signal.SIGKILL))
        time.sleep(0.3)                  # setpriv has set the death signal
        drv.kill()
        drv.wait()
        self.assertTrue(gone(pid), "the child outlived its driver")

    def test_an_orphan_keeps_the_lock_it_inherited(self):
        lock_path = self.dir / "build.lock"
        drv, pid = self.driver(
            "from rfmlib import procs; import fcntl, time\n"
            "lock = open(%r, 'w'); fcntl.flock(lock, fcntl.LOCK_EX)\n"
            "p = procs.popen(['sleep', '60'], hold=[lock], death_signal=None)\n"
            "print(p.pid, flush=True); time.sleep(60)" % str(lock_path))
        pid = int(pid)
        self.addCleanup(lambda: gone(pid, 0) or os.kill(pid, signal.SIGKILL))
        drv.kill()
        drv.wait()
        with open(lock_path, "w") as lock:
            with self.assertRaises(BlockingIOError):   # the orphan still writes
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.kill(pid, signal.SIGKILL)
            self.assertTrue(gone(pid))
            time.sleep(0.1)
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)   # now free

    def test_an_interrupted_parallel_run_stops_children_and_starts_no_more(self):
        started, pids = [], []

        def job(n):
            if n == 1:
                time.sleep(0.5)
                raise KeyboardInterrupt      # as Ctrl-C reaches the main thread
            started.append(n)
            p = procs.popen(["sleep", "30"])
            pids.append(p.pid)
            return procs.wait(p)

        t0 = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            procs.parallel(job, range(6), 2)
        procs.end_run()
        self.assertLess(time.monotonic() - t0, 8)
        # Job 1's thread may have picked job 2 before the stop; nothing later.
        self.assertIn(0, started)
        self.assertFalse(set(started) & {3, 4, 5}, started)
        self.assertTrue(all(gone(p) for p in pids))

    def test_a_stopped_child_takes_its_own_children_along(self):
        # make's compilers: not make's direct children, yet stopped with it
        p = procs.popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE,
                        text=True)
        grandchild = int(p.stdout.readline())
        p.stdout.close()
        self.addCleanup(lambda: gone(grandchild, 0) or os.kill(grandchild, signal.SIGKILL))
        self.addCleanup(lambda: (p.kill(), p.wait()))
        procs._signal(p, signal.SIGTERM)      # what stop() sends first
        self.assertTrue(gone(grandchild, 3))
        procs.stop(p)

    def test_no_child_starts_while_stopping(self):
        procs.stop_all()
        try:
            with self.assertRaises(procs.Interrupted):
                procs.popen(["true"])
        finally:
            procs.end_run()
        procs.run(["true"], check=True)


class HeldStages(TempDir):
    """scripts/interrupt-check's holds: a named checkpoint taken while the
    stage's child runs, so a signal lands inside the stage."""

    def test_the_hold_is_taken_with_the_child_running(self):
        marker = self.dir / "started"
        seen = []

        def held(*_words):
            # The run says it is held: the child must be running already.
            deadline = time.monotonic() + 5
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            seen.append(marker.exists())

        with mock.patch.dict(os.environ, RFM_TEST_PAUSE="extract:0.5"), \
                mock.patch.object(log, "progress", side_effect=held) as said:
            t0 = time.monotonic()
            procs.run(["sh", "-c", "touch %s; sleep 0.2" % marker], pause="extract")
        said.assert_called_once_with("pause", "extract (RFM_TEST_PAUSE)")
        self.assertEqual(seen, [True])
        self.assertGreaterEqual(time.monotonic() - t0, 0.5)

    def test_an_interruption_in_the_hold_stops_the_child(self):
        def interrupt(_name):
            raise KeyboardInterrupt
        with mock.patch.object(procs, "checkpoint", interrupt), \
                mock.patch.object(procs, "stop", wraps=procs.stop) as stopped:
            with self.assertRaises(KeyboardInterrupt):
                procs.run(["sleep", "300"], pause="build")
        stopped.assert_called_once()
        self.assertTrue(gone(stopped.call_args[0][0].pid))

    def test_other_holds_and_no_hold_do_not_wait(self):
        with mock.patch.dict(os.environ, RFM_TEST_PAUSE="boot:30"):
            t0 = time.monotonic()
            procs.run(["true"], pause="extract")
            procs.run(["true"])
        self.assertLess(time.monotonic() - t0, 10)


class WholeEntries(TempDir):
    def test_an_entry_appears_only_when_whole(self):
        final = self.dir / "kernels" / "k1"
        with self.assertRaises(KeyboardInterrupt):
            with atomic.new_dir(final) as tmp:
                (tmp / "bzImage").write_text("half")
                raise KeyboardInterrupt
        self.assertFalse(final.exists())
        self.assertEqual(list(final.parent.iterdir()), [])
        with atomic.new_dir(final) as tmp:
            (tmp / "bzImage").write_text("whole")
        self.assertEqual((final / "bzImage").read_text(), "whole")

    def test_two_runs_making_one_entry_keep_the_first(self):
        final = self.dir / "user" / "tests-lp64-abc"
        a = atomic.new_dir(final)
        b = atomic.new_dir(final)
        ta, tb = a.__enter__(), b.__enter__()
        self.assertNotEqual(ta, tb)           # never one directory for both
        (ta / "done").write_text("a")
        (tb / "done").write_text("b")
        a.__exit__(None, None, None)
        b.__exit__(None, None, None)
        self.assertEqual((final / "done").read_text(), "a")
        self.assertEqual(sorted(p.name for p in final.parent.iterdir()), [final.name])

    def test_temporaries_of_dead_runs_are_swept(self):
        final = self.dir / "initramfs" / "lp64-1.cpio"
        final.parent.mkdir()
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = final.with_name(".%s.tmp-%d-0123abcd" % (final.name, dead.pid))
        mine = final.with_name(".%s.tmp-%d-0123abcd" % (final.name, os.getpid()))
        stale.write_text("half")
        mine.write_text("being written")
        with atomic.new_file(final) as tmp:
            tmp.write_text("cpio")
        self.assertFalse(stale.exists())
        self.assertTrue(mine.exists())
        self.assertEqual(final.read_text(), "cpio")


class BuildDirKilledWhileEmptied(TempDir):
    def test_a_build_dir_being_emptied_is_emptied_again(self):
        src = self.dir / "src" / "slot" / config.LINUX_TOPDIR
        src.mkdir(parents=True)
        gen = self.dir / "src" / "slot.generation"
        gen.write_text("g1\n")
        build = self.dir / "build"
        build.mkdir()
        kbuild.prepare_build_dir(build, src, "t")
        (build / "sub").mkdir()
        (build / "sub" / "x.o").write_text("from g1")
        (build / "a.o").write_text("from g1")
        (build / kbuild.BUILDING).unlink()
        gen.write_text("g2\n")

        def killed_half_way(build_dir, keep=(".rfm-lock",)):
            for p in build_dir.iterdir():      # top-level files go first...
                if p.is_file() and p.name not in keep:
                    p.unlink()
            raise KeyboardInterrupt            # ...then the kill

        with mock.patch.object(kbuild, "_empty", killed_half_way), \
                contextlib.redirect_stdout(io.StringIO()):
            with self.assertRaises(KeyboardInterrupt):
                kbuild.prepare_build_dir(build, src, "t")
        with contextlib.redirect_stdout(io.StringIO()):
            kbuild.prepare_build_dir(build, src, "t")
        self.assertFalse((build / "sub" / "x.o").exists())
        self.assertEqual((build / kbuild.GENERATION).read_text(), "g2\n")


class TreeLocks(TempDir):
    def setUp(self):
        super().setUp()
        self.addCleanup(lambda: [tree.release(s) for _, s in list(tree._SLOT_LOCKS)])

    def other_run(self, exclusive):
        """Another run using the pristine tree (extracted from a small
        linux-source .deb), or holding it exclusive, until killed."""
        (self.dir / "debs").mkdir(exist_ok=True)
        deb = debarchive.linux_source_deb(self.dir / "debs", "6.1.192-3")
        use = ("tree._hold(tree.tree_root(), 'pristine', True)" if exclusive
               else "tree.pristine_tree(); tree.pristine_tree()")   # extracts, then finds it
        code = ("from rfmlib import archive, tree; from pathlib import Path; import time\n"
                "tree._SOURCES['linux-source-6.1'] = archive.KernelSource(archive.Package("
                "'linux-source-6.1', '6.1.192-3', 'all', 'ab', 0), Path(%r), '6.1.192-3')\n"
                "%s; print('held', flush=True); time.sleep(60)" % (str(deb), use))
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=SCRIPTS,
                                      RFM_CACHE=str(self.dir / "cache")))
        self.addCleanup(p.stdout.close)
        self.addCleanup(lambda: (p.kill(), p.wait()))
        for line in p.stdout:
            if line.strip() == "held":
                break
        else:
            self.fail("the other run ended")
        return p

    def try_lock(self, mode):
        with open(self.dir / "cache" / "src" / "6.1.192-3" / "pristine.lock", "w") as f:
            try:
                fcntl.flock(f, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False

    def test_runs_using_the_pristine_tree_do_not_wait_for_each_other(self):
        # The pristine lock was held exclusive for a whole run: a second
        # run on the cache waited for the first to end.
        self.other_run(exclusive=False)
        self.assertTrue(self.try_lock(fcntl.LOCK_SH))
        self.assertFalse(self.try_lock(fcntl.LOCK_EX))   # extracting waits

    def test_a_tree_being_changed_is_waited_for(self):
        other = self.other_run(exclusive=True)
        self.assertFalse(self.try_lock(fcntl.LOCK_SH))
        other.kill()
        other.wait()
        self.assertTrue(self.try_lock(fcntl.LOCK_SH))


class TreeKilledAfterLinking(TempDir):
    def test_a_new_tree_never_carries_the_old_generation(self):
        pristine = self.dir / "pristine" / config.LINUX_TOPDIR
        pristine.mkdir(parents=True)
        (pristine / "a.c").write_text("int a;\n")
        patch = self.dir / "1.patch"
        patch.write_text("--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-int a;\n+int a1;\n")
        root = self.dir / "src"
        self.addCleanup(lambda: [tree.release(s) for _, s in list(tree._SLOT_LOCKS)])
        with contextlib.redirect_stdout(io.StringIO()):
            t, _ = tree.update_tree(pristine, root, "slot", [patch])
        first = tree.generation(t)
        shutil.rmtree(t.parent)                  # the tree must be linked anew
        real_replace = os.replace

        def killed_after(src, dst):
            real_replace(src, dst)
            if Path(dst) == t.parent:
                raise KeyboardInterrupt          # killed right after linking

        with mock.patch.object(tree.os, "replace", killed_after), \
                contextlib.redirect_stdout(io.StringIO()):
            with self.assertRaises(KeyboardInterrupt):
                tree.update_tree(pristine, root, "slot", [patch])
        self.assertTrue(t.is_dir())
        self.assertNotEqual(tree.generation(t), first)


class ProgressLines(unittest.TestCase):
    def test_lines_of_threads_finishing_together_stay_whole(self):
        class Slow(io.StringIO):
            def write(self, s):          # a pipe that makes writers wait
                time.sleep(0.002)
                return super().write(s)

        out = Slow()
        barrier = threading.Barrier(4)

        def guest(n):
            barrier.wait()
            for i in range(5):
                log.progress("boot", "series/t%d: qemu-error in 0.4s (qemu: linux kernel "
                                     "too old to load a ram disk)" % n)

        with contextlib.redirect_stdout(out):
            threads = [threading.Thread(target=guest, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 20)
        for line in lines:
            self.assertRegex(line, r"^\[\s*\d+\.\ds\] boot      series/t\d: qemu-error "
                                   r"in 0\.4s \(qemu: linux kernel too old to load a ram disk\)$")

    def test_details_are_one_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            log.progress("boot", "x86_64: qemu-error (qemu-system-x86_64: error one\n"
                                 "  error two\n\n)")
        self.assertEqual(out.getvalue().count("\n"), 1)
        self.assertIn("(qemu-system-x86_64: error one | error two | )", out.getvalue())


if __name__ == "__main__":
    unittest.main()
