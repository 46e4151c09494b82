"""docs/rules.md: every rule of the ABI the series implements, written
from the documents, each pinned by the cases that fail when it is broken.

A rule that names no case, a case name or glob that matches no case, a
`where` that means no targets, or a rule whose cases do not run on every
target it applies to fails here."""
import fnmatch
import re
import unittest

from rfmlib import config, guest
from rfmlib.targets import TARGET_GROUPS, TARGETS

RULES = config.REPO / "docs" / "rules.md"
HEADER = "| id | rule | source | cases | where |"
CASE_RE = re.compile(r"\bRFM_CASE\w*\(\s*(\w+)")
ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# A rule no case can pin yet: why, and the issue whose work will pin it.
OPEN_RE = re.compile(r"^open: .{20,} \(issue \d+(, item \d+)?\)$")
# The suites whose programs the matrix runs: the cases, make fuzz, make stress.
SUITES = ("tests", "fuzz", "stress")

GROUPED = [t for t in TARGETS if t.grouped]


def _kernel_64bit(t):
    return t.kconfig in ("x86_64", "arm64", "mips64el", "mips64", "ppc64", "s390x")


# What each word of the `where` column means, as target names.
WHERE = {
    "all": {t.name for t in GROUPED},
    "64-bit kernels": {t.name for t in GROUPED if _kernel_64bit(t)},
    "32-bit kernels": {t.name for t in GROUPED if not _kernel_64bit(t)},
    "compat": {t.name for t in GROUPED if _kernel_64bit(t) and t.abi == "ilp32"},
    # compat tasks with 4 GiB below them (MIPS's n32 and o32 and s390's
    # 31-bit tasks have 2)
    "compat 4g": {t.name for t in GROUPED if _kernel_64bit(t) and t.abi == "ilp32"
                  and not t.kconfig.startswith(("mips", "s390"))},
    "ilp32": {t.name for t in GROUPED if t.abi == "ilp32"},
    "x86": set(TARGET_GROUPS["x86"]),
    "x86 vdso": set(TARGET_GROUPS["x86"]),
    "x86 ilp32": {t.name for t in GROUPED if t.x86 and t.abi == "ilp32" and t.userland != "x32"},
    "x32": {t.name for t in GROUPED if t.userland == "x32"},
    "lp64": {t.name for t in GROUPED if t.abi == "lp64"},
    "x86 lp64": {t.name for t in GROUPED if t.x86 and t.abi == "lp64"},
    # a task that can register a native list and a compat one: on x86_64,
    # through int $0x80 (64-bit) or 273 (x32); an arm64 task cannot make
    # AArch32 calls
    "two lists": {t.name for t in GROUPED if t.kconfig == "x86_64" and
                  t.userland in ("lp64", "x32")},
}


def parse_rules(text):
    """The rows of every rules table: dicts of id, rule, source, cases
    (a list of globs, empty for `none` or `open: ...`), open (the reason,
    or None), where, and the line number."""
    rows, in_table = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() == HEADER:
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(set(c) <= set("-: ") for c in cells):
            continue
        if len(cells) != 5:
            raise ValueError("rules.md:%d: %d cells, not 5" % (n, len(cells)))
        rid, rule, source, cases, where = cells
        is_open = cases.startswith("open:")
        globs = ([] if cases == "none" or is_open else
                 [c.strip().strip("`") for c in cases.split(",")])
        rows.append({"id": rid, "rule": rule, "source": source, "cases": globs,
                     "open": cases if is_open else None, "where": where, "line": n})
    return rows


def case_targets():
    """{"program.case": {target names}} for every case of every suite."""
    out = {}
    for t in GROUPED:
        for suite in SUITES:
            for name, src in guest.sources_for(t.user, suite):
                for case in CASE_RE.findall(src.read_text()):
                    out.setdefault("%s.%s" % (name, case), set()).add(t.name)
    return out


class Rules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rules = parse_rules(RULES.read_text())
        cls.cases = case_targets()

    def test_there_are_rules(self):
        self.assertGreaterEqual(len(self.rules), 50)

    def test_ids_are_unique_and_plain(self):
        seen = set()
        for r in self.rules:
            self.assertRegex(r["id"], ID_RE, "rules.md:%d" % r["line"])
            self.assertNotIn(r["id"], seen, "rules.md:%d: %s twice" % (r["line"], r["id"]))
            seen.add(r["id"])

    def test_every_rule_says_what_and_where_from(self):
        for r in self.rules:
            self.assertTrue(r["rule"] and r["source"], "rules.md:%d" % r["line"])

    def test_every_rule_names_a_case(self):
        unpinned = ["%s (rules.md:%d)" % (r["id"], r["line"]) for r in self.rules
                    if not r["cases"] and not r["open"]]
        self.assertEqual(unpinned, [], "rules no case pins")

    def test_an_open_rule_says_why_and_which_issue_pins_it(self):
        for r in self.rules:
            if r["open"]:
                self.assertRegex(r["open"], OPEN_RE, "rules.md:%d" % r["line"])

    def test_open_rules_are_few(self):
        # Each is a gap in the proof, not a way around this test.
        self.assertLessEqual(sum(1 for r in self.rules if r["open"]), 3)

    def test_every_case_name_matches_a_case(self):
        for r in self.rules:
            for glob in r["cases"]:
                self.assertTrue(fnmatch.filter(self.cases, glob),
                                "rules.md:%d: %s matches no case" % (r["line"], glob))

    def test_where_names_targets(self):
        for r in self.rules:
            self.assertIn(r["where"], WHERE, "rules.md:%d" % r["line"])
            self.assertTrue(WHERE[r["where"]], "%s: no target" % r["where"])

    def test_the_cases_run_wherever_the_rule_applies(self):
        for r in self.rules:
            ran = set()
            for glob in r["cases"]:
                for case in fnmatch.filter(self.cases, glob):
                    ran |= self.cases[case]
            if r["open"]:
                continue
            missing = WHERE.get(r["where"], set()) - ran
            self.assertFalse(missing, "rules.md:%d: %s applies on %s, where none of its "
                             "cases runs" % (r["line"], r["id"], ", ".join(sorted(missing))))

    def test_the_parser_sees_every_kind_of_row(self):
        text = "\n".join([HEADER, "|---|---|---|---|---|",
                          "| a-b | x | y | `p.c1`, `p.c*` | all |",
                          "| c | x | y | none | compat |",
                          "| d | x | y | open: why (issue 38) | all |", "",
                          "| not | a | rule |"])
        rows = parse_rules(text)
        self.assertEqual([r["cases"] for r in rows], [["p.c1", "p.c*"], [], []])
        self.assertEqual(rows[1]["where"], "compat")
        self.assertEqual([r["open"] for r in rows], [None, None, "open: why (issue 38)"])

    def test_every_target_word_means_what_it_says(self):
        self.assertEqual(WHERE["compat"], {"x86_64-ia32", "x86_64-x32", "arm64-aarch32",
                                           "mips64el-n32", "mips64el-o32", "mips64-n32",
                                           "mips64-o32", "ppc64-ppc32", "s390x-s390"})
        self.assertEqual(WHERE["compat 4g"], {"x86_64-ia32", "x86_64-x32", "arm64-aarch32",
                                              "ppc64-ppc32"})
        self.assertEqual(WHERE["32-bit kernels"], {"i386", "i386-pentium3", "armhf"})
        self.assertEqual(WHERE["x32"], {"x86_64-x32"})
        self.assertEqual(WHERE["lp64"], {"x86_64", "arm64", "mips64el", "mips64", "ppc64",
                                         "s390x"})
        self.assertEqual(WHERE["two lists"], {"x86_64", "x86_64-x32"})
        self.assertEqual(WHERE["x86 ilp32"], {"x86_64-ia32", "i386", "i386-pentium3"})


if __name__ == "__main__":
    unittest.main()
