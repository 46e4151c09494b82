"""Variant trees: re-patching keeps the mtime of every file whose content
does not change, a patch that does not apply leaves the tree alone, and a
run killed half way is repaired by the next one."""
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from rfmlib import config, kbuild, tree
from rfmlib.log import Fatal


def diff(path, old, new):
    """A one-hunk unified diff of a one-line file (old -> new)."""
    return ("--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-%s\n+%s\n" % (path, path, old, new))


def new_file(path, line):
    return "--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+%s\n" % (path, line)


class UpdateTree(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-tree-"))
        self.addCleanup(shutil.rmtree, self.dir)
        self.pristine = self.dir / "pristine" / config.LINUX_TOPDIR
        for rel, line in (("a.c", "int a;"), ("b.c", "int b;"), ("sub/c.h", "#define C 1")):
            (self.pristine / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.pristine / rel).write_text(line + "\n")
        self.root = self.dir / "src"
        self.patches = self.dir / "patches"
        self.patches.mkdir()
        # Each test is its own run: the slot locks of the last one are gone.
        self.release_all()
        self.addCleanup(self.release_all)

    def release_all(self):
        for slot in list(tree._SLOT_LOCKS):
            tree.release(slot)

    def patch(self, name, text):
        p = self.patches / name
        p.write_text(text)
        return p

    def update(self, *patches):
        return tree.update_tree(self.pristine, self.root, "slot", list(patches))[0]

    def age(self, t, rel, seconds=1000):
        """Make t/rel look old, as if a build had happened since."""
        st = (t / rel).stat()
        os.utime(t / rel, (st.st_atime - seconds, st.st_mtime - seconds))
        return (t / rel).stat().st_mtime

    def test_unchanged_files_keep_their_mtime(self):
        p1 = self.patch("1.patch", diff("a.c", "int a;", "int a1;") + diff("b.c", "int b;", "int b1;"))
        t = self.update(p1)
        self.assertEqual((t / "a.c").read_text(), "int a1;\n")
        a_old, b_old = self.age(t, "a.c"), self.age(t, "b.c")
        # The same series plus a mutant of a.c only: b.c is untouched.
        p2 = self.patch("2.patch", diff("a.c", "int a1;", "int a2;"))
        t = self.update(p1, p2)
        self.assertEqual((t / "a.c").read_text(), "int a2;\n")
        self.assertGreater((t / "a.c").stat().st_mtime, a_old)
        self.assertEqual((t / "b.c").stat().st_mtime, b_old)
        # Back to the series: a.c changes again (new mtime), b.c still kept.
        a_mid = self.age(t, "a.c")
        t = self.update(p1)
        self.assertEqual((t / "a.c").read_text(), "int a1;\n")
        self.assertGreater((t / "a.c").stat().st_mtime, a_mid)
        self.assertEqual((t / "b.c").stat().st_mtime, b_old)

    def test_files_no_longer_patched_are_restored_and_new_ones_removed(self):
        p1 = self.patch("1.patch", diff("b.c", "int b;", "int b1;") + new_file("new.c", "int n;"))
        t = self.update(p1)
        self.assertTrue((t / "new.c").exists())
        p2 = self.patch("2.patch", diff("a.c", "int a;", "int a1;"))
        t = self.update(p2)
        self.assertEqual((t / "b.c").read_text(), "int b;\n")
        self.assertFalse((t / "new.c").exists())
        # The pristine tree itself is never written through a hard link.
        self.assertEqual((self.pristine / "a.c").read_text(), "int a;\n")
        self.assertEqual((self.pristine / "b.c").read_text(), "int b;\n")

    def test_a_patch_that_does_not_apply_leaves_the_tree_as_it_was(self):
        p1 = self.patch("1.patch", diff("a.c", "int a;", "int a1;"))
        t = self.update(p1)
        bad = self.patch("bad.patch", diff("b.c", "int nope;", "int b2;"))
        with self.assertRaisesRegex(Fatal, "bad.patch does not apply"):
            self.update(p1, bad)
        self.assertEqual((t / "a.c").read_text(), "int a1;\n")
        stamp = json.loads((self.root / "slot.stamp").read_text())
        self.assertEqual(stamp["patches"], ["1.patch"])

    def test_a_run_killed_while_patching_is_repaired(self):
        p1 = self.patch("1.patch", diff("a.c", "int a;", "int a1;"))
        t = self.update(p1)
        # Killed half way to p2: the stamp is gone, a.c already rewritten.
        p2 = self.patch("2.patch", diff("b.c", "int b;", "int b2;"))
        (self.root / "slot.stamp").unlink()
        journal = json.loads((self.root / "slot.journal").read_text())
        (self.root / "slot.journal").write_text(json.dumps(
            {"touched": sorted(set(journal["touched"]) | {"b.c"})}))
        (t / "b.c").unlink()          # what _write_fresh leaves, never a
        (t / "b.c").write_text("half")  # write through the pristine link
        t = self.update(p2)
        self.assertEqual((t / "a.c").read_text(), "int a;\n")    # from the journal
        self.assertEqual((t / "b.c").read_text(), "int b2;\n")
        self.assertEqual(json.loads((self.root / "slot.stamp").read_text())["patches"],
                         ["2.patch"])

    def test_a_new_tree_is_a_new_generation(self):
        p1 = self.patch("1.patch", diff("a.c", "int a;", "int a1;"))
        t = self.update(p1)
        first = tree.generation(t)
        self.assertNotEqual(first, "unknown")
        self.update(p1)
        self.assertEqual(tree.generation(t), first)
        shutil.rmtree(t.parent)
        (self.root / "slot.stamp").unlink()
        t = self.update(p1)
        self.assertNotEqual(tree.generation(t), first)


class BuildDir(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-build-"))
        self.addCleanup(shutil.rmtree, self.dir)
        self.src = self.dir / "src" / "slot" / config.LINUX_TOPDIR
        self.src.mkdir(parents=True)
        (self.dir / "src" / "slot.generation").write_text("g1\n")
        self.build = self.dir / "build"
        self.build.mkdir()

    def test_files_written_by_an_interrupted_build_are_removed(self):
        kbuild.prepare_build_dir(self.build, self.src, "t")
        old = self.build / "old.o"
        old.write_text("complete")
        past = (self.build / kbuild.BUILDING).stat().st_mtime - 100
        os.utime(old, (past, past))
        # The build is killed after writing half of new.o.
        (self.build / "new.o").write_text("half")
        kbuild.prepare_build_dir(self.build, self.src, "t")
        self.assertTrue(old.exists())
        self.assertFalse((self.build / "new.o").exists())

    def test_a_finished_build_keeps_everything(self):
        kbuild.prepare_build_dir(self.build, self.src, "t")
        (self.build / "new.o").write_text("done")
        (self.build / kbuild.BUILDING).unlink()      # what build() does at the end
        kbuild.prepare_build_dir(self.build, self.src, "t")
        self.assertTrue((self.build / "new.o").exists())

    def test_a_new_tree_generation_empties_the_build_dir(self):
        kbuild.prepare_build_dir(self.build, self.src, "t")
        (self.build / "sub").mkdir()
        (self.build / "sub" / "x.o").write_text("from the old tree")
        (self.build / kbuild.BUILDING).unlink()
        (self.dir / "src" / "slot.generation").write_text("g2\n")
        kbuild.prepare_build_dir(self.build, self.src, "t")
        self.assertFalse((self.build / "sub").exists())
        self.assertEqual((self.build / kbuild.GENERATION).read_text(), "g2\n")


if __name__ == "__main__":
    unittest.main()


class SlotLocks(unittest.TestCase):
    """Each tree has its own locks: a run that holds the 6.1 tree's
    "pristine" shared must not think it holds 7.3's (two runs once
    extracted 7.3 over each other that way: "File exists")."""

    def test_the_same_slot_of_two_trees_is_two_locks(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = Path(d) / "6.1", Path(d) / "7.3"
            self.addCleanup(tree.release, "pristine")
            first = tree._hold(a, "pristine", exclusive=False)
            second = tree._hold(b, "pristine", exclusive=False)
            self.assertIsNot(first, second)
            self.assertEqual(Path(second.name), b / "pristine.lock")
            tree.release("pristine")
            self.assertFalse([k for k in tree._SLOT_LOCKS if k[1] == "pristine"])
