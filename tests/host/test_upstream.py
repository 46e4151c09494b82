"""upstream.py: the mails of upstream/ as one series, git am on the files
they touch, and the verdict on the cases deviations-upstream.txt names."""
import shutil
import tempfile
import unittest
import unittest.mock
from pathlib import Path

from rfmlib import config, kselftest, tree, upstream
from rfmlib.targets import UPSTREAM
from rfmlib.log import Fatal

MAIL = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@invalid.example>
Subject: [PATCH {n}/{of}] {subject}
 folded

Why.

{signoff}---
{diff}"""
DIFF = """diff --git a/{path} b/{path}
--- a/{path}
+++ b/{path}
@@ -1,2 +1,3 @@
 {first}
+added
 second
"""
SIGNOFF = "Signed-off-by: A <a@invalid.example>\n"


class Mails(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-upstream-"))
        self.addCleanup(shutil.rmtree, self.dir)
        patcher = unittest.mock.patch.object(config, "UPSTREAM", self.dir / "upstream")
        patcher.start()
        self.addCleanup(patcher.stop)
        config.UPSTREAM.mkdir()

    def mail(self, name, n, of, path="kernel/a.c", signoff=SIGNOFF, first="first"):
        diff = DIFF.format(path=path, first=first) if n else ""
        (config.UPSTREAM / name).write_text(MAIL.format(
            n=n, of=of, subject="s%d" % n, signoff=signoff, diff=diff))

    def test_the_repos_mails_are_one_series_signed_off(self):
        patcher = unittest.mock.patch.object(config, "UPSTREAM", config.REPO / "upstream")
        patcher.start()
        self.addCleanup(patcher.stop)
        found = upstream.mails()
        self.assertEqual(upstream.series_problems(found), [])
        self.assertGreaterEqual(len(found), 3)
        self.assertTrue(all("\n" not in subject for *_, subject in found))

    def test_a_folded_subject_is_read_whole(self):
        self.mail("0000-cover-letter.patch", 0, 1)
        self.mail("0001-a.patch", 1, 1)
        self.assertEqual([s for *_, s in upstream.mails()], ["s0 folded", "s1 folded"])

    def test_misnumbered_unsigned_and_diff_in_cover_letter_are_named(self):
        self.mail("0000-cover-letter.patch", 0, 2)
        (config.UPSTREAM / "0000-cover-letter.patch").write_text(
            (config.UPSTREAM / "0000-cover-letter.patch").read_text()
            + DIFF.format(path="x", first="first"))
        self.mail("0001-a.patch", 1, 2, signoff="")
        self.mail("0002-b.patch", 3, 2)
        problems = upstream.series_problems(upstream.mails())
        self.assertEqual(len(problems), 3, problems)
        self.assertIn("0001-a.patch has no Signed-off-by", problems)
        self.assertIn("0002-b.patch is [PATCH 3/2], expected [PATCH 2/2]", problems)
        self.assertTrue(any("a cover letter holds none" in p for p in problems))

    def test_a_mail_without_subject_line_is_an_error(self):
        (config.UPSTREAM / "0000-x.patch").write_text("Subject: no number\n")
        with self.assertRaisesRegex(Fatal, "not a git format-patch mail"):
            upstream.mails()

    def test_git_am_applies_exactly_what_matches_the_pinned_files(self):
        tree = self.dir / "tree"
        (tree / "kernel").mkdir(parents=True)
        (tree / "kernel" / "a.c").write_text("first\nsecond\n")
        self.mail("0001-a.patch", 1, 1)
        self.assertEqual(upstream.git_am(tree, [config.UPSTREAM / "0001-a.patch"]), "")
        self.mail("0001-a.patch", 1, 1, first="not what the tree has")
        self.assertIn("patch does not apply",
                      upstream.git_am(tree, [config.UPSTREAM / "0001-a.patch"]))

    def test_a_new_name_the_tree_uses_elsewhere_is_a_clash(self):
        tree = self.dir / "tree"
        (tree / "kernel").mkdir(parents=True)
        (tree / "kernel" / "a.c").write_text("first\nsecond\nstatic int kept(void)\n")
        (tree / "kernel" / "b.c").write_text("int taken;\n")
        (tree / "kernel" / "c.c").write_text("#define _GNU_SOURCE\n")
        mail = config.UPSTREAM / "0001-a.patch"
        mail.write_text(MAIL.format(n=1, of=1, subject="s", signoff=SIGNOFF, diff=(
            "--- a/kernel/a.c\n+++ b/kernel/a.c\n@@ -1,2 +1,6 @@\n first\n"
            "+static void taken(void)\n+static void fresh(void)\n+static int kept(void)\n"
            "+#define _GNU_SOURCE\n"
            " second\n")))
        self.assertEqual(upstream.name_clashes(tree, [mail]),
                         ["taken (0001-a.patch): kernel/b.c"])

    def test_the_kernel_takes_the_mails_that_change_more_than_selftests(self):
        self.mail("0000-cover-letter.patch", 0, 2)
        self.mail("0001-a.patch", 1, 2)
        self.mail("0002-b.patch", 2, 2, path=kselftest.SELFTESTS + "/futex/x.c")
        self.assertEqual([p.name for p in tree.extra_patches(UPSTREAM)],
                         ["0001-a.patch", "0002-b.patch"])
        self.assertEqual([p.name for p in tree.kernel_patches(UPSTREAM)], ["0001-a.patch"])
        self.assertEqual([p.name for p in tree.patches_for("none+" + UPSTREAM)],
                         ["0001-a.patch"])

    def test_a_mail_mixing_selftests_and_kernel_is_refused(self):
        self.mail("0001-a.patch", 1, 1, path=kselftest.SELFTESTS + "/futex/x.c")
        self.assertEqual([p.name for p in kselftest.selftest_mails()], ["0001-a.patch"])
        (config.UPSTREAM / "0001-a.patch").write_text(
            (config.UPSTREAM / "0001-a.patch").read_text() + DIFF.format(
                path="kernel/a.c", first="first"))
        with self.assertRaisesRegex(Fatal, "split it"):
            kselftest.selftest_mails()


def cells(*statuses):
    return {t: {"status": s} for t, s in zip(("x86_64", "i386", "arm64"), statuses)}


def matrix(mainline, fixed):
    """A matrix.json of mainline and mainline-fix: {case: cells}."""
    return {"kernels": {
        "mainline": {"available": True,
                     "cases": [{"case": c, "cells": v} for c, v in mainline.items()]},
        "mainline-fix": {"available": True,
                         "cases": [{"case": c, "cells": v} for c, v in fixed.items()]}}}


class FixedCases(unittest.TestCase):
    RULES = [("death.exec_*", "fixed by upstream/0001"),
             ("death.race", "[race] fixed by upstream/0001, when the exec wins"),
             ("death.compat@i386", "fixed by upstream/0004, where a kernel has compat")]

    def verdict(self, mainline, fixed):
        with unittest.mock.patch.object(upstream.compare, "load_rules",
                                        return_value=self.RULES):
            return upstream.fixed_cases(matrix(mainline, fixed))

    def test_fails_on_mainline_and_passes_with_the_mails(self):
        rows, failures = self.verdict(
            {"death.exec_a": cells("FAIL", "FAIL", "-"), "death.race": cells("PASS", "FAIL"),
             "death.other": cells("PASS", "PASS"), "death.compat": cells("SKIP", "FAIL")},
            {"death.exec_a": cells("PASS", "PASS", "-"), "death.race": cells("PASS", "PASS"),
             "death.other": cells("PASS", "PASS"), "death.compat": cells("SKIP", "PASS")})
        self.assertEqual(failures, [])
        self.assertEqual([r[0] for r in rows], ["death.exec_a", "death.race", "death.compat"])
        self.assertEqual(rows[2][1:3], ["FAIL on 1 target(s)", "PASS on 1 target(s)"])
        self.assertEqual(rows[0][1:], ["FAIL on 2 target(s)", "PASS on 2 target(s)", "ok"])
        self.assertEqual(rows[1][1], "i386 FAIL, x86_64 PASS")

    def test_each_way_of_not_proving_the_fix_is_a_failure(self):
        _, failures = self.verdict(
            {"death.exec_a": cells("PASS", "FAIL"), "death.exec_b": cells("FAIL", "FAIL"),
             "death.exec_c": cells("SKIP", "FAIL")},
            {"death.exec_a": cells("PASS", "PASS"), "death.exec_b": cells("PASS", "FAIL"),
             "death.exec_c": cells("-", "-")})
        self.assertEqual(failures, [
            "death.exec_a: PASS on mainline/x86_64",
            "death.exec_b: FAIL on mainline-fix/i386",
            "death.exec_c: SKIP on mainline/x86_64, not run on mainline-fix",
            "deviations-upstream.txt names death.race, which the matrix does not have",
            "deviations-upstream.txt names death.compat@i386, which the matrix does not have"])

    def test_a_case_both_kernels_skip_is_not_judged_there(self):
        # A case that needs two CPUs, on guests with one.
        rows, failures = self.verdict(
            {"death.exec_smp": cells("SKIP", "SKIP"), "death.exec_a": cells("SKIP", "FAIL")},
            {"death.exec_smp": cells("SKIP", "SKIP"), "death.exec_a": cells("SKIP", "PASS")})
        self.assertEqual([f for f in failures if "death.exec" in f], [])
        self.assertEqual(rows[0], ["death.exec_a", "FAIL on 1 target(s)", "PASS on 1 target(s)",
                                   "ok"])
        self.assertEqual(rows[1], ["death.exec_smp", "skipped by both on 2 target(s)",
                                   "skipped by both on 2 target(s)", "not run"])

    def test_a_matrix_without_mainline_fix_is_an_error(self):
        m = matrix({}, {})
        m["kernels"]["mainline-fix"] = {"available": False, "reason": "not built"}
        with self.assertRaisesRegex(Fatal, "no mainline-fix run: not built"):
            upstream.fixed_cases(m)


if __name__ == "__main__":
    unittest.main()
