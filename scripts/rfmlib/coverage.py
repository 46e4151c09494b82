"""make coverage: which lines and branches of the series the suites reach.

The `coverage` kernel variant is the series with the kernel's gcov on the
files it touches (patches/coverage; the runtime is in every x86 kernel,
kconfig/gcov-runtime.config). Its guests
run the suites as `make run` does, with their counters zeroed first;
init then writes every .gcda to the target's coverage port (init.c's
dump_gcov(): "gcda PATH SIZE", base64, "end", and "complete N" last).
Here they meet the .gcno files kept beside the cached kernel, and lcov
turns each target's into a tracefile; the targets of one kernel config
are merged (a line is reached on a config if one of its targets reaches
it), and all of them for the HTML report.

The gate is on the lines the series adds or changes (a diff of each
profiled file against the pristine tree): every one lcov counts as
executable must be reached on every kernel config that compiles it,
unless docs/coverage.md names it, with the reason. Branches on those
lines are reported, against the goal of 95%.

Writes RFM_OUT/coverage/: the run (matrix.txt and the guests' files, as
make run), coverage.txt (the summary), coverage.json, TARGET.info,
KCONFIG.info, all.info, and html/ (genhtml).
"""
import base64
import binascii
import difflib
import json
import re
import shutil
import subprocess
from pathlib import Path

from . import atomic, config, deps, knobs, tables, tree
from .kbuild import GCOV_NOTES
from .log import Fatal, progress
from .matrix import matrix_run
from .pipeline import build_kernel
from .qemu import COVERAGE_FILE
from .targets import KERNEL_VARIANTS, variant_slot

KERNEL = "coverage"
EXEMPTIONS = config.REPO / "docs" / "coverage.md"
EXEMPTION_HEADER = "| file | function | line | configs | why |"
BRANCH_GOAL = 95.0
LCOV_RC = ["--rc", "lcov_branch_coverage=1"]


def parse_counters(text):
    """{path of the .gcda in the kernel's build tree: bytes} from what a
    guest wrote to its coverage port; Fatal on a stream that is cut short,
    reports a failure, or whose sizes do not match."""
    files, lines = {}, text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("complete "):
            if int(line.split()[1]) != len(files):
                raise Fatal("coverage: the guest says %s files, %d arrived"
                            % (line.split()[1], len(files)))
            return files
        if line == "failed":
            raise Fatal("coverage: the guest could not read its counters (see its console)")
        m = re.match(r"^gcda (\S+) (\d+)$", line)
        if not m:
            raise Fatal("coverage: line %d of the counters is %r" % (i + 1, line[:80]))
        end = lines.index("end", i + 1) if "end" in lines[i + 1:] else -1
        if end < 0:
            raise Fatal("coverage: %s is cut short" % m.group(1))
        try:
            data = base64.b64decode("".join(lines[i + 1:end]), validate=True)
        except binascii.Error as e:
            raise Fatal("coverage: %s: not base64 (%s)" % (m.group(1), e))
        if len(data) != int(m.group(2)):
            raise Fatal("coverage: %s has %d bytes, the guest sent %s"
                        % (m.group(1), len(data), m.group(2)))
        files[m.group(1)] = data
        i = end + 1
    raise Fatal("coverage: the counters end without \"complete\": the guest stopped "
                "before it wrote them all")


def parse_info(text):
    """lcov's tracefile: {source: {"lines": {n: count}, "branches":
    {n: [taken, ...]}}}, a branch not taken or never evaluated as 0."""
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith("SF:"):
            current = out.setdefault(line[3:], {"lines": {}, "branches": {}})
        elif line.startswith("DA:") and current is not None:
            n, count = line[3:].split(",")[:2]
            current["lines"][int(n)] = current["lines"].get(int(n), 0) + int(count)
        elif line.startswith("BRDA:") and current is not None:
            n, _block, _branch, taken = line[5:].split(",")
            current["branches"].setdefault(int(n), []).append(
                0 if taken == "-" else int(taken))
    return out


def added_lines(before, after):
    """The line numbers (from 1) of `after` that a diff from `before` adds
    or changes."""
    ops = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(),
                                  autojunk=False).get_opcodes()
    return {j + 1 for tag, _i1, _i2, j1, j2 in ops if tag in ("replace", "insert")
            for j in range(j1, j2)}


def split_row(line):
    """The cells of a Markdown table row; `\\|` is a | inside a cell."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def load_exemptions(text):
    """{(tree-relative file, function, the line's text stripped, N): (configs,
    why)} from the table of docs/coverage.md: the line is the Nth of the
    function's lines with that text (the cell's "@N", else 1); configs is
    a set, or {"all"}."""
    out, in_table = {}, False
    for line in text.splitlines():
        if line.strip() == EXEMPTION_HEADER:
            in_table = True
            continue
        if not in_table or not line.startswith("|"):
            in_table = in_table and line.startswith("|")
            continue
        cells = split_row(line)
        if all(set(c) <= set("-: ") for c in cells):
            continue
        if len(cells) != 5 or not all(cells):
            raise Fatal("docs/coverage.md: %r: want | file | function | line | configs | why |"
                        % line)
        f, func, code, configs, why = (c.strip("`") for c in cells)
        m = re.match(r"^`?(.*?)`?\s+@(\d+)$", cells[2])
        code, nth = (m.group(1), int(m.group(2))) if m else (code, 1)
        out[(f, func, code, nth)] = ({c.strip() for c in configs.split(",")}, why)
    return out


FUNCTION_RE = re.compile(r"^(?:COMPAT_)?SYSCALL_DEFINE\d\((\w+)"
                         r"|^(?:[A-Za-z_][\w\s*]*?[\s*])?([A-Za-z_]\w*)\(")


def functions_of(lines):
    """For each line (from 1) the function it is in, by the kernel's
    layout: a definition's opening brace alone in column 0, its name on
    the nearest line above that starts in column 0 with a call shape;
    None outside a function."""
    out, current = [None], None
    for i, line in enumerate(lines):
        if line == "{":
            for above in reversed(lines[:i]):
                m = FUNCTION_RE.match(above)
                if m:
                    current = m.group(1) or m.group(2)
                    break
        out.append(current)
        if line == "}":
            current = None
    return out


def judge(infos_by_config, tree_root, pristine_root, exemptions):
    """Per kernel config, per source file the series changes: its added
    lines lcov counts, those reached, those not (exempted or not), and its
    branches. Returns (rows, unreached) where unreached lists the lines no
    exemption names."""
    rows, unreached, used = [], [], set()
    tree_root = Path(tree_root).resolve()
    for kc, info in sorted(infos_by_config.items()):
        for source, data in sorted(info.items()):
            path = Path(source).resolve()
            try:
                rel = path.relative_to(tree_root).as_posix()
            except ValueError:
                continue        # a generated header of the build directory
            new_text = path.read_text(errors="replace")
            old = pristine_root / rel
            added = added_lines(old.read_text(errors="replace") if old.exists() else "",
                                new_text)
            lines = new_text.splitlines()
            counted = sorted(n for n in data["lines"] if n in added)
            if not counted:
                continue
            funcs, seen, nth = functions_of(lines), {}, {}
            for n, line in enumerate(lines, 1):
                k = (funcs[n], line.strip())
                seen[k] = seen.get(k, 0) + 1
                nth[n] = seen[k]
            missed, excused = [], []
            for n in counted:
                if data["lines"][n]:
                    continue
                code = lines[n - 1].strip() if n <= len(lines) else ""
                key = (rel, funcs[n] or "-", code, nth[n])
                if key in exemptions and (exemptions[key][0] & {"all", kc}):
                    excused.append(n)
                    used.add(key)
                else:
                    missed.append(n)
                    unreached.append("%s %s:%d: %s (in %s)" % (kc, rel, n, code,
                                                              funcs[n] or "-"))
            taken = [t for n, ts in data["branches"].items() if n in added for t in ts]
            partial = ["%d (%d of %d taken)" % (n, sum(1 for t in ts if t), len(ts))
                       for n, ts in sorted(data["branches"].items())
                       if n in added and not all(ts)]
            rows.append({"config": kc, "file": rel, "lines": len(counted),
                         "reached": len(counted) - len(missed) - len(excused),
                         "exempt": excused, "missed": missed,
                         "branches": len(taken), "branches_taken": sum(1 for t in taken if t),
                         "branches_not_all_taken": partial})
    judged = set(infos_by_config)
    stale = sorted("%s: %s: %s @%d" % k for k, (configs, _) in exemptions.items()
                   if k not in used and ("all" in configs or configs & judged))
    return rows, unreached, stale


def summary_text(rows, unreached, stale):
    """coverage.txt: one line per config and file, then what is missing."""
    table = [[r["config"], r["file"], "%d/%d" % (r["reached"], r["lines"]),
              str(len(r["exempt"])) if r["exempt"] else "-",
              "%d/%d" % (r["branches_taken"], r["branches"])] for r in rows]
    lines_all = sum(r["lines"] for r in rows)
    reached = sum(r["reached"] + len(r["exempt"]) for r in rows)
    br = sum(r["branches"] for r in rows)
    br_taken = sum(r["branches_taken"] for r in rows)
    pct = 100.0 * br_taken / br if br else 100.0
    out = ["coverage of the lines the series adds or changes (make coverage)", "",
           tables.format_table(["config", "file", "lines reached", "exempt",
                                "branches taken"], table), "",
           "lines: %d of %d reached or exempt; branches on them: %d of %d taken "
           "(%.1f%%, goal %.0f%%)" % (reached, lines_all, br_taken, br, pct, BRANCH_GOAL)]
    partial = ["  %s %s: %s" % (r["config"], r["file"], ", ".join(r["branches_not_all_taken"]))
               for r in rows if r["branches_not_all_taken"]]
    if partial:
        out += ["", "added lines with a branch never taken (line: taken of all):"] + partial
    if unreached:
        out += ["", "not reached, and not in docs/coverage.md:"] + ["  " + u for u in unreached]
    if stale:
        out += ["", "docs/coverage.md names lines that are reached or gone:"] + [
            "  " + s for s in stale]
    if not rows:
        out += ["", "FAIL: no line of the series was judged: the counters name no "
                "source of the series' tree"]
    else:
        out += ["", "PASS: every added line reached or exempt" if not unreached and not stale
                else "FAIL: %d line(s) not reached, %d stale exemption(s)" % (
                    len(unreached), len(stale))]
    return "\n".join(out) + "\n", pct


def lcov(args, log):
    r = subprocess.run(["lcov", "--quiet"] + LCOV_RC + args, capture_output=True, text=True)
    log.write("$ lcov %s\n%s%s" % (" ".join(args), r.stdout, r.stderr))
    if r.returncode:
        raise Fatal("lcov %s failed:\n%s" % (" ".join(args[:2]), (r.stdout + r.stderr)[-1500:]))


def capture(target, counters, image, scratch, info, log):
    """One target's tracefile from its counters and the kernel's notes."""
    build_dir = Path((image / "build-dir").read_text().strip())
    notes = image / GCOV_NOTES
    profiled = {n.relative_to(notes).with_suffix("") for n in notes.rglob("*.gcno")}
    received = {Path(p).relative_to(build_dir).with_suffix("") for p in counters
                if Path(p).is_relative_to(build_dir)}
    if not profiled or profiled - received:
        raise Fatal("coverage: %s: no counters for %s (the kernel profiles %d object(s))"
                    % (target, ", ".join(sorted(str(p) for p in profiled - received))
                       or "anything", len(profiled)))
    if scratch.exists():
        shutil.rmtree(scratch)
    for path, data in counters.items():
        try:
            rel = Path(path).relative_to(build_dir)
        except ValueError:
            raise Fatal("coverage: %s: counters of %s, not of this kernel's build (%s)"
                        % (target, path, build_dir))
        note = notes / rel.with_suffix(".gcno")
        if not note.exists():
            raise Fatal("coverage: %s: no notes for %s beside the cached kernel (%s)"
                        % (target, rel, notes))
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_bytes(data)
        shutil.copy2(note, scratch / rel.with_suffix(".gcno"))
    lcov(["--capture", "--directory", str(scratch), "--base-directory", str(build_dir),
          "--output-file", str(info)], log)


def cmd_coverage(_args):
    deps.ensure()
    targets = knobs.get("TARGETS")
    out = config.out_dir() / "coverage"
    status = matrix_run((KERNEL,), targets, None, out=out)
    if status:
        raise Fatal("coverage: the coverage kernel's matrix is not green (%s/matrix.txt): "
                    "coverage of a failing run proves nothing" % out)
    with open(out / "lcov.log", "w") as log:
        merged = tracefiles(targets, out, log)
    html = out / "html"
    shutil.rmtree(html, ignore_errors=True)
    r = subprocess.run(["genhtml", "--quiet", "--branch-coverage", "--output-directory",
                        str(html), str(out / "all.info")], capture_output=True, text=True)
    if r.returncode:
        raise Fatal("genhtml failed:\n%s" % (r.stdout + r.stderr)[-1500:])
    src, _ = tree.variant_tree(variant_slot(KERNEL),
                               tree.patches_for(KERNEL_VARIANTS[KERNEL]["patches"]))
    rows, unreached, stale = judge(merged, src, tree.pristine_tree(),
                                   load_exemptions(EXEMPTIONS.read_text()))
    text, pct = summary_text(rows, unreached, stale)
    atomic.write(out / "coverage.txt", text)
    atomic.write(out / "coverage.json", json.dumps(
        {"files": rows, "unreached": unreached, "stale_exemptions": stale,
         "branch_percent": round(pct, 1), "branch_goal": BRANCH_GOAL}, indent=1))
    print()
    print(text, end="")
    progress("coverage", "%s/{coverage.txt,coverage.json,html/}" % out)
    return 1 if unreached or stale or not rows else 0


def tracefiles(targets, out, log):
    """Each target's tracefile, each kernel config's (its targets merged)
    and all.info; returns {kconfig: parsed tracefile}."""
    infos = {}
    for t in targets:
        image = build_kernel(KERNEL, t.kconfig, targets)
        stream = out / KERNEL / t.name / COVERAGE_FILE
        if not stream.exists():
            raise Fatal("coverage: %s wrote no counters (%s)" % (t.name, stream))
        counters = parse_counters(stream.read_text(errors="replace"))
        progress("coverage", "%s: %d counter file(s)" % (t.name, len(counters)))
        info = out / ("%s.info" % t.name)
        capture(t.name, counters, image, out / "gcda" / t.name, info, log)
        infos.setdefault(t.kconfig, []).append(info)
    merged = {}
    for kc, files in infos.items():
        dest = out / ("%s.info" % kc)
        lcov(sum((["--add-tracefile", str(f)] for f in files), []) + ["--output-file",
                                                                      str(dest)], log)
        merged[kc] = parse_info(dest.read_text())
    everything = out / "all.info"
    lcov(sum((["--add-tracefile", str(out / ("%s.info" % kc))] for kc in infos), [])
         + ["--output-file", str(everything)], log)
    return merged
