"""kcidb.py: out/kcidb.json against KCIDB's published schema (I/O 5.3),
validated with Debian's python3-jsonschema, and its status mapping."""
import datetime
import hashlib
import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import compare, kcidb, report

from tests.host import util

SCHEMA = Path(__file__).resolve().parent / "data" / "kcidb.v5_3.schema.json"
# The copy published beside the checkout (see data/README), when there is one.
PUBLISHED = Path(__file__).resolve().parents[3] / "shared" / "kcidb" / SCHEMA.name
CHECK_KERNELS = ("series", "stock", "baseline")
DATE = "2026-12-03T12:00:00+00:00"


def matrix(runs=None, kernels=CHECK_KERNELS, **kwargs):
    """A matrix-check matrix with the meta a run records."""
    meta = {"tree": "linux-source-6.1 6.1.192-3", "accel": "tcg", "date": DATE,
            "kernels": {k: "6.1.192 + 2 patch(es)" for k in kernels},
            "provenance": util.provenance(kernels=kernels)}
    return compare.build_matrix(runs or util.check_matrix(), util.FIXTURE_TARGETS,
                                list(kernels), control=util.CONTROL, meta=meta, **kwargs)


def validator():
    jsonschema = util.debian_module("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft202012Validator(schema,
                                           format_checker=jsonschema.FormatChecker())


def tests_by(doc, kernel, target, path):
    return [t for t in doc["tests"]
            if t["id"].endswith("/%s/%s/%s" % (kernel, target, path))]


def the_test(doc, kernel, target, path):
    (t,) = tests_by(doc, kernel, target, path)
    return t


class Schema(unittest.TestCase):
    def assert_valid(self, doc):
        errors = sorted(validator().iter_errors(doc), key=str)
        self.assertEqual([], ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
                              for e in errors])

    def test_a_check_run_validates(self):
        doc = kcidb.report(matrix())
        self.assert_valid(doc)
        self.assertEqual(doc["version"], {"major": 5, "minor": 3})
        # RFC 3339 times (not every jsonschema checks the format).
        times = [o["start_time"] for kind in ("checkouts", "builds", "tests")
                 for o in doc[kind]]
        self.assertTrue(times)
        for t in set(times):
            self.assertIsNotNone(datetime.datetime.fromisoformat(t).tzinfo, t)

    def test_failures_misses_skips_and_not_built_cells_validate(self):
        runs = util.check_matrix(series={
            "i386": util.guest_run("i386", "fail_i386"),
            "x86_64-ia32": util.guest_run("x86_64-ia32", "truncated", boot="incomplete"),
            "x86_64": util.guest_run("x86_64", "extra", programs=("robust_stress", "smoke"))})
        del runs["stock"]["i386"]
        self.assert_valid(kcidb.report(matrix(runs)))
        self.assert_valid(kcidb.report(util.matrix({"series": util.variant_runs()})))

    def test_the_file_written_with_the_matrix_validates(self):
        with tempfile.TemporaryDirectory() as d:
            report.write_all(matrix(), Path(d))
            self.assert_valid(json.loads((Path(d) / "kcidb.json").read_text()))

    def test_the_validator_rejects_what_the_schema_forbids(self):
        doc = kcidb.report(matrix())
        doc["tests"][0]["status"] = "BROKEN"
        doc["builds"][0]["id"] = "no-origin-prefix"
        doc["version"]["minor"] = 4
        paths = {"/".join(map(str, e.absolute_path)) for e in validator().iter_errors(doc)}
        self.assertEqual(paths, {"tests/0/status", "builds/0/id", "version/minor"})

    @unittest.skipUnless(PUBLISHED.exists(), "no published copy beside the checkout")
    def test_the_vendored_schema_is_the_published_one(self):
        self.assertEqual(SCHEMA.read_bytes(), PUBLISHED.read_bytes())


class Objects(unittest.TestCase):
    def setUp(self):
        self.doc = kcidb.report(matrix())

    def test_a_checkout_per_source_with_kcidbs_patchset_hash(self):
        series = [{"sha256": "%064x" % n} for n in (1, 2)]
        # As `sha256sum *.patch | cut -c-64 | sha256sum` makes it.
        want = hashlib.sha256(("%064x\n%064x\n" % (1, 2)).encode()).hexdigest()
        self.assertEqual(kcidb.patchset_hash(series), want)
        hashes = {c["id"]: c["patchset_hash"] for c in self.doc["checkouts"]}
        self.assertEqual(hashes, {
            "robust_futex_matrix:linux-source-6.1_6.1.192-3+" + want[:16]: want,
            "robust_futex_matrix:linux-source-6.1_6.1.192-3": "",
            "robust_futex_matrix:linux-source-6.1_6.1.192-3+"
            + kcidb.patchset_hash(series[:1])[:16]: kcidb.patchset_hash(series[:1])})
        self.assertIn("rfm_matrix", self.doc["checkouts"][0]["misc"])

    def test_a_build_per_kernel_and_config(self):
        builds = {(b["misc"]["variant"], b["misc"]["kconfig"]): b for b in self.doc["builds"]}
        self.assertEqual(set(builds), {(k, kc) for k in CHECK_KERNELS
                                       for kc in ("x86_64", "i386")})
        b = builds[("series", "i386")]
        self.assertEqual((b["architecture"], b["compiler"], b["status"]),
                         ("i386", "gcc 12", "PASS"))
        self.assertEqual(b["config_name"],
                         "tinyconfig + common.config + i386.config + gcov-runtime.config")
        checkouts = {c["id"] for c in self.doc["checkouts"]}
        self.assertTrue(all(b["checkout_id"] in checkouts for b in builds.values()))

    def test_a_test_per_case_and_target_plus_guest_and_console(self):
        tests = self.doc["tests"]
        self.assertEqual(len(tests), 3 * 3 * (3 + 2))
        self.assertEqual(len({t["id"] for t in tests}), len(tests))
        builds = {b["id"]: b for b in self.doc["builds"]}
        t = the_test(self.doc, "series", "x86_64-ia32",
                     "robust_futex_matrix.smoke.set_get_roundtrip")
        self.assertEqual(builds[t["build_id"]]["misc"]["kconfig"], "x86_64")
        self.assertEqual(t["environment"]["misc"]["target"], "x86_64-ia32")
        self.assertEqual(t["misc"]["obs"]["head_len"], "12")
        self.assertEqual(t["misc"]["targets"], "agree; abi: head_len=24|12|12")
        self.assertEqual(t["start_time"], DATE)

    def test_the_origin_can_be_set_and_is_checked(self):
        with mock.patch.dict(os.environ, {"KCIDB_ORIGIN": "my_lab"}):
            doc = kcidb.report(matrix())
        self.assertTrue(all(o["id"].startswith("my_lab:") and o["origin"] == "my_lab"
                            for kind in ("checkouts", "builds", "tests") for o in doc[kind]))
        with mock.patch.dict(os.environ, {"KCIDB_ORIGIN": "My-Lab"}):
            with self.assertRaises(kcidb.Fatal):
                kcidb.report(matrix())


class StatusMapping(unittest.TestCase):
    def status(self, doc, kernel, target, path):
        return the_test(doc, kernel, target, path)["status"]

    def test_pass_fail_and_the_baselines_raw_failures(self):
        doc = kcidb.report(matrix(util.check_matrix(
            series={"i386": util.guest_run("i386", "fail_i386")})))
        death = "robust_futex_matrix.smoke.death_one_lock"
        self.assertEqual(self.status(doc, "series", "i386", death), "FAIL")
        self.assertEqual(self.status(doc, "series", "x86_64", death), "PASS")
        t = the_test(doc, "baseline", "x86_64", death)
        self.assertEqual((t["status"], t["misc"]["negative_control"]), ("FAIL", True))
        self.assertEqual(the_test(doc, "series", "i386", death)["misc"]["vs_stock"],
                         "status FAIL vs PASS (unexpected)")

    def test_miss_and_an_unfinished_guest(self):
        doc = kcidb.report(matrix(util.check_matrix(series={"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")})))
        self.assertEqual(self.status(doc, "series", "x86_64-ia32",
                                     "robust_futex_matrix.smoke.death_one_lock"), "MISS")
        self.assertEqual(self.status(doc, "series", "x86_64-ia32",
                                     "robust_futex_matrix.guest_run"), "ERROR")

    def test_error_for_a_timed_out_program(self):
        doc = kcidb.report(matrix(util.check_matrix(series={"x86_64": util.guest_run(
            "x86_64", "timeout")})))
        self.assertEqual(self.status(doc, "series", "x86_64",
                                     "robust_futex_matrix.smoke.death_one_lock"), "ERROR")

    def test_console_trouble_is_fail(self):
        doc = kcidb.report(matrix(util.check_matrix(series={"i386": util.guest_run(
            "i386", "panic", boot="incomplete")})))
        t = the_test(doc, "series", "i386", "robust_futex_matrix.console")
        self.assertEqual(t["status"], "FAIL")
        self.assertIn("Kernel panic", t["log_excerpt"])

    def test_the_console_of_a_guest_that_stopped_early_is_not_a_pass(self):
        doc = kcidb.report(matrix(util.check_matrix(series={"x86_64-ia32": util.guest_run(
            "x86_64-ia32", "truncated", boot="incomplete")})))
        t = the_test(doc, "series", "x86_64-ia32", "robust_futex_matrix.console")
        self.assertEqual((t["status"], t["comment"]), ("MISS", "not judged: guest incomplete"))
        self.assertEqual(self.status(doc, "series", "x86_64", "robust_futex_matrix.console"),
                         "PASS")

    def test_skip_and_not_built(self):
        doc = kcidb.report(util.matrix({"series": util.variant_runs()}))
        t = the_test(doc, "series", "i386", "robust_futex_matrix.robust_abi.pi_owner_died")
        self.assertEqual(t["status"], "SKIP")
        doc = kcidb.report(util.matrix({"series": util.with_runs(util.complete_runs(), {
            "x86_64": util.guest_run("x86_64", "extra", programs=("robust_stress", "smoke"))})}))
        t = the_test(doc, "series", "i386", "robust_futex_matrix.robust_stress")
        self.assertEqual((t["status"], t["misc"]["rfm_status"]), ("SKIP", "-"))

    def test_a_guest_that_never_ran_is_miss_with_no_case_tests(self):
        runs = util.check_matrix()
        del runs["stock"]["i386"]
        doc = kcidb.report(matrix(runs))
        self.assertEqual(self.status(doc, "stock", "i386", "robust_futex_matrix.guest_run"),
                         "MISS")
        self.assertEqual([t["path"] for t in doc["tests"]
                          if t["id"].split("/")[-3:-1] == ["stock", "i386"]],
                         ["robust_futex_matrix.guest_run"])

    def test_every_project_status_is_mapped_to_a_kcidb_one(self):
        kcidb_statuses = set(json.loads(SCHEMA.read_text())["$defs"]["status"]["enum"])
        for table in (kcidb.CASE_STATUS, kcidb.GUEST_STATUS, kcidb.CONSOLE_STATUS):
            self.assertLessEqual(set(table.values()), kcidb_statuses)
        self.assertEqual(set(kcidb.CASE_STATUS),
                         set(util.ktap.STATUSES) | {compare.NA})

    def test_paths_keep_to_the_schemas_characters(self):
        self.assertEqual(kcidb.test_path("smoke.(program)"),
                         "robust_futex_matrix.smoke._program_")
        self.assertEqual(kcidb.test_path("my prog.#2"), "robust_futex_matrix.my_prog._2")


if __name__ == "__main__":
    unittest.main()
