"""kselftest.py: which of mainline's futex selftests are built, and how a
program a compiler cannot build becomes a row that says so."""
import shutil
import tempfile
import unittest
import unittest.mock
from pathlib import Path

from rfmlib import kselftest
from rfmlib.log import Fatal

MAKEFILE = """\
INCLUDES := -I../include
TEST_GEN_PROGS := \\
\tfutex_wait_timeout \\
\trobust_list \\
\tfutex_lock_pi_exiting

TEST_PROGS := run.sh
"""


class Programs(unittest.TestCase):
    def tree(self, makefile=MAKEFILE):
        d = Path(tempfile.mkdtemp(prefix="rfm-ksft-"))
        self.addCleanup(shutil.rmtree, d)
        suite = d / kselftest.SUITE_DIR
        suite.mkdir(parents=True)
        (suite / "Makefile").write_text(makefile)
        return d

    def test_the_makefiles_programs_in_its_order(self):
        self.assertEqual(kselftest.programs(self.tree()),
                         ["futex_wait_timeout", "robust_list", "futex_lock_pi_exiting"])

    def test_a_makefile_without_programs_is_an_error(self):
        with self.assertRaisesRegex(Fatal, "no TEST_GEN_PROGS"):
            kselftest.programs(self.tree("TEST_PROGS := run.sh\n"))

    def test_an_exclusion_the_tree_no_longer_has_is_an_error(self):
        with unittest.mock.patch.dict(kselftest.EXCLUDED, {"futex_gone": "why"}):
            with self.assertRaisesRegex(Fatal, "futex_gone"):
                kselftest.programs(self.tree())

    def test_the_stub_of_a_gap_reports_one_skipped_case(self):
        text = kselftest.STUB % "no compiler for it"
        self.assertIn('puts("ok 1 (not built) # SKIP no compiler for it");', text)
        self.assertIn('puts("1..1");', text)

    def test_every_gap_names_a_program_a_compiler_and_a_reason(self):
        for (program, cc), why in kselftest.BUILD_GAPS.items():
            self.assertTrue(program and cc and len(why) > 40, program)
