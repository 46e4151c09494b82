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
    Blind: who wrote it without seeing the cases (instead of Expect)
    Targets: x86_64-noia32 (only for a mutant that only some targets'
             kernels build: it runs when TARGETS has them all)
    Cpus: 2 (only for a mutant of a race that needs a second CPU: it
          runs when CPUS is at least that)

Rule says what the mutant breaks; Expect names the cases (globs, comma
separated) expected to catch it, except in a catalogue written blind
(tests/mutants-independent: its author saw the series, never the cases); Equivalent marks a mutant that cannot be
killed, with the reason in one line. Targets names the targets whose
kernels have the code it changes (a !CONFIG_COMPAT stub: x86_64-noia32):
a run whose TARGETS lack one of them reports it as not run, counted
apart, never as killed nor as survived; so does a run with fewer CPUS
than a mutant's Cpus: (one CPU never runs its race). Kernel names the variant the mutant
is applied to, "series" unless said: a variant that carries the series
and test-only patches of its own (patches/exec-window/ widens de_thread()'s
race windows), booted with its command line. Such a mutant is judged
against that variant's own run, not against stock, since the test-only
patches change what some cases can observe. Or mainline-fix, mainline
with the mails of upstream/ (tests/mutants-upstream): a reference, which
fails what deviations-mainline.txt names, so its mutant is killed by any
case whose status or observations differ from mainline-fix's own run.
"""
import filecmp
import fnmatch
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import compare, config, deps, kbuild, knobs, kselftest, mutgen, tables, tree
from .tree import touched_files
from .compare import NA
from .log import Fatal, elapsed, progress
from .matrix import run_meta
from .pipeline import Pipeline, boot_all, build_kernel
from .targets import (KERNEL_VARIANTS, REFERENCE, TARGETS, UPSTREAM, deviations_files,
                      has_series, kernel_append, role, variant_slot)

HEADER_RE = re.compile(r"^(Rule|Expect|Equivalent|Kernel|Generated|Blind|Targets|Cpus):\s*(.*)$")
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
    targets: tuple = ()            # the targets it needs (Targets:), if any
    cpus: int = 1                  # the vCPUs its race needs (Cpus:)


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
    if not expect and not any(fields.get(f) for f in ("Equivalent", "Generated", "Blind")):
        raise Fatal("mutant %s: no 'Expect:' line names the cases that catch it" % path)
    kernel = fields.get("Kernel", "series")
    if not mutable(kernel):
        raise Fatal("mutant %s: 'Kernel: %s' is not a variant made of the series and "
                    "test-only patches, nor mainline with the mails of upstream/ (%s)" % (
                        path, kernel, ", ".join(k for k in KERNEL_VARIANTS if mutable(k))))
    targets = tuple(t.strip() for t in fields.get("Targets", "").replace(",", " ").split())
    unknown = [t for t in targets if t not in {x.name for x in TARGETS}]
    if unknown:
        raise Fatal("mutant %s: 'Targets:' names no target %s" % (path, ", ".join(unknown)))
    cpus = fields.get("Cpus", "1")
    if not cpus.isdigit() or int(cpus) < 1:
        raise Fatal("mutant %s: 'Cpus: %s' is not a number of CPUs" % (path, cpus))
    return Mutant(path.name[:-len(".patch")], path, fields["Rule"], expect,
                  fields.get("Equivalent", ""), kernel, fields.get("Generated", ""), targets,
                  int(cpus))


def mutable(kernel):
    """Can a mutant name this variant (Kernel:)? The series with test-only
    patches and no configuration of its own, or mainline with the mails of
    upstream/ (a mutant of the mails)."""
    variant = KERNEL_VARIANTS.get(kernel)
    if variant is None:
        return False
    if UPSTREAM in variant.get("patches", "").split("+")[1:]:
        return True
    return has_series(kernel) and not variant.get("fragments")


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


def shard(mutants, part):
    """The K-th of N parts of `mutants` (part = (K, N), or None: all):
    every N-th in build order from the K-th, so that each part has its
    share of the slow rebuilds."""
    if part is None:
        return mutants
    k, n = part
    return mutants[k - 1::n]


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


def killers_against(runs, base_runs, targets, base):
    """Every sign that a mutant of reference variant `base` (mainline-fix)
    is not that kernel: a guest that did not complete, the console, and
    each case whose status or observations differ from `base`'s own run
    on a target (`runs`, `base_runs`: {target: GuestRun})."""
    found = []
    for t, r in runs.items():
        if r.boot_status != "complete":
            found.append({"case": "(guest run)", "target": t, "why": r.boot_status})
        if r.console:
            found.append({"case": "(console)", "target": t, "why": r.console[0][1][:120]})
    rows = {"mutant": compare.compare_targets(runs, targets),
            base: compare.compare_targets({t.name: base_runs[t.name] for t in targets},
                                          targets)}
    found += [{"case": c["case"], "target": c["target"],
               "why": "vs %s: %s" % (base, c["difference"])}
              for c in compare.compare_kernels(rows, base, "mutant", []) if c["ok"] is False]
    return found


def judge(mutant, matrix, seconds, warnings=None):
    """The outcome of one mutant's matrix, and of its build: a warning the
    series' and stock's builds do not have also kills it."""
    return judge_signs(mutant, killers(matrix), seconds, warnings)


def judge_signs(mutant, signs, seconds, warnings=None):
    """The outcome of one mutant from the signs found against it."""
    found = [{"case": "(build)", "target": kc, "why": w}
             for kc, ws in (warnings or {}).items() for w in ws] + signs
    if found:
        result = "killed (marked equivalent)" if mutant.equivalent else "killed"
    else:
        result = "equivalent" if mutant.equivalent else "survived"
    return Outcome(mutant, result, found, seconds)


# A generated mutant that does not build: counted apart, never a kill.
UNBUILDABLE = "unbuildable"
# A mutant whose Targets: are not all in the run's TARGETS: counted apart.
NOT_RUN = "not run"


def failed(outcome):
    """Outcomes that fail `make mutate`: a survivor, a mutant of the
    catalogue that does not build or apply, and one marked equivalent
    that a case did kill."""
    return outcome.result not in ("killed", "equivalent", UNBUILDABLE, NOT_RUN)


def score(outcomes):
    """(killed, counted): equivalent and unbuildable mutants are not
    counted."""
    counted = [o for o in outcomes if o.result not in ("equivalent", UNBUILDABLE, NOT_RUN)]
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
            lines.append("%s: %s: %s (%s)" % (o.result.upper(), o.mutant.name, o.mutant.rule,
                                               "; ".join(str(d) for d in (o.detail, o.mutant.path)
                                                         if d)))
    equivalent = sum(o.result == "equivalent" for o in outcomes)
    unbuildable = sum(o.result == UNBUILDABLE for o in outcomes)
    not_run = sum(o.result == NOT_RUN for o in outcomes)
    lines.append("mutation score: %d of %d killed (%s)%s%s%s; %d mutant(s), %.0f s" % (
        killed, counted, "%.0f%%" % (100.0 * killed / counted) if counted else "-",
        ", %d equivalent" % equivalent if equivalent else "",
        ", %d not built (counted apart)" % unbuildable if unbuildable else "",
        ", %d not run: their targets are not in TARGETS (counted apart)" % not_run
        if not_run else "", len(outcomes), total_seconds))
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


# A mutant that hangs a guest is killed by its timeout; the series' guests
# take about 10 s, so this need not be RUN_TIMEOUT's 15 minutes.
MUTANT_TIMEOUT = 240


def new_warnings(built, images, references):
    """{kconfig: [warning]}: what the builds in `built` ({kconfig: kernel
    dir}) warn about that none of the reference kernels' builds did."""
    out = {}
    for kc, d in built.items():
        known = [kbuild.kernel_warnings(images[(k, kc)]) for k in references]
        mine = kbuild.kernel_warnings(d)
        if mine is None or any(w is None for w in known):
            continue        # a log was not kept: nothing to compare
        extra = sorted(mine - set().union(*known))
        if extra:
            out[kc] = extra
    return out


# The key salt of the kernels make mutate compares byte for byte: built
# with the build identity pinned (kbuild.REPRODUCIBLE). A cache may hold
# the same sources' kernels from before builds were pinned, under the
# unsalted key; those images differ in their build date.
PINNED = "pinned"


def pinned_references(kernels, configs, targets):
    """{(kernel, kconfig): build dir} of each variant's kernel built as the
    mutants are (in the variant's slot, pinned), so that a mutant
    whose image equals it byte for byte is known to be that kernel.
    Building it in the slot's directory relinks what the last mutant
    changed."""
    return {(k, kc): build_kernel(k, kc, targets, salt=PINNED,
                                  label="%s/%s (pinned, for identical images)" % (k, kc))
            for k in kernels for kc in configs}


def identical_image(a, b):
    """Are the kernel images in build dirs a and b the same bytes?"""
    return filecmp.cmp(a / "bzImage", b / "bzImage", shallow=False)


# The catalogues kept in the tree: the hand-written one (the default of
# MUTANTS), the one written blind, by someone who saw the series but
# never the cases, and the mutants of the mails of upstream/.
CATALOGUES = ("tests/mutants", "tests/mutants-independent", "tests/mutants-upstream")


def stale_mutants():
    """[(name, why)] of the mutants of the kept catalogues that do not
    apply exactly to their kernel (the series, or the variant they name):
    a change of the series that moves their lines leaves them to be
    regenerated, before make mutate would call them invalid."""
    catalogue = [m for d in CATALOGUES for m in load_catalogue(config.REPO / d)]
    stale = []
    for kernel in dict.fromkeys(m.kernel for m in catalogue):
        patches = tree.patches_for(KERNEL_VARIANTS[kernel]["patches"])
        src, _ = tree.variant_tree(variant_slot(kernel), patches,
                                   KERNEL_VARIANTS[kernel].get("tree"))
        try:
            stale += [(m.name, why) for m in catalogue if m.kernel == kernel
                      for why in [tree.inexact(src, m.path)] if why]
        finally:
            tree.release(variant_slot(kernel))
    return stale


def cmd_mutate(_args):
    """Build every mutant of the catalogue (MUTANTS=DIR, default
    tests/mutants; MUTANT=names for some), boot it on every target and
    judge it with the matrix's comparer against the stock kernel."""
    deps.ensure()
    catalogue = knobs.get("MUTANTS").resolve()
    mutants = shard(load_catalogue(catalogue, (knobs.get("MUTANT") or "")),
                    knobs.get("MUTANT_SHARD"))
    out = config.out_dir() / "mutate"
    shutil.rmtree(out, ignore_errors=True)
    return run_mutants(catalogue, mutants, out)


def cmd_mutate_gen(_args):
    """Generate mutants from the series' added C lines (mutgen.py), then
    build, boot and judge them as make mutate does (SAMPLE=N: a fixed
    sample; MUTANT=names: some). Survivors named in the equivalence list
    are equivalent; one that does not build is counted apart."""
    deps.ensure()
    series = tree.patches_for("all")
    if not series:
        raise Fatal("patches/series is empty: there is no series to mutate")
    out = config.out_dir() / "mutate-gen"
    shutil.rmtree(out, ignore_errors=True)
    catalogue = out / "catalogue"
    catalogue.mkdir(parents=True)
    touched = set().union(*(tree.touched_files(p) for p in series))
    pristine = tree.pristine_tree()
    src, _ = tree.variant_tree("series", series)
    made = {}
    for path in mutgen.SOURCES:
        if path not in touched:
            continue
        before = (pristine / path).read_text() if (pristine / path).exists() else ""
        after = (src / path).read_text()
        for g in mutgen.generate(path, before, after):
            (catalogue / (g.name + ".patch")).write_text(mutgen.patch_text(g, after))
            made[g.name] = g
    tree.release("series")
    try:
        equivalents = mutgen.read_equivalents((config.REPO / mutgen.EQUIVALENTS).read_text())
    except ValueError as e:
        raise Fatal(str(e))
    stale = mutgen.unpinned(equivalents, made)
    if stale:
        raise Fatal("%s no longer matches the series; judge each again, then update "
                    "its name and pin:\n  %s" % (mutgen.EQUIVALENTS, "\n  ".join(stale)))
    wanted = (knobs.get("MUTANT") or "")
    if not wanted and knobs.get("SAMPLE"):
        wanted = ",".join(mutgen.sample(made, knobs.get("SAMPLE")))
    mutants = shard(load_catalogue(catalogue, wanted), knobs.get("MUTANT_SHARD"))
    for m in mutants:
        m.equivalent = equivalents.get(m.name, ("", ""))[1]
    progress("mutate", "generated %d mutant(s) from %d file(s); running %d" % (
        len(made), len(touched & set(mutgen.SOURCES)), len(mutants)))
    return run_mutants(catalogue, mutants, out)


def run_mutants(catalogue, mutants, out):
    """Build, boot and judge `mutants` on every target; the table and the
    score in `out`."""
    targets = knobs.get("TARGETS")
    if not tree.patches_for("all"):
        raise Fatal("patches/series is empty: there is no series to mutate")
    start = elapsed()
    # The series and stock, and the test-only variants some mutants apply
    # to; a catalogue of mainline-fix's mutants alone needs neither.
    bases = tuple(k for k in KERNEL_VARIANTS if k != "series" and
                  any(m.kernel == k for m in mutants))
    kernels = bases if all(role(m.kernel) == REFERENCE for m in mutants) \
        else ("series", "stock") + bases
    p = Pipeline(kernels, targets, selftests=kselftest.wanted(kernels)).build()
    backend = p.backend()
    # Stock's: a mutant is judged against the series' reference run in
    # the comparer's stock column.
    deviations = [rule for name in deviations_files("stock")
                  for rule in compare.load_rules(config.PATCHES / name)]

    def matrix_of(runs, of=targets):
        return compare.build_matrix(runs, of, ("series", "stock"), deviations=deviations)

    # The reference: the series itself must be green against stock, or no
    # mutant's red means anything.
    ref = boot_all(backend, p.guests(out / "reference"))
    # A reference base (mainline-fix) is green by its own deviations file.
    references = [("series", "stock", matrix_of(ref))] * ("series" in kernels) + [
        (b, b, compare.build_matrix(ref, targets, (b,), deviations=None if role(b) == REFERENCE
                                    else deviations))
        for b in bases]
    for name, against, reference in references:
        if reference["summary"]["exit_status"] != 0:
            raise Fatal("%s is not green%s (%s): fix that before judging mutants "
                        "(see %s)" % (
                            name, " against stock" if against == "stock" else "",
                            "; ".join((reference["summary"]["failures"]
                                       + reference["summary"]["incomplete"])[:3]),
                            out / "reference"))
    progress("mutate", "reference: %s green on %d target(s); %d mutant(s)" % (
        " and ".join("%s against %s" % (n, a) if n != a else n for n, a, _ in references),
        len(targets), len(mutants)))
    # A mutant is built and booted one kernel config at a time, the config
    # with the most targets first, and is killed as soon as the targets
    # booted so far show it: every sign of a wrong kernel among some
    # targets is one among all. A survivor runs everything.
    configs = sorted({t.kconfig for t in targets},
                     key=lambda kc: (-sum(t.kconfig == kc for t in targets), kc))
    pinned = pinned_references(dict.fromkeys(m.kernel for m in mutants), configs, targets)
    outcomes = []
    for n, m in enumerate(mutants, 1):
        t_start = elapsed()
        lacking = [t for t in m.targets if t not in {x.name for x in targets}]
        why_not = ("needs TARGETS to include %s" % ", ".join(lacking) if lacking else
                   "needs CPUS=%d" % m.cpus if m.cpus > knobs.get("CPUS") else "")
        if why_not:
            outcomes.append(Outcome(m, NOT_RUN, [], 0.0, why_not))
            progress("mutate", "%d/%d %s: NOT RUN: %s" % (n, len(mutants), m.name, why_not))
            continue
        # A mutant of a test-only variant is judged against that variant's
        # run, in the comparer's "stock" column.
        against = "stock" if m.kernel == "series" else m.kernel
        mimages, runs, o, same = {}, {}, None, []
        for kc in configs:
            try:
                mimages[kc] = build_kernel(m.kernel, kc, targets, [m.path], salt=PINNED,
                                           label="mutant %s/%s" % (m.name, kc))
            except Fatal as e:
                result = UNBUILDABLE if m.generated else "invalid"
                o = Outcome(m, result, [], elapsed() - t_start, str(e).splitlines()[0])
                break
            on_kc = [t for t in targets if t.kconfig == kc]
            if identical_image(mimages[kc], pinned[(m.kernel, kc)]):
                # The kernel the series' own sources make: its verdict is
                # the series', which the reference run gave.
                same.append(kc)
                runs.update({t.name: ref[m.kernel][t.name] for t in on_kc})
            else:
                runs.update(boot_all(backend, [
                    p.guest("mutant", t, out / m.name, image=mimages[kc],
                            append=kernel_append(m.kernel), run_timeout=MUTANT_TIMEOUT)
                    for t in on_kc])["mutant"])
            booted = [t for t in targets if t.name in runs]
            warnings = new_warnings(mimages, p.images, (m.kernel,) + ("stock",) * (
                "stock" in kernels))
            if role(m.kernel) == REFERENCE:
                o = judge_signs(m, killers_against(runs, ref[m.kernel], booted, m.kernel),
                                elapsed() - t_start, warnings)
            else:
                o = judge(m, matrix_of({"series": runs, "stock": ref[against]}, booted),
                          elapsed() - t_start, warnings)
            if o.killers:
                break
        if same and o.result not in ("invalid", UNBUILDABLE):
            o.detail = "image identical to the %s's on %s: not booted there" % (
                m.kernel, ", ".join(same))
        outcomes.append(o)
        if o.result in ("invalid", UNBUILDABLE):
            progress("mutate", "%d/%d %s: %s: %s" % (n, len(mutants), m.name,
                                                     o.result.upper(), o.detail))
            continue
        progress("mutate", "%d/%d %s: %s in %.0fs%s" % (
            n, len(mutants), m.name, o.result, o.seconds,
            ": " + killer_summary(o, 2) if o.killers else ""))
    meta = run_meta(backend.accel, p.described)
    meta["targets"] = [t.name for t in targets]
    text = write(out, outcomes, catalogue, elapsed() - start, meta)
    print()
    print(text, end="")
    return 1 if any(failed(o) for o in outcomes) else 0
