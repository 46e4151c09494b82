"""Render the matrix: matrix.txt (also printed), matrix.json, junit.xml,
kcidb.json (kcidb.py)."""
import json
import re
import xml.etree.ElementTree as ET

from . import kcidb
from .tables import table_lines
from .compare import ABSENT, NA
from .targets import CONTROL, role

STATUS_SHOWN = {"PASS": "PASS", "FAIL": "FAIL", "SKIP": "skip", "ERROR": "ERROR",
                "MISS": "MISS", NA: "-"}


def _shown(cell):
    """A cell's status as the table shows it: a flaky pass is "FLAKY"."""
    if cell.get("flaky"):
        return "FLAKY"
    return STATUS_SHOWN.get(cell.get("status", "MISS"), "?")


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text):
    """Text XML 1.0 can hold: other characters become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text or "")


def _cpu_cell(guest):
    """The hardening flags a guest's CPU showed (smap+smep+sse2), its
    vCPUs online and its preemption model: "smap+smep, 2 CPUs, preempt
    full"; '?' when the guest reported none (it did not boot)."""
    if "cpu_flags" not in guest or guest.get("boot") != "complete":
        return "?"
    cell = "+".join(guest["cpu_flags"]) or "none"
    if guest.get("cpus_online"):
        cell += ", %s CPU%s, preempt %s" % (guest["cpus_online"],
                                            "" if guest["cpus_online"] == "1" else "s",
                                            guest.get("preempt") or "?")
    return cell


def render_text(matrix):
    lines = []
    meta = matrix["meta"]
    targets = matrix["targets"]
    lines.append("robust-futex-matrix: %s, accelerator %s" % (
        meta.get("tree", "?"), meta.get("accel", "?")))
    if meta.get("program_timeout"):
        lines.append("program timeout: %s s each" % meta["program_timeout"])
    if meta.get("libc"):
        lines.append("libc: " + ", ".join(
            "%s %s (%s %s)" % (t, c["link"], c["package"], c["version"])
            for t, c in meta["libc"].items() if t in targets))
    for kernel, k in matrix["kernels"].items():
        lines.append("")
        if not k["available"]:
            lines.append("== kernel %s: not available: %s" % (kernel, k["reason"]))
            continue
        lines.append("== kernel %s (%s)" % (kernel, meta.get("kernels", {}).get(kernel, "")))
        control = role(kernel) == CONTROL
        last = "control" if control else "targets"
        rows = []
        for row in k["cases"]:
            rows.append([row["case"]] + [
                _shown(row["cells"].get(t, {})) for t in targets] + [row["verdict"] if not control
                                     else "(negative control)"])
        guests = k["guests"]
        rows.append(["(guest run)"] + [guests[t]["boot"] for t in targets] + [""])
        rows.append(["(console)"] + [guests[t].get("console_status", "?")
                                     for t in targets] + [""])
        rows.append(["(cpu)"] + [_cpu_cell(guests[t]) for t in targets] + [""])
        lines += table_lines(["case"] + targets + [last], rows)
        for t in targets:
            for c in guests[t].get("console", [])[:3]:
                lines.append("  console %s: %s: %s" % (t, c["kind"], c["line"]))
            if guests[t].get("cpu_flags_missing") and guests[t].get("boot") == "complete":
                lines.append("  cpu %s: %s lacks %s: user accesses were not checked "
                             "for it" % (t, guests[t]["cpu"],
                                         ", ".join(guests[t]["cpu_flags_missing"])))
    for cmp in matrix.get("comparisons", []):
        lines.append("")
        title = "%s vs %s" % (cmp["subject"], cmp["reference"])
        diffs = [d for d in cmp["rows"] if d["ok"] is not None]
        unseen = len(cmp["rows"]) - len(diffs)
        unseen = (" (%d case(s) not compared: MISS on one side)" % unseen) if unseen else ""
        if not diffs:
            lines.append("== %s: every case %smatches on every target%s" % (
                title, "that ran on both " if unseen else "", unseen))
        else:
            lines.append("== %s: %d difference(s)%s; named in %s" % (
                title, len(diffs), unseen, cmp["deviations"]))
            # One line per case and difference, with the targets it is on.
            grouped = {}
            for d in diffs:
                grouped.setdefault((d["case"], d["difference"], d["deviation"]),
                                   []).append(d["target"])
            for (case, difference, why), on in grouped.items():
                lines.append("  %s on %s: %s%s" % (
                    case, ",".join(on), difference,
                    " (deviation: %s)" % why if why else " UNEXPECTED"))
    ctl = matrix.get("control")
    if ctl is not None:
        lines.append("")
        if not ctl["available"]:
            lines.append("== negative control (%s): NOT AVAILABLE: %s" % (
                ctl.get("kernel", "?"), ctl["reason"]))
        else:
            lines.append("== negative control (%s kernel must fail these)" % ctl.get("kernel"))
            for r in ctl["rules"]:
                lines.append("  %-4s %s: %s" % ("ok" if r["ok"] else "FAIL",
                                                r["rule"], r["detail"]))
    s = matrix["summary"]
    lines.append("")
    lines.append("cells: " + ", ".join("%d %s" % (n, k) for k, n in s["counts"].items()))
    if s.get("expected_failures"):
        lines.append("expected failures (what a reference kernel lacks of the series, "
                     "named in its deviations file, or a test's defect named in "
                     "tests/test-defects.txt): %d" % s["expected_failures"])
    if any(s.get("control_counts", {}).values()):
        lines.append("negative control cells (failures expected): " + ", ".join(
            "%d %s" % (n, k) for k, n in s["control_counts"].items() if n))
    for f in s.get("flaky", []):
        lines.append("FLAKY (another suite's race; passed on one of its runs): %s" % f)
    for f in s["failures"][:20]:
        lines.append("FAILED: %s" % f)
    for f in s["incomplete"][:20]:
        lines.append("INCOMPLETE: %s" % f)
    verdict = {0: "PASS: all cases pass and agree",
               1: "FAIL: failures or disagreements (exit 1)",
               2: "INCOMPLETE: results are missing (exit 2)"}[s["exit_status"]]
    lines.append(verdict)
    return "\n".join(lines) + "\n"


def render_junit(matrix):
    root = ET.Element("testsuites", name="robust-futex-matrix")
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}

    def suite(name):
        return ET.SubElement(root, "testsuite", name=name)

    def case(parent, classname, name, status, message="", text=""):
        message, text = _xml(message), _xml(text)
        tc = ET.SubElement(parent, "testcase", classname=_xml(classname), name=_xml(name))
        total["tests"] += 1
        if status in ("FAIL",):
            ET.SubElement(tc, "failure", message=message).text = text
            total["failures"] += 1
        elif status in ("ERROR", "MISS"):
            ET.SubElement(tc, "error", message=message or status).text = text
            total["errors"] += 1
        elif status == "SKIP":
            ET.SubElement(tc, "skipped", message=message)
            total["skipped"] += 1
        return tc

    for kernel, k in matrix["kernels"].items():
        if not k["available"]:
            s = suite("%s" % kernel)
            case(s, kernel, "(kernel available)", "SKIP", k["reason"])
            continue
        for t in matrix["targets"]:
            s = suite("%s.%s" % (kernel, t))
            g = k["guests"][t]
            case(s, "%s.%s" % (kernel, t), "(guest run)",
                 "PASS" if g["boot"] == "complete" else "SKIP" if g["boot"] == ABSENT
                 else "ERROR", g.get("detail", "") or g["boot"])
            console = g.get("console_status", "clean" if g["boot"] == "complete" else "no-log")
            case(s, "%s.%s" % (kernel, t), "(console)",
                 "FAIL" if g.get("console") else "PASS" if console == "clean" else "SKIP",
                 "kernel trouble" if g.get("console") else
                 "not judged: guest %s, console %s" % (g["boot"], console),
                 "\n".join(c["line"] for c in g.get("console", [])))
            for row in k["cases"]:
                cell = row["cells"].get(t)
                if not cell or cell["status"] == NA:
                    continue
                status, message = cell["status"], cell["reason"]
                if role(kernel) == CONTROL and status == "FAIL":
                    status = "PASS"   # expected to fail; judged by the control
                elif row.get("expected_failure") and status == "FAIL":
                    status, message = "SKIP", "expected to fail here: %s" % row["expected_failure"]
                tc = case(s, "%s.%s" % (kernel, t), row["case"], status, message,
                          "\n".join(cell["diag"]))
                if cell.get("flaky"):
                    # Surefire's element: passed on one run, failed on another.
                    ET.SubElement(tc, "flakyFailure", message=_xml(
                        "attempts: %s" % ", then ".join(cell["attempts"])))
        if role(kernel) != CONTROL:
            s = suite("%s.agreement" % kernel)
            for row in k["cases"]:
                status = "PASS" if row["agree"] else "SKIP" if row["agree"] is None else "FAIL"
                if row.get("expected_failure"):
                    status = "SKIP"
                case(s, "%s.agreement" % kernel, row["case"], status, row["verdict"])
    if matrix["kernel_comparison"] or matrix.get("control") is not None:
        s = suite("kernels")
        for d in matrix["kernel_comparison"]:
            case(s, "%s-vs-%s" % (d.get("subject", "series"), d.get("reference", "stock")),
                 "%s@%s" % (d["case"], d["target"]),
                 "PASS" if d["ok"] else "SKIP" if d["ok"] is None else "FAIL",
                 d["difference"])
        ctl = matrix.get("control")
        if ctl is not None and ctl["available"]:
            for r in ctl["rules"]:
                case(s, "negative-control", r["rule"], "PASS" if r["ok"] else "FAIL",
                     r["detail"])
        elif ctl is not None:
            case(s, "negative-control", "(available)", "SKIP", ctl["reason"])
    for k, v in total.items():
        root.set(k, str(v))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def junit_totals(xml_text):
    root = ET.fromstring(xml_text)
    return {k: int(root.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}


def totals(xml_text):
    """{passed, failed, skipped} as junit.xml counts them: a pass is a
    test case with no failure, error or skip element."""
    t = junit_totals(xml_text)
    failed = t["failures"] + t["errors"]
    return {"passed": t["tests"] - failed - t["skipped"], "failed": failed,
            "skipped": t["skipped"]}


def closing_line(xml_text):
    """The plain 'N passed, N failed' line CI systems read."""
    return "%(passed)d passed, %(failed)d failed, %(skipped)d skipped" % totals(xml_text)


def write_all(matrix, out):
    """matrix.txt, junit.xml and matrix.json; the three give the same
    totals (matrix.json's summary.totals is counted from junit.xml)."""
    out.mkdir(parents=True, exist_ok=True)
    text = render_text(matrix)
    (out / "matrix.txt").write_text(text)
    junit = render_junit(matrix)
    (out / "junit.xml").write_text(junit)
    matrix["summary"]["totals"] = totals(junit)
    (out / "matrix.json").write_text(json.dumps(matrix, indent=1) + "\n")
    (out / "kcidb.json").write_text(json.dumps(kcidb.report(matrix), indent=1) + "\n")
    return text + closing_line(junit) + "\n"
