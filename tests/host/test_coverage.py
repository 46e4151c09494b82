"""make coverage's host side: the counters' stream from the guest, lcov's
tracefiles, the lines the series adds, the exemptions of docs/coverage.md
and the verdict; and the coverage kernel's guest command line."""
import base64
import shutil
import tempfile
import unittest
from pathlib import Path

from rfmlib import coverage, kbuild, qemu
from rfmlib.config import KCONFIG
from rfmlib.log import Fatal
from rfmlib.targets import (KERNEL_CONFIGS, KERNEL_VARIANTS, kernel_coverage, target,
                            variant_configs, variant_slot)


def stream(files, end="complete"):
    out = []
    for path, data in files.items():
        text = base64.b64encode(data).decode()
        out.append("gcda %s %d" % (path, len(data)))
        out += [text[i:i + 76] for i in range(0, len(text), 76)] or [""]
        out.append("end")
    if end == "complete":
        out.append("complete %d" % len(files))
    elif end:
        out.append(end)
    return "\n".join(out) + "\n"


class Counters(unittest.TestCase):
    FILES = {"/b/kernel/futex/robust.gcda": bytes(range(256)) * 3,
             "/b/fs/exec.gcda": b"\x00\x01\x02"}

    def test_every_file_comes_back_whole(self):
        self.assertEqual(coverage.parse_counters(stream(self.FILES)), self.FILES)

    def test_a_stream_cut_short_is_an_error(self):
        text = stream(self.FILES)
        for cut in (text[:len(text) // 2], stream(self.FILES, end=None)):
            with self.assertRaises(Fatal):
                coverage.parse_counters(cut)

    def test_a_guest_that_could_not_read_its_counters_is_an_error(self):
        with self.assertRaisesRegex(Fatal, "could not read"):
            coverage.parse_counters(stream(self.FILES, end="failed"))

    def test_a_count_or_size_that_does_not_match_is_an_error(self):
        with self.assertRaisesRegex(Fatal, "says 3 files"):
            coverage.parse_counters(stream(self.FILES, end="complete 3"))
        bad = stream(self.FILES).replace("exec.gcda 3", "exec.gcda 4")
        with self.assertRaisesRegex(Fatal, "has 3 bytes"):
            coverage.parse_counters(bad)

    def test_nothing_at_all_is_an_error(self):
        with self.assertRaises(Fatal):
            coverage.parse_counters("")


INFO = """TN:
SF:/t/kernel/futex/robust.c
DA:3,5
DA:4,0
DA:6,2
BRDA:3,0,0,1
BRDA:3,0,1,-
BRDA:6,0,0,0
BRDA:6,0,1,4
end_of_record
"""


class Tracefiles(unittest.TestCase):
    def test_lines_and_branches(self):
        info = coverage.parse_info(INFO)["/t/kernel/futex/robust.c"]
        self.assertEqual(info["lines"], {3: 5, 4: 0, 6: 2})
        self.assertEqual(info["branches"], {3: [1, 0], 6: [0, 4]})

    def test_added_lines_are_the_inserted_and_the_changed(self):
        before = "a\nb\nc\nd\n"
        after = "a\nB\nc\nnew\nd\n"
        self.assertEqual(coverage.added_lines(before, after), {2, 4})
        self.assertEqual(coverage.added_lines("", "x\ny\n"), {1, 2})


SERIES = """int a;

static int f(int x)
{
	if (x)
		goto out;
	if (x > 1)
		goto out;
	WARN_ON_ONCE(1);
out:
	return x;
}
"""
PRISTINE = "int a;\n\nstatic int f(int x)\n{\n\treturn x;\n}\n"
TABLE = "| file | function | line | configs | why |\n|---|---|---|---|---|\n"


class Verdict(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.tree, self.pristine = self.dir / "series", self.dir / "pristine"
        for root, text in ((self.pristine, PRISTINE), (self.tree, SERIES)):
            (root / "kernel/futex").mkdir(parents=True)
            (root / "kernel/futex/robust.c").write_text(text)
        source = str(self.tree / "kernel/futex/robust.c")
        self.info = {"x86_64": coverage.parse_info(
            "SF:%s\nDA:5,4\nDA:6,3\nDA:7,1\nDA:8,0\nDA:9,0\nDA:11,4\n"
            "BRDA:5,0,0,3\nBRDA:5,0,1,1\nBRDA:7,0,0,1\nBRDA:7,0,1,-\nend_of_record\n" % source)}

    def judge(self, table=""):
        return coverage.judge(self.info, self.tree, self.pristine,
                              coverage.load_exemptions(TABLE + table))

    def test_an_added_line_not_reached_fails_and_is_named(self):
        rows, unreached, stale = self.judge()
        self.assertEqual(unreached, ["x86_64 kernel/futex/robust.c:8: goto out; (in f)",
                                     "x86_64 kernel/futex/robust.c:9: WARN_ON_ONCE(1); (in f)"])
        self.assertEqual((rows[0]["lines"], rows[0]["reached"]), (5, 3))
        self.assertEqual((rows[0]["branches"], rows[0]["branches_taken"]), (4, 3))
        self.assertEqual(rows[0]["branches_not_all_taken"], ["7 (1 of 2 taken)"])
        text, pct = coverage.summary_text(rows, unreached, stale)
        self.assertIn("FAIL: 2 line(s) not reached", text)
        self.assertIn("x86_64 kernel/futex/robust.c: 7 (1 of 2 taken)", text)
        self.assertEqual(pct, 75.0)

    def test_an_exemption_names_one_line_of_its_function(self):
        _, unreached, stale = self.judge(
            "| `kernel/futex/robust.c` | `f` | `goto out;` @2 | all | needs a fault |\n")
        self.assertEqual(unreached, ["x86_64 kernel/futex/robust.c:9: WARN_ON_ONCE(1); (in f)"])
        self.assertEqual(stale, [])

    def test_an_exemption_of_a_reached_line_is_stale(self):
        # the first `goto out;` is reached: its row excuses nothing
        _, unreached, stale = self.judge(
            "| `kernel/futex/robust.c` | `f` | `goto out;` | all | was thought unreachable |\n")
        self.assertEqual(len(unreached), 2)
        self.assertEqual(stale, ["kernel/futex/robust.c: f: goto out; @1"])

    def test_an_exemption_of_a_config_not_judged_is_neither_used_nor_stale(self):
        _, unreached, stale = self.judge(
            "| `kernel/futex/robust.c` | `f` | `WARN_ON_ONCE(1);` | i386 | a broken arch |\n")
        self.assertEqual(len(unreached), 2)
        self.assertEqual(stale, [])

    def test_a_row_without_a_reason_is_refused(self):
        with self.assertRaises(Fatal):
            coverage.load_exemptions(TABLE + "| `a.c` | `f` | `x;` | all |  |\n")

    def test_a_pipe_in_a_line_is_escaped(self):
        rows = coverage.load_exemptions(TABLE + "| `a.c` | `f` | `if (a \\|\\| b)` | all | why |\n")
        self.assertEqual(list(rows), [("a.c", "f", "if (a || b)", 1)])

    def test_nothing_judged_is_a_failure(self):
        text, _ = coverage.summary_text([], [], [])
        self.assertIn("FAIL: no line of the series was judged", text)

    def test_functions_by_the_kernels_layout(self):
        lines = ["SYSCALL_DEFINE2(set_robust_list, struct robust_list_head __user *, head,",
                 "\t\tsize_t, len)", "{", "\treturn 0;", "}", "",
                 "static __always_inline int", "fetch_robust_entry(struct robust_list **e,",
                 "\t\t   bool *pi)", "{", "\tif (x) {", "\t}", "}"]
        funcs = coverage.functions_of(lines)
        self.assertEqual(funcs[4], "set_robust_list")
        self.assertEqual(funcs[6], None)
        self.assertEqual(funcs[11], "fetch_robust_entry")
        self.assertEqual(funcs[12], "fetch_robust_entry")

    def test_the_projects_own_table_parses(self):
        self.assertTrue(coverage.load_exemptions(coverage.EXEMPTIONS.read_text()))


class Guest(unittest.TestCase):
    def test_only_the_coverage_kernel_writes_counters(self):
        self.assertTrue(kernel_coverage("coverage"))
        self.assertFalse(any(kernel_coverage(k) for k in KERNEL_VARIANTS if k != "coverage"))

    def test_the_counters_get_a_port_of_their_own(self):
        for name, port in (("x86_64", "ttyS2"), ("arm64", "hvc1")):
            t = target(name)
            line = qemu.kernel_command_line(t, "tests", "tcg", coverage=True)
            self.assertIn("rfm.coverage=/dev/%s" % port, line)
            self.assertNotIn("rfm.coverage", qemu.kernel_command_line(t, "tests", "tcg"))
            cmd = qemu.qemu_command(t, Path("/k/bzImage"), Path("/i.cpio"), "tcg", "tests",
                                    Path("/c"), Path("/r"), coverage=Path("/g"))
            self.assertIn("/g", " ".join(cmd))
            self.assertNotEqual(t.coverage_port, t.results_port)


class Build(unittest.TestCase):
    """The coverage kernel is a few files on top of the series', in the
    series' build directory."""

    def test_it_shares_the_series_slot_and_is_x86_only(self):
        self.assertEqual(variant_slot("coverage"), "series")
        self.assertEqual(variant_configs("coverage"), ("x86_64", "i386"))
        for kc in ("x86_64", "i386"):
            self.assertIn("gcov-runtime.config", KERNEL_CONFIGS[kc].tiny_fragments)
        # a distribution's config does not take it
        debian = Path("/debian.config")
        self.assertNotIn(KCONFIG / "gcov-runtime.config",
                         kbuild.fragment_paths(KERNEL_CONFIGS["x86_64"], debian))
        self.assertIn(KCONFIG / "gcov-runtime.config",
                      kbuild.fragment_paths(KERNEL_CONFIGS["x86_64"]))

    def test_only_the_notes_of_objects_built_with_gcov_are_kept(self):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        for name, flags in (("now", "gcc -fprofile-arcs -ftest-coverage -c"),
                            ("before", "gcc -c")):
            (d / ("%s.gcno" % name)).write_text("notes")
            (d / (".%s.o.cmd" % name)).write_text("cmd_%s.o := %s %s.c" % (name, flags, name))
        (d / "orphan.gcno").write_text("notes")
        kbuild.keep_gcov_notes(d, d / "kept")
        self.assertEqual(sorted(p.name for p in (d / "kept").iterdir()), ["now.gcno"])


if __name__ == "__main__":
    unittest.main()
