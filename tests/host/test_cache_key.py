"""ci.py: the kernel cache key CI saves kernels under (`rfm cache-key`),
and pruning a CI cache to it."""
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import archive, ci, config, kbuild, tree
from rfmlib.log import Fatal
from rfmlib.targets import select_targets

PATCH = """From 1 Mon Sep 17 00:00:00 2001
Subject: [PATCH 1/1] futex: a change

Why it is made.
---
diff --git a/kernel/futex/core.c b/kernel/futex/core.c
--- a/kernel/futex/core.c
+++ b/kernel/futex/core.c
@@ -1,1 +1,1 @@
-int a;
+int b;
"""


class CacheKey(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-cache-key-"))
        self.addCleanup(shutil.rmtree, self.dir)
        self.patch = self.dir / "0001-a.patch"
        self.patch.write_text(PATCH)
        (self.dir / "series").write_text("0001-a.patch\n")
        # The pinned tree, decided without downloading it (as cache-key does).
        tree._SOURCES[config.LINUX_SOURCE_PACKAGE] = archive.kernel_source(
            config.LINUX_SOURCE_PACKAGE, fetch=False)
        self.addCleanup(tree._SOURCES.clear)
        for p in (mock.patch.object(config, "PATCHES", self.dir),
                  mock.patch.object(kbuild, "_compiler_ident", lambda: "gcc 12")):
            p.start()
            self.addCleanup(p.stop)

    def key(self, kernels=("series", "stock"), targets="x86_64,i386"):
        return ci.cache_key(ci.kernel_keys(kernels, select_targets(targets)))

    def test_one_line_with_the_tree_version(self):
        pinned = archive.pins()[config.LINUX_SOURCE_PACKAGE]["version"]
        self.assertRegex(self.key(), r"^rfm-%s-[0-9a-f]{16}$" % pinned.replace(".", r"\."))

    def test_the_keys_kbuild_finds_kernels_by(self):
        keys = ci.kernel_keys(("series", "stock", "baseline"), select_targets("i386"))
        self.assertEqual([k[:2] for k in keys],
                         [("series", "i386"), ("stock", "i386"), ("baseline", "i386")])
        for kernel, patches in (("series", [self.patch]), ("stock", [])):
            key = next(k for v, _, k in keys if v == kernel)
            self.assertEqual(kbuild.cached("i386", patches)[1].name, key)

    def test_targets_sharing_a_kernel_share_its_key(self):
        self.assertEqual(self.key(targets="x86_64"), self.key(targets="x86_64-ia32,x86_64-x32"))
        self.assertNotEqual(self.key(targets="x86_64"), self.key(targets="i386"))

    def test_changes_with_a_patch_diff_not_with_its_changelog(self):
        before = self.key()
        self.patch.write_text(PATCH.replace("Why it is made.", "Reworded."))
        self.assertEqual(self.key(), before)
        self.patch.write_text(PATCH.replace("+int b;", "+int c;"))
        self.assertNotEqual(self.key(), before)

    def test_changes_with_the_compiler_and_the_fragments(self):
        before = self.key()
        with mock.patch.object(kbuild, "_compiler_ident", lambda: "gcc 13"):
            self.assertNotEqual(self.key(), before)
        # debug is the series plus kconfig/debug*.config: another kernel.
        keys = ci.kernel_keys(("series", "debug"), select_targets("i386"))
        self.assertNotEqual(keys[0][2], keys[1][2])

    def test_kernels_not_built_here_have_no_key(self):
        self.assertEqual(ci.kernel_keys(("debian", "user"), select_targets("x86")), [])
        (self.dir / "series").write_text("")
        self.assertEqual([k[0] for k in ci.kernel_keys(("baseline", "stock"),
                                                        select_targets("i386"))], ["stock"])


class Prune(unittest.TestCase):
    def setUp(self):
        self.cache = Path(tempfile.mkdtemp(prefix="rfm-ci-cache-"))
        self.addCleanup(shutil.rmtree, self.cache)
        for key in ("old", "wanted"):
            (self.cache / "kernels" / key).mkdir(parents=True)
            (self.cache / "kernels" / key / "bzImage").write_text(key)

    def test_keeps_only_what_the_key_names(self):
        with mock.patch.dict(os.environ, {"RFM_CACHE": str(self.cache)}):
            self.assertEqual(ci.prune([("series", "i386", "wanted")]), ["old"])
        self.assertEqual(sorted(p.name for p in (self.cache / "kernels").iterdir()),
                         ["wanted"])

    def test_never_the_default_cache(self):
        # The default cache stands in for itself here: a broken guard must
        # empty this test's directory, never the real cache.
        with mock.patch.dict(os.environ, {"RFM_CACHE": ""}), \
                mock.patch.object(config, "cache_dir", lambda: self.cache):
            with self.assertRaises(Fatal) as e:
                ci.prune([])
        self.assertEqual(e.exception.status, 2)
        self.assertEqual(len(list((self.cache / "kernels").iterdir())), 2)


if __name__ == "__main__":
    unittest.main()
