"""make host-test's runner: a module per process; a module that fails,
or runs no test, fails the whole."""
import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import config, selftest

PASSING = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n"
FAILING = PASSING.replace("pass", "self.assertEqual(1, 2)")


class HostTestRunner(unittest.TestCase):
    def run_with(self, modules):
        with tempfile.TemporaryDirectory() as d:
            repo = Path(d)
            (repo / "tests" / "host").mkdir(parents=True)
            (repo / "tests" / "__init__.py").write_text("")
            (repo / "tests" / "host" / "__init__.py").write_text("")
            for name, text in modules.items():
                (repo / "tests" / "host" / ("test_%s.py" % name)).write_text(text)
            out = io.StringIO()
            with mock.patch.object(config, "REPO", repo), contextlib.redirect_stdout(out), \
                    contextlib.redirect_stderr(out):
                return selftest.cmd_host_tests(None), out.getvalue()

    def test_passing_modules_pass(self):
        status, out = self.run_with({"a": PASSING, "b": PASSING})
        self.assertEqual(status, 0, out)
        self.assertIn("2 test(s) in 2 module(s)", out)

    def test_a_failing_module_fails_the_whole_and_is_shown(self):
        status, out = self.run_with({"a": PASSING, "b": FAILING})
        self.assertEqual(status, 1, out)
        self.assertIn("AssertionError: 1 != 2", out)
        self.assertIn("failed: test_b", out)

    def test_a_module_that_runs_no_test_fails(self):
        status, out = self.run_with({"a": PASSING, "empty": "import unittest\n"})
        self.assertEqual(status, 1, out)
        self.assertIn("FAIL test_empty: exit 0, 0 test(s) run", out)

    def test_no_module_at_all_fails(self):
        status, out = self.run_with({})
        self.assertEqual(status, 1, out)


if __name__ == "__main__":
    unittest.main()
