"""make mutate: a wrong kernel must turn the matrix red.

A mutant is a small patch applied on top of the whole series, planting
one semantic mistake. Each is built and booted, one kernel config at a
time until the targets so far show it (a survivor runs them all), and
judged by the same comparer as the matrix: against the targets (a case
fails or disagrees), against the stock kernel (a difference
deviations.txt does not name), and the kernel's console (a warning, an
oops); its build, too, must not warn where the series' and stock's do
not. A mutant that leaves
all of it green survived: the tests cannot tell that kernel from the
right one.

The catalogue is a directory of NAME.patch files; before its diff each
carries a header:

    Rule: the walk stops at a futex word that is not 4-byte aligned
    Expect: death.death_stops_at_misaligned_futex
    Equivalent: why no test can tell it apart (only for such mutants)
    Kernel: exec-window (only for a mutant of a test-only variant)
    Generated: eq-to-ne (instead of Expect: made by mutgen.py)

Rule says what the mutant breaks; Expect names the cases (globs, comma
separated) expected to catch it; Equivalent marks a mutant that cannot be
killed, with the reason in one line. Kernel names the variant the mutant
is applied to, "series" unless said: a variant that carries the series
and test-only patches of its own (patches/exec-window/ widens de_thread()'s
race windows), booted with its command line. Such a mutant is judged
against that variant's own run, not against stock, since the test-only
patches change what some cases can observe.
"""
import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import tables
from .tree import touched_files
from .compare import NA
from .log import Fatal
from .targets import KERNEL_VARIANTS, has_series

HEADER_RE = re.compile(r"^(Rule|Expect|Equivalent|Kernel|Generated):\s*(.*)$")
DIFF_START_RE = re.compile(rb"^(?:diff --git |--- )", re.M)


@dataclass
class Mutant:
    name: str
    path: Path
    rule: str
    expect: tuple = ()
    equivalent: str = ""
    kernel: str = "series"         # the variant it is applied to
    generated: str = ""            # the operator of a generated mutant


@dataclass
class Outcome:
    """What the matrix said of one mutant."""
    mutant: Mutant
    result: str                    # killed | survived | equivalent | invalid | ...
    killers: list = field(default_factory=list)   # [{"case", "target", "why"}]
    seconds: float = 0.0
    detail: str = ""

    @property
    def expected_killer(self):
        """True if a case the header names is among the killers."""
        return any(fnmatch.fnmatchcase(k["case"], g) for k in self.killers
                   for g in self.mutant.expect)


def parse_header(path):
    """Mutant from a NAME.patch: the header fields before its diff."""
    data = path.read_bytes()
    m = DIFF_START_RE.search(data)
    if not m:
        raise Fatal("mutant %s has no diff" % path)
    fields = {}
    for line in data[:m.start()].decode(errors="replace").splitlines():
        h = HEADER_RE.match(line.strip())
        if h:
            fields[h.group(1)] = h.group(2).strip()
    if not fields.get("Rule"):
        raise Fatal("mutant %s: no 'Rule:' line says what it breaks" % path)
    expect = tuple(g.strip() for g in fields.get("Expect", "").split(",") if g.strip())
    if not expect and not fields.get("Equivalent") and not fields.get("Generated"):
        raise Fatal("mutant %s: no 'Expect:' line names the cases that catch it" % path)
    kernel = fields.get("Kernel", "series")
    if (kernel not in KERNEL_VARIANTS or not has_series(kernel)
            or KERNEL_VARIANTS[kernel].get("fragments")):
        raise Fatal("mutant %s: 'Kernel: %s' is not a variant made of the series "
                    "and test-only patches (%s)" % (
                        path, kernel, ", ".join(k for k, v in KERNEL_VARIANTS.items()
                                                if v.get("patches", "").startswith("all")
                                                and not v.get("fragments"))))
    return Mutant(path.name[:-len(".patch")], path, fields["Rule"], expect,
                  fields.get("Equivalent", ""), kernel, fields.get("Generated", ""))


def build_order(mutant):
    """Mutants of .c files first, grouped by file, headers and syscall
    tables last: one changed .c file rebuilds in seconds, a changed header
    or table rebuilds much of the kernel (twice: in and out)."""
    files = sorted(touched_files(mutant.path))
    cheap = all(f.endswith(".c") for f in files)
    return (not cheap, files, mutant.name)


def load_catalogue(directory, only=""):
    """The mutants of a catalogue directory, cheapest builds first; `only`
    selects some (comma or space separated names)."""
    d = Path(directory)
    if not d.is_dir():
        raise Fatal("MUTANTS=%s is not a directory" % directory)
    mutants = sorted((parse_header(p) for p in d.glob("*.patch")), key=build_order)
    if not mutants:
        raise Fatal("no mutants (*.patch) in %s" % d)
    if only:
        wanted = [w for w in only.replace(",", " ").split() if w]
        known = {m.name for m in mutants}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ValueError("unknown mutant(s) %s in %s" % (", ".join(unknown), d))
        mutants = [m for m in mutants if m.name in wanted]
    return mutants


def killers(matrix, kernel="series"):
    """Every sign in a matrix that the kernel under test is wrong:
    [{"case", "target", "why"}], empty for a green matrix."""
    found = []
    k = matrix["kernels"].get(kernel) or {}
    for t, g in (k.get("guests") or {}).items():
        if g.get("boot") != "complete":
            found.append({"case": "(guest run)", "target": t, "why": g.get("boot", "")})
        if g.get("console"):
            found.append({"case": "(console)", "target": t,
                          "why": g["console"][0]["line"][:120]})
    for row in k.get("cases", []):
        bad = [t for t, c in row["cells"].items() if c["status"] not in ("PASS", "SKIP", NA)]
        for t in bad:
            found.append({"case": row["case"], "target": t, "why": row["cells"][t]["status"]})
        if row["agree"] is False and not bad:
            found.append({"case": row["case"], "target": "(targets)", "why": row["verdict"]})
    for c in matrix.get("kernel_comparison", []):
        if not c["ok"]:
            found.append({"case": c["case"], "target": c["target"],
                          "why": "vs stock: %s" % c["difference"]})
    return found


def judge(mutant, matrix, seconds, warnings=None):
    """The outcome of one mutant's matrix, and of its build: a warning the
    series' and stock's builds do not have also kills it."""
    found = [{"case": "(build)", "target": kc, "why": w}
             for kc, ws in (warnings or {}).items() for w in ws] + killers(matrix)
    if found:
        result = "killed (marked equivalent)" if mutant.equivalent else "killed"
    else:
        result = "equivalent" if mutant.equivalent else "survived"
    return Outcome(mutant, result, found, seconds)


# A generated mutant that does not build: counted apart, never a kill.
UNBUILDABLE = "unbuildable"


def failed(outcome):
    """Outcomes that fail `make mutate`: a survivor, a mutant of the
    catalogue that does not build or apply, and one marked equivalent
    that a case did kill."""
    return outcome.result not in ("killed", "equivalent", UNBUILDABLE)


def score(outcomes):
    """(killed, counted): equivalent and unbuildable mutants are not
    counted."""
    counted = [o for o in outcomes if o.result not in ("equivalent", UNBUILDABLE)]
    return sum(o.result == "killed" for o in counted), len(counted)


def killer_summary(o, most=3):
    if not o.killers:
        return o.detail or "-"
    by_case = {}
    for k in o.killers:
        targets = by_case.setdefault(k["case"], [])
        if k["target"] not in targets:
            targets.append(k["target"])
    parts = ["%s (%s)" % (c, ",".join(ts)) for c, ts in list(by_case.items())[:most]]
    more = len(by_case) - most
    return "; ".join(parts) + (" +%d more" % more if more > 0 else "")


def render(outcomes, catalogue, total_seconds):
    rows = []
    for o in outcomes:
        note = ""
        if o.result == "killed" and o.mutant.expect and not o.expected_killer:
            note = " [not by the cases it names]"
        rows.append([o.mutant.name, o.result + note, "%.0fs" % o.seconds,
                     killer_summary(o) if o.result != "equivalent"
                     else "equivalent: " + o.mutant.equivalent])
    killed, counted = score(outcomes)
    lines = ["robust-futex-matrix mutate: %s" % catalogue, "",
             tables.format_table(["mutant", "result", "time", "killed by (targets)"], rows), ""]
    for o in outcomes:
        if failed(o):
            lines.append("%s: %s: %s (%s)" % (o.result.upper(), o.mutant.name,
                                               o.mutant.rule, o.detail or o.mutant.path))
    equivalent = sum(o.result == "equivalent" for o in outcomes)
    unbuildable = sum(o.result == UNBUILDABLE for o in outcomes)
    lines.append("mutation score: %d of %d killed (%s)%s%s; %d mutant(s), %.0f s" % (
        killed, counted, "%.0f%%" % (100.0 * killed / counted) if counted else "-",
        ", %d equivalent" % equivalent if equivalent else "",
        ", %d not built (counted apart)" % unbuildable if unbuildable else "",
        len(outcomes), total_seconds))
    return "\n".join(lines) + "\n"


def to_json(outcomes, catalogue, total_seconds, meta):
    killed, counted = score(outcomes)
    return {"catalogue": str(catalogue), "meta": meta,
            "score": {"killed": killed, "counted": counted,
                      "percent": round(100.0 * killed / counted, 1) if counted else None},
            "seconds": round(total_seconds, 1),
            "mutants": [{"name": o.mutant.name, "rule": o.mutant.rule,
                         "expect": list(o.mutant.expect),
                         "equivalent": o.mutant.equivalent, "result": o.result,
                         "killed_by_expected_case": o.expected_killer,
                         "killers": o.killers, "seconds": round(o.seconds, 1),
                         "detail": o.detail} for o in outcomes]}


def write(out, outcomes, catalogue, total_seconds, meta):
    out.mkdir(parents=True, exist_ok=True)
    text = render(outcomes, catalogue, total_seconds)
    (out / "mutate.txt").write_text(text)
    (out / "mutate.json").write_text(json.dumps(
        to_json(outcomes, catalogue, total_seconds, meta), indent=1) + "\n")
    return text
