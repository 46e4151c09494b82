"""The one comparer: joins runs on case name, across targets and kernels.

Input: {kernel: {target: GuestRun}} plus the target table. Output: a plain
dict (the content of matrix.json) that report.py renders. Three questions:

1. Across targets, per kernel: does every case have the same status and
   the same observations on every target? An observation marked [abi] need
   only agree between targets of the same ABI; one marked [target: why] may
   differ, and the reason is shown. A SKIP, ERROR or MISS is never
   agreement.
2. Across kernels, per target: does each subject (`series`) match each
   of its references (`stock`, `mainline`) on every case (status and
   observations), except where that reference's deviations file
   (patches/deviations.txt, patches/deviations-mainline.txt) names the
   case? A reference may be held against another with a file of its own
   (`mainline-fix` against `mainline`: patches/deviations-upstream.txt).
   Kernels are told apart by their role (targets.role), never by name.
3. The negative control: does it fail what tests/negative-control.txt
   says it must (so the tests can be seen to fail)?
"""
import fnmatch
import re
from dataclasses import dataclass, field

from . import config, ktap
from .targets import (CONTROL, HARDENING_CPU_FLAGS, REFERENCE, TARGETS, comparisons,
                      deviations_files, role)
from .ktap import FAIL, PASS, SKIP, ERROR, MISS

NA = "-"   # the case is not built for this target's word size
# The boot status of a kernel never booted on a target whose ABI it lacks
# (targets.ABIS_REMOVED): every cell of it is NA, with the reason.
ABSENT = "no such ABI"

# Cases of another suite (mainline's selftests) that are wrong on some
# targets, on every kernel: `case@target-glob  reason` lines. The test's
# defect, not a kernel's: its cells must fail where a line names them and
# pass elsewhere, on the subject as on each reference.
TEST_DEFECTS = config.REPO / "tests" / "test-defects.txt"
TEST_DEFECT = "a defect of the test, on every kernel: "


@dataclass
class GuestRun:
    """What one boot left: its status, parsed results and console findings."""
    target: str
    boot_status: str                     # see qemu.Boot.status
    run: ktap.Run
    console: list = field(default_factory=list)   # [(kind, line)]
    programs: tuple = ()                 # programs the image held
    seconds: float = 0.0
    detail: str = ""
    console_seen: bool = False           # the console log holds anything


def console_status(run):
    """The (console) verdict of one guest. Only a guest that ran to the end
    has a clean console; one that stopped early was not seen whole."""
    if run.console:
        return "%d problem(s)" % len(run.console)
    if run.boot_status == "complete":
        return "clean"
    return "clean-so-far" if run.console_seen else "no-log"


def load_rules(path):
    """[(glob, text)] from a file of `glob  text` lines (# comments)."""
    rules = []
    if path and path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                glob, _, text = line.replace("\t", " ").partition(" ")
                rules.append((glob, text.strip()))
    return rules


def _match(rules, key):
    for glob, text in rules:
        if fnmatch.fnmatchcase(key, glob):
            return text
    return None


def deviation(rules, case, target):
    """The reason a deviations file gives for `case` on `target`: a line
    `case@target-glob  reason` names the case where a target's kernel
    decides (a 32-bit kernel, say), a line `case-glob  reason` everywhere."""
    return _match(rules, "%s@%s" % (case, target)) or _match(rules, case)


def _program_of(key, programs):
    """The program a case key belongs to (program names may hold dots)."""
    for p in sorted(programs, key=len, reverse=True):
        if key == p or key.startswith(p + "."):
            return p
    return None


def _named_cases(runs):
    """{target: {key: Case}}, a run's "#n" placeholders (cases its program
    never reported) named after case n of that program on another run."""
    order = {}
    for r in runs:
        for s in r.run.suites:
            names = [c.name for c in s.cases]
            if names and all(n and not n.startswith("#") and n != "(program)"
                             for n in names):
                order.setdefault(s.name, names)
    out = {}
    for r in runs:
        cases = {}
        for s in r.run.suites:
            known = order.get(s.name, [])
            for i, c in enumerate(s.cases):
                name = c.name
                if name == "#%d" % (i + 1) and i < len(known):
                    name = known[i]
                cases["%s.%s" % (s.name, name) if name else s.name] = c
        out[r.target] = cases
    return out


def _plan_complete(run, key):
    """Did the program this case belongs to report, on this run, every
    case its KTAP plan announced? Then a case it never planned is one its
    build for this ABI does not have (an #ifdef), not a lost result."""
    program = _program_of(key, list(run.programs) + [s.name for s in run.run.suites])
    suite = next((s for s in run.run.suites if s.name == program), None)
    return (suite is not None and key != program and suite.planned is not None
            and suite.status != MISS and len(suite.cases) == suite.planned
            and not any(c.status in (ERROR, MISS) or c.name.startswith("#")
                        for c in suite.cases))


# How the harness skips a case for want of CPUs (RFM_REQUIRE_CPUS in
# tests/include/rfm_test.h).
CPUS_SKIP = re.compile(r"^(\d+) CPU\(s\) online: the race needs (\d+)")


def _beyond_machine(target_name, case):
    """Why `case` cannot run on this target's machine at all (a skip for
    want of CPUs the machine cannot have), or None."""
    t = next((t for t in TARGETS if t.name == target_name), None)
    m = CPUS_SKIP.match(case.reason or "") if case.status == SKIP else None
    if t is None or not t.max_cpus or not m or int(m.group(2)) <= t.max_cpus:
        return None
    return "needs %s CPUs: %s" % (m.group(2), t.max_cpus_why)


def _cell(run, key, cases=None):
    if run.boot_status == ABSENT:
        return {"status": NA, "reason": run.detail, "obs": {}, "diag": []}
    case = (cases if cases is not None else run.run.cases()).get(key)
    if case is not None and _beyond_machine(run.target, case):
        return {"status": NA, "reason": _beyond_machine(run.target, case),
                "obs": {}, "diag": case.diag}
    if case is not None:
        cell = {"status": case.status, "reason": case.reason,
                "obs": {k: {"value": o.value, "scope": o.scope, "why": o.why}
                        for k, o in case.obs.items()},
                "diag": case.diag}
        if case.attempts:       # init ran its program twice
            cell["attempts"] = list(case.attempts)
            cell["flaky"] = case.flaky
        return cell
    if run.programs and _program_of(key, run.programs) is None:
        return {"status": NA, "reason": "not built for this word size",
                "obs": {}, "diag": []}
    if _plan_complete(run, key):
        return {"status": NA, "reason": "not in this ABI's build (its plan is complete)",
                "obs": {}, "diag": []}
    why = ("guest run %s" % run.boot_status if run.boot_status != "complete"
           else "not reported")
    if not any(_program_of(key, [s.name]) for s in run.run.suites):
        why = "not run (%s)" % why
    return {"status": MISS, "reason": why, "obs": {}, "diag": []}


def _case_keys(runs, named):
    """Every case any run reported, then every program the images held
    that reported nothing anywhere (cut off by a guest's timeout): a
    program that never ran is a row, never absent."""
    keys = []
    for run in runs:
        for key in named[run.target]:
            if key not in keys:
                keys.append(key)
    # A program in the image that no guest reported (none booted, or all
    # died first) is still a row, MISS: what did not run is never absent.
    for run in runs:
        for program in run.programs:
            if program not in keys and not any(_program_of(k, [program]) for k in keys):
                keys.append(program)
    return keys


def _obs_verdict(cells, abi_of):
    """(differences, notes) for the observations of one case."""
    diffs, notes = [], []
    keys = []
    for cell in cells.values():
        keys += [k for k in cell["obs"] if k not in keys]
    for key in keys:
        values = {t: c["obs"].get(key) for t, c in cells.items()}
        absent = [t for t, v in values.items() if v is None]
        if absent:
            diffs.append("%s not observed on %s" % (key, ",".join(absent)))
            continue
        scope = next(iter(values.values()))["scope"]
        shown = "|".join(v["value"] for v in values.values())
        if scope == "target":
            if len({v["value"] for v in values.values()}) > 1:
                notes.append("expected: %s=%s (%s)" % (
                    key, shown, next(iter(values.values()))["why"]))
            continue
        groups = {}
        for t, v in values.items():
            groups.setdefault(abi_of[t] if scope == "abi" else "all",
                              set()).add(v["value"])
        if any(len(g) > 1 for g in groups.values()):
            diffs.append("%s=%s" % (key, shown))
        elif scope == "abi" and len({v["value"] for v in values.values()}) > 1:
            notes.append("abi: %s=%s" % (key, shown))
    return diffs, notes


def compare_targets(runs_by_target, targets):
    """Rows of one kernel's matrix: a verdict per case across targets."""
    abi_of = {t.name: t.abi for t in targets}
    runs = [runs_by_target[t.name] for t in targets if t.name in runs_by_target]
    rows = []
    named = _named_cases(runs)
    for key in _case_keys(runs, named):
        cells = {r.target: _cell(r, key, named[r.target]) for r in runs}
        live = {t: c for t, c in cells.items() if c["status"] != NA}
        statuses = {c["status"] for c in live.values()}
        bad = [t for t, c in live.items() if c["status"] in (MISS, ERROR)]
        skipped = [t for t, c in live.items() if c["status"] == SKIP]
        if bad:
            verdict, agree = "incomplete: %s on %s" % (
                "/".join(sorted({live[t]["status"] for t in bad})), ",".join(bad)), False
        elif skipped:
            verdict, agree = "not compared: SKIP on %s" % ",".join(skipped), None
        elif len(statuses) > 1:
            verdict, agree = "DIFFER: status %s" % "|".join(
                c["status"] for c in live.values()), False
        else:
            diffs, notes = _obs_verdict(live, abi_of)
            if diffs:
                verdict, agree = "DIFFER: " + "; ".join(diffs), False
            else:
                verdict, agree = "; ".join(["agree"] + notes), True
        if len(live) == 1 and agree:
            verdict = "only on %s" % next(iter(live))
        rows.append({"case": key, "cells": cells, "verdict": verdict,
                     "agree": agree})
    return rows


def compare_kernels(rows_by_kernel, ref, other, deviations, absent=frozenset()):
    """A subject (`other`) vs a reference (`ref`): per target and case,
    status and observations; not where either kernel is `absent`
    ((kernel, target) pairs never booted: no such ABI)."""
    out = []
    ref_rows = {r["case"]: r for r in rows_by_kernel.get(ref, [])}
    other_rows = {r["case"]: r for r in rows_by_kernel.get(other, [])}
    for key in list(other_rows) + [k for k in ref_rows if k not in other_rows]:
        mine, base = other_rows.get(key), ref_rows.get(key)
        targets = (mine or base)["cells"]
        for target in targets:
            if (ref, target) in absent or (other, target) in absent:
                continue
            cell = _cell_or_program_miss(other_rows, key, target)
            theirs = _cell_or_program_miss(ref_rows, key, target)
            # Not built on one side (or a kernel without the ABI): nothing
            # to compare; both kernels run the same programs otherwise.
            if NA in ((cell or {}).get("status"), (theirs or {}).get("status")):
                continue
            if MISS in ((cell or {}).get("status"), (theirs or {}).get("status")):
                # One side did not run: neither a match nor a difference.
                out.append({"case": key, "target": target, "difference": "not compared: "
                            "MISS on %s" % "/".join(k for k, c in ((other, cell), (ref, theirs))
                                                    if c and c["status"] == MISS),
                            "deviation": None, "ok": None})
                continue
            if theirs is None:
                verdict = "missing on %s" % ref
            elif cell is None:
                verdict = "missing on %s" % other
            elif theirs["status"] != cell["status"]:
                verdict = "status %s vs %s" % (cell["status"], theirs["status"])
            else:
                diff = [k for k in set(cell["obs"]) | set(theirs["obs"])
                        if (cell["obs"].get(k) or {}).get("value")
                        != (theirs["obs"].get(k) or {}).get("value")]
                verdict = ("obs differ: " + ", ".join(sorted(diff))) if diff else None
            if verdict is None:
                continue
            why = deviation(deviations, key, target)
            out.append({"case": key, "target": target,
                        "difference": verdict, "deviation": why,
                        "ok": why is not None})
    return out


def _cell_or_program_miss(rows, key, target):
    """rows[key]'s cell on target; for a case its kernel never reported, the
    MISS cell of its program's row (a guest that did not run)."""
    row = rows.get(key)
    if row is not None:
        return row["cells"].get(target)
    for program, r in rows.items():
        cell = r["cells"].get(target)
        if key.startswith(program + ".") and cell and cell["status"] == MISS:
            return cell
    return None


def check_control(rows, rules):
    """The negative control: each rule `glob  FAIL` or `glob  obs k=v`
    must hold on every target where the case is built, and match
    something; a case the control skips breaks a FAIL rule (unproven)."""
    results = []
    for glob, expect in rules:
        if expect != FAIL and not (expect.startswith("obs ") and "=" in expect):
            results.append({"rule": "%s %s" % (glob, expect), "ok": False,
                            "detail": "unknown expectation: want FAIL or obs key=value"})
            continue
        matched = [r for r in rows if fnmatch.fnmatchcase(r["case"], glob)]
        if not matched:
            results.append({"rule": "%s %s" % (glob, expect), "ok": False,
                            "detail": "matches no case: the control proves nothing"})
            continue
        violations = []
        for row in matched:
            for target, cell in row["cells"].items():
                if cell["status"] == NA:
                    continue
                if expect == FAIL:
                    if cell["status"] == SKIP:
                        # A case the control never ran is one never seen
                        # to fail: unproven, never accepted.
                        violations.append("%s on %s is SKIP (%s): unproven" % (
                            row["case"], target, cell["reason"] or "no reason given"))
                    elif cell["status"] != FAIL:
                        violations.append("%s on %s is %s" % (
                            row["case"], target, cell["status"]))
                elif expect.startswith("obs "):
                    k, _, v = expect[4:].partition("=")
                    got = (cell["obs"].get(k) or {}).get("value")
                    if got != v:
                        violations.append("%s on %s: %s=%s" % (
                            row["case"], target, k, got))
        results.append({"rule": "%s %s" % (glob, expect), "ok": not violations,
                        "cases": len(matched),
                        "detail": "; ".join(violations) or "holds"})
    return results


def _no_result(runs, rows_by_kernel, kernel, case, target):
    """True if `kernel` has no result for `case` on `target`: its guest
    there never ran, or the case is MISS."""
    if target not in runs.get(kernel, {}):
        return True
    row = next((r for r in rows_by_kernel.get(kernel, []) if r["case"] == case), None)
    cell = row["cells"].get(target) if row else None
    return cell is not None and cell["status"] == MISS


# How a deviations.txt reason starts when the fix is for a race.
RACE = "[race]"


def _expected_failure(rules, row, defects=()):
    """The reason a row fails as a deviations file (`rules`) or
    tests/test-defects.txt (`defects`) says, or None. Where a deviation
    names the case it must fail (or be skipped, or not be built), and
    pass elsewhere; a fix for a race ("[race]" in its reason) may pass
    too: without it the case fails only where the race went the wrong
    way, so any mix of passing and failing targets is expected. Where a
    test's defect names it, it must fail (or not be built), and fail
    somewhere: a defect that shows nowhere is no reason."""
    reasons, defective = {}, set()
    for t in row["cells"]:
        reasons[t] = deviation(rules, row["case"], t)
        if not reasons[t] and defects:
            reasons[t] = deviation(defects, row["case"], t)
            if reasons[t]:
                defective.add(t)
    if not any(reasons.values()):
        return None
    for t, cell in row["cells"].items():
        why = reasons[t]
        # A case that cannot run there (SKIP: what it needs is absent) is
        # no pass either.
        allowed = (FAIL, NA) if t in defective else \
            ((FAIL, SKIP, NA, PASS) if why.startswith(RACE) else (FAIL, SKIP, NA)) \
            if why else (PASS, SKIP, NA)
        if cell["status"] not in allowed:
            return None
    if defective and not any(row["cells"][t]["status"] == FAIL for t in defective):
        return None
    return next(r for r in reasons.values() if r)


def _where_named(rules, row):
    """"here" when a deviation names the case on every target, else the
    targets it names."""
    named = [t for t in row["cells"] if deviation(rules, row["case"], t)]
    return "here" if len(named) == len(row["cells"]) else "on %s" % ",".join(named)


def _rules(files):
    return [rule for name in files for rule in load_rules(config.PATCHES / name)]


def load_deviations(kernels):
    """{reference: [(glob, text)]}: each reference's deviations files; and
    {(kernel, reference): rules} for a comparison that names its own."""
    rules = {k: _rules(deviations_files(k)) for k in kernels if role(k) == REFERENCE}
    rules.update({(c.subject, c.reference): _rules(c.files)
                  for c in comparisons(kernels) if c.files})
    return rules


def cpus_missing(run):
    """Why a guest that booted CPUS=N vCPUs did not run on them all, or
    "": its cases that need a second CPU would have skipped, not passed.
    A run that does not say (an older init, a kernel's own) is not judged."""
    asked, online = (run.run.meta.get(k, "") for k in ("cpus-asked", "cpus-online"))
    if not (asked.isdigit() and online.lstrip("-").isdigit()) or asked == online:
        return ""
    return "%s vCPU(s) asked, %s online" % (asked, online)


def build_matrix(runs, targets, kernels, deviations=None, control=(),
                 unavailable=None, meta=None):
    """Everything matrix.json holds, including the exit status.
    `deviations`: {reference: rules}, or one list of rules for every
    reference (host tests, make mutate); None: each reference's file."""
    unavailable = unavailable or {}
    if deviations is None:
        deviations = load_deviations(kernels)
    elif not isinstance(deviations, dict):
        deviations = {k: deviations for k in kernels if role(k) == REFERENCE}
    matrix = {"meta": dict(meta or {}), "targets": [t.name for t in targets],
              "kernels": {}, "kernel_comparison": [], "comparisons": [], "control": None}
    failures, incomplete = [], []
    rows_by_kernel = {}
    controls = [k for k in kernels if role(k) == CONTROL]
    absent = {(k, t) for k, by_target in runs.items() for t, r in by_target.items()
              if r.boot_status == ABSENT}
    defects = [(glob, TEST_DEFECT + why) for glob, why in load_rules(TEST_DEFECTS)]
    for kernel in kernels:
        if kernel in unavailable:
            matrix["kernels"][kernel] = {"available": False, "role": role(kernel),
                                         "reason": unavailable[kernel]}
            continue
        by_target = runs.get(kernel, {})
        rows = compare_targets(by_target, targets)
        rows_by_kernel[kernel] = rows
        guests = {}
        for t in targets:
            run = by_target.get(t.name)
            if run is None:
                guests[t.name] = {"boot": "not run"}
                incomplete.append("%s/%s not run" % (kernel, t.name))
                continue
            seen = run.run.meta.get("cpu-flags", "").split()
            guests[t.name] = {"boot": run.boot_status, "seconds": round(run.seconds, 1),
                              "detail": run.detail, "kernel": run.run.meta.get("kernel", ""),
                              "cpu": t.cpu,
                              "cpu_flags": [f for f in HARDENING_CPU_FLAGS if f in seen],
                              "cpu_flags_missing": [f for f in t.cpu_flags if f not in seen],
                              "cpus_online": run.run.meta.get("cpus-online", ""),
                              "cpus_asked": run.run.meta.get("cpus-asked", ""),
                              "preempt": run.run.meta.get("preempt", ""),
                              "program_timeout": run.run.meta.get("program-timeout", ""),
                              "console": [{"kind": k, "line": l} for k, l in run.console],
                              "console_status": console_status(run),
                              "problems": run.run.problems,
                              "foreign_lines": run.run.foreign_lines}
            if run.boot_status not in ("complete", ABSENT):
                incomplete.append("%s/%s: guest %s%s" % (
                    kernel, t.name, run.boot_status,
                    ": %s" % run.detail if run.detail else ""))
            failures += ["%s/%s: %s" % (kernel, t.name, p) for p in run.run.problems
                         if p.startswith("duplicate")]
            if run.console:
                failures.append("%s/%s: kernel trouble on the console: %s" % (
                    kernel, t.name, run.console[0][1]))
            missing_cpus = cpus_missing(run)
            if missing_cpus:
                failures.append("%s/%s: %s" % (kernel, t.name, missing_cpus))
        matrix["kernels"][kernel] = {"available": True, "role": role(kernel),
                                     "guests": guests, "cases": rows}
        if role(kernel) == CONTROL:
            continue   # its failures are the point; judged by the control
        for row in rows:
            # What a reference lacks of the subjects (a fix, a new ABI):
            # its failure is expected where its deviations file names the
            # case, with the reason it gives; so is a test's own defect.
            rules = deviations.get(kernel, ())
            reason = _expected_failure(rules, row, defects)
            if reason:
                row["expected_failure"] = reason
                row["verdict"] = "expected to fail %s: %s" % (
                    _where_named(list(rules) + defects, row), reason.split(":")[0])
                continue
            if row["agree"] is False:
                (incomplete if row["verdict"].startswith("incomplete")
                 else failures).append("%s: %s: %s" % (kernel, row["case"], row["verdict"]))
            for t, cell in row["cells"].items():
                if cell["status"] in (FAIL, ERROR):
                    failures.append("%s/%s: %s %s%s" % (
                        kernel, t, row["case"], cell["status"],
                        " (%s)" % cell["reason"] if cell["reason"] else ""))
    for cmp in comparisons(tuple(rows_by_kernel)):
        cmp_rows = compare_kernels(rows_by_kernel, cmp.reference, cmp.subject,
                                   deviations.get((cmp.subject, cmp.reference),
                                                  deviations.get(cmp.reference, ())),
                                   absent)
        for c in cmp_rows:
            c.update(subject=cmp.subject, reference=cmp.reference)
        matrix["comparisons"].append({"subject": cmp.subject, "reference": cmp.reference,
                                      "deviations": " and ".join(
                                          "patches/%s" % f for f in cmp.deviations),
                                      "rows": cmp_rows})
        matrix["kernel_comparison"] += cmp_rows
        for c in cmp_rows:
            if c["ok"] is False:
                # A side with no result (MISS, or its guest never ran) is
                # not a difference yet: incomplete, as a MISS cell is.
                unknown = any(_no_result(runs, rows_by_kernel, k, c["case"], c["target"])
                              for k in (cmp.subject, cmp.reference))
                (incomplete if unknown else failures).append("%s: %s on %s: %s" % (
                    cmp.title, c["case"], c["target"], c["difference"]))
    for kernel in controls:
        if kernel in rows_by_kernel and runs.get(kernel):
            ctl = check_control(rows_by_kernel[kernel], control)
            matrix["control"] = {"available": True, "kernel": kernel, "rules": ctl}
            failures += ["negative control: %s: %s" % (c["rule"], c["detail"])
                         for c in ctl if not c["ok"]]
        else:
            matrix["control"] = {"available": False, "kernel": kernel,
                                 "reason": unavailable.get(kernel, "no %s guest ran" % kernel)}
    # The control's failures are expected: counted apart, not as failures.
    counts = {s: 0 for s in ktap.STATUSES}
    control_counts = {s: 0 for s in ktap.STATUSES}
    expected_failures = 0
    for kernel, rows in rows_by_kernel.items():
        into = control_counts if role(kernel) == CONTROL else counts
        for row in rows:
            for cell in row["cells"].values():
                if row.get("expected_failure") and cell["status"] == FAIL:
                    expected_failures += 1
                elif cell["status"] in into:
                    into[cell["status"]] += 1
    # Another suite's case that passed on one of the two runs init gave
    # its program and failed on the other: a pass, but never a plain one.
    flaky = ["%s/%s: %s: %s" % (kernel, t, row["case"], ", then ".join(cell["attempts"]))
             for kernel, rows in rows_by_kernel.items() for row in rows
             for t, cell in row["cells"].items() if cell.get("flaky")]
    status = 1 if failures else 2 if incomplete else 0
    matrix["summary"] = {"exit_status": status, "counts": counts, "flaky": flaky,
                         "control_counts": control_counts,
                         "expected_failures": expected_failures,
                         "failures": failures, "incomplete": incomplete}
    return matrix
