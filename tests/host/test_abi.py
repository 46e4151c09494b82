"""The ABI gate: a correct expected file passes, a moved field is named."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from rfmlib import abi, deps

REPO = Path(__file__).resolve().parents[2]
EXPECTED = REPO / "abi" / "expected.abi"


def run_gate(expected_text, targets="x86"):
    """`rfm abi --system-only` on an expected file, for the ABIs of
    `targets`; (exit status, output)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "expected.abi"
        path.write_text(expected_text)
        r = subprocess.run([sys.executable, str(REPO / "scripts" / "rfm"), "abi",
                            "--system-only", "--expected", str(path)],
                           capture_output=True, text=True, cwd=REPO,
                           env=dict(os.environ, RFM_OUT=d, TARGETS=targets))
        return r.returncode, r.stdout + r.stderr


def moved(text, section, item, value):
    """`text` with `item` of `[section]` set to `value`."""
    out, current = [], None
    for line in text.splitlines():
        if line.startswith("["):
            current = line.split("]")[0][1:]
        if current == section and line.split() and line.split()[0] == item:
            line = "%s %s" % (item, value)
        out.append(line)
    return "\n".join(out) + "\n"


class ParseExpected(unittest.TestCase):
    def test_sections_and_items(self):
        e = abi.parse_expected(EXPECTED)
        self.assertEqual(sorted(e), ["aapcs64", "eabi", "ilp32", "lp64", "n32", "n32be", "n64",
                                     "n64be", "o32", "o32be", "ppc32", "ppc64", "s390", "s390x",
                                     "x32"])
        self.assertEqual(e["ppc32"]["table.ppc.300"],
                         "common set_robust_list sys_set_robust_list compat_sys_set_robust_list")
        self.assertEqual(e["aapcs64"]["sizeof.robust_list_head"], "24")
        self.assertEqual(e["eabi"]["sizeof.robust_list_head"], "12")
        self.assertEqual(e["s390"]["sizeof.robust_list_head"], "12")
        self.assertEqual(e["eabi"]["table.arm64compat.338"],
                         "set_robust_list compat_sys_set_robust_list")
        self.assertEqual(e["lp64"]["sizeof.robust_list_head"], "24")
        self.assertEqual(e["ilp32"]["offset.robust_list_head.list_op_pending"], "8")
        self.assertEqual(e["x32"]["table.64.530"],
                         "x32 set_robust_list compat_sys_set_robust_list")

    def test_header_skips_table_rows(self):
        h = abi.expected_header("x32", {"nr.set_robust_list": "530",
                                        "table.64.530": "x32 a b"})
        self.assertIn('#define RFM_ABI "x32"', h)
        self.assertIn("#define EXPECT_nr_set_robust_list 530", h)
        self.assertNotIn("table", h)


def need_arm_headers(test):
    """The ARM ABIs are checked against the cross C libraries' headers,
    which only make deps TARGETS=arm (or all) installs."""
    missing = [p for p in ("libc6-dev-arm64-cross", "libc6-dev-armhf-cross")
               if deps.installed_version(p) is None]
    if missing:
        test.skipTest("the ARM ABIs' headers are not installed (%s): make deps TARGETS=arm"
                      % ", ".join(missing))


class Gate(unittest.TestCase):
    def test_checked_in_expectations_pass(self):
        status, out = run_gate(EXPECTED.read_text())
        self.assertEqual(status, 0, out)
        self.assertIn("no drift in lp64, ilp32, x32", out)
        self.assertNotIn("aapcs64", out)     # TARGETS=x86: the x86 ABIs only

    def test_checked_in_expectations_pass_on_arm(self):
        need_arm_headers(self)
        status, out = run_gate(EXPECTED.read_text(), targets="arm")
        self.assertEqual(status, 0, out)
        self.assertIn("no drift in aapcs64, eabi", out)
        self.assertIn("/usr/aarch64-linux-gnu/include", out)
        self.assertIn("/usr/arm-linux-gnueabihf/include", out)

    def test_moved_field_is_named(self):
        text = moved(EXPECTED.read_text(), "lp64",
                     "offset.robust_list_head.futex_offset", "12")
        status, out = run_gate(text)
        self.assertEqual(status, 1, out)
        self.assertIn("DRIFT: lp64: offsetof(struct robust_list_head, futex_offset) "
                      "drifted against /usr/include", out)
        self.assertNotIn("DRIFT: ilp32", out)

    def test_wrong_syscall_number_is_named(self):
        status, out = run_gate(moved(EXPECTED.read_text(), "x32",
                                     "nr.get_robust_list", "532"))
        self.assertEqual(status, 1, out)
        self.assertIn("DRIFT: x32: __NR_get_robust_list drifted", out)

    def test_arm_drift_is_named(self):
        need_arm_headers(self)
        text = moved(EXPECTED.read_text(), "eabi", "offset.robust_list_head.futex_offset", "8")
        text = moved(text, "aapcs64", "nr.set_robust_list", "98")
        # x86 and ARM only: this test needs ARM's headers, not MIPS's or PowerPC's.
        status, out = run_gate(text, targets="x86,arm")
        self.assertEqual(status, 1, out)
        self.assertIn("DRIFT: eabi: offsetof(struct robust_list_head, futex_offset) "
                      "drifted against /usr/arm-linux-gnueabihf/include", out)
        self.assertIn("DRIFT: aapcs64: __NR_set_robust_list drifted", out)
        self.assertNotIn("DRIFT: lp64", out)

    def test_unistd_tables(self):
        text = ("#define __NR_set_robust_list 99\n"
                "__SC_COMP(__NR_set_robust_list, sys_set_robust_list, \\\n"
                "\t  compat_sys_set_robust_list)\n"
                "#define __NR_get_robust_list 339\n"
                "__SYSCALL(__NR_get_robust_list, compat_sys_get_robust_list)\n")
        self.assertEqual(abi.unistd_rows(text), {
            "99": "set_robust_list sys_set_robust_list compat_sys_set_robust_list",
            "339": "get_robust_list compat_sys_get_robust_list"})

    def test_pahole_members(self):
        dump = (REPO / "abi" / "pahole" / "ilp32.txt").read_text()
        head = abi.pahole_members(dump)["robust_list_head"]
        self.assertEqual(head["size"], 12)
        self.assertEqual(head["members"], [("list", 0, 4), ("futex_offset", 4, 4),
                                           ("list_op_pending", 8, 4)])


if __name__ == "__main__":
    unittest.main()
