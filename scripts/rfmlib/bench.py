"""make bench and make perf-gate: the seed's performance claims, side by side.

Boots bench/robust_bench on every target under `series`, `stock` and
`bench-1m` (the series with V1's limit of 1048576), one guest at a time so
guests do not disturb each other, collects its "# bench {...}" lines
(through the one KTAP parser), and reports ratios measured within one
boot, and series against stock booted in the same run.
"""
import json
import platform
import shutil
import subprocess

from . import config, deps, knobs, ktap, tables
from .tables import table_lines
from .log import Fatal
from .pipeline import Pipeline, boot_all
from .targets import KERNEL_CONFIGS, PERF_GATE_KERNELS, target as target_named

# The 2006 cover letter: one million held locks on a 2 GHz CPU.
SEED_MS = {"kernel_walk/uncontended": 30, "kernel_walk/contended": 130,
           "user_unlock/uncontended": 256}
MILLION = 1000000


def records(results_text):
    """The "# bench {...}" objects of one guest's results."""
    out = []
    for case in ktap.parse(results_text).cases().values():
        for line in case.diag:
            if line.startswith("bench "):
                out.append(json.loads(line[len("bench "):]))
    return out


def _point(recs, path, contention, n):
    for r in recs:
        if r.get("path") == path and r.get("contention") == contention and r.get("n") == n:
            return r
    return None


def _largest_n(recs, path, contention, limit=None):
    ns = [r["n"] for r in recs if r.get("path") == path
          and r.get("contention") == contention and (limit is None or r["n"] <= limit)]
    return max(ns) if ns else None


def _thread(recs, kind):
    for r in recs:
        if r.get("path") == "thread_create_exit" and r.get("list") == kind:
            return r["ns"]
    return None


def _exit_release(recs, kind):
    """patches/bench-exit's figure: the fewest instructions one
    futex_exit_release() took, for threads of this kind; None on a kernel
    without the counter."""
    for r in recs:
        if r.get("path") == "exit_release" and r.get("list") == kind:
            return r["insns_min"]
    return None


def _signal_hook(recs):
    """patches/bench-signal's figure: the fewest instructions one
    futex_fixup_robust_unlock() took before a signal delivery; None on a
    kernel without the counter (or without the hook)."""
    for r in recs:
        if r.get("path") == "signal_hook":
            return r["insns_min"]
    return None


def _per_op(recs, path, way=None):
    """The median of a per-operation figure (robust_unlock by way,
    signal_delivery); None where the kernel lacks it."""
    for r in recs:
        if r.get("path") == path and r.get("way") == way:
            return r["ns"]
    return None


def _ratio(a, b):
    return round(a / b, 2) if a is not None and b not in (None, 0) else None


def figures(recs, limit=2048):
    """The headline figures of one boot: per-lock costs and their ratios."""
    n = _largest_n(recs, "kernel_walk", "uncontended", limit)

    def get(path, c, at=n):
        # A walk of N > 0 locks takes time: a median of 0 per lock means
        # the spread of the N = 0 deaths (a loaded host, by the wall
        # clock) swallowed it. That is no figure, and no ratio of 0.
        v = (_point(recs, path, c, at) or {}).get("ns_per_lock")
        return None if v == 0 and path == "kernel_walk" else v

    nw = _largest_n(recs, "kernel_walk", "waiters", limit)
    f = {
        "n": n,
        "walk_uncontended_ns": get("kernel_walk", "uncontended"),
        "walk_contended_ns": get("kernel_walk", "contended"),
        "walk_waiters_ns": get("kernel_walk", "waiters", nw),
        "walk_waiters_n": nw,
        "user_uncontended_ns": get("user_unlock", "uncontended"),
        "user_contended_ns": get("user_unlock", "contended"),
        "thread_no_list_ns": _thread(recs, "no_list"),
        "thread_empty_list_ns": _thread(recs, "empty_list"),
        "thread_one_lock_ns": _thread(recs, "one_lock"),
        "exit_release_no_list": _exit_release(recs, "no_list"),
        "exit_release_empty_list": _exit_release(recs, "empty_list"),
        "unlock_classic_ns": _per_op(recs, "robust_unlock", "classic"),
        "unlock_vdso_ns": _per_op(recs, "robust_unlock", "vdso"),
        "unlock_wake_ns": _per_op(recs, "robust_unlock", "wake"),
        "unlock_wake_robust_ns": _per_op(recs, "robust_unlock", "wake_robust"),
        "signal_delivery_ns": _per_op(recs, "signal_delivery"),
        "signal_hook": _signal_hook(recs),
    }
    f["walk_vs_user_uncontended"] = _ratio(f["walk_uncontended_ns"], f["user_uncontended_ns"])
    f["walk_vs_user_contended"] = _ratio(f["walk_contended_ns"], f["user_contended_ns"])
    f["contended_vs_uncontended"] = _ratio(f["walk_contended_ns"], f["walk_uncontended_ns"])
    f["empty_vs_no_list"] = _ratio(f["thread_empty_list_ns"], f["thread_no_list_ns"])
    f["vdso_vs_classic"] = _ratio(f["unlock_vdso_ns"], f["unlock_classic_ns"])
    f["wake_robust_vs_wake"] = _ratio(f["unlock_wake_robust_ns"], f["unlock_wake_ns"])
    return f


# The unlock paths of the 2026 ABI, held against mainline, which has them
# (stock has not): the vDSO try-unlock and FUTEX_WAKE|FUTEX_ROBUST_UNLOCK.
UNLOCK_KEYS = (("unlock_vdso_ns", "vDSO try-unlock"),
               ("unlock_wake_robust_ns", "FUTEX_WAKE|FUTEX_ROBUST_UNLOCK"))


RATIO_KEYS = ("walk_uncontended_ns", "walk_contended_ns", "walk_waiters_ns",
              "user_uncontended_ns", "thread_no_list_ns", "thread_empty_list_ns",
              "thread_one_lock_ns", "unlock_classic_ns", "unlock_wake_ns",
              "signal_delivery_ns")


def million(recs):
    """The 1M-lock experiment of bench-1m: totals in ms."""
    out = {}
    for key in SEED_MS:
        path, contention = key.split("/")
        r = _point(recs, path, contention, MILLION)
        out[key] = round(r["total_ns"] / 1e6, 1) if r else None
    return out


def host_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


# How a figure was measured. "wall": TCG's guest clock, which follows the
# host's: nanoseconds, noisy (up to 10% between runs here). "icount":
# QEMU's instruction-counting clock (qemu.ICOUNT_ARGS): one "ns" per guest
# instruction, the same count on every run and host; it does not see what
# an instruction costs (a fence, a cache or TLB miss, a mispredicted branch
# all count one), so it complements the wall clock rather than replacing it.
METHODS = ("wall", "icount")
UNIT = {"wall": "ns", "icount": "instructions"}
LABEL = {"wall": "", "icount": " (icount)"}


def summarize_method(by_kernel):
    """Figures per boot, series/stock ratios and the 1M experiment, for
    the boots of one method: {kernel: {target: records}}."""
    part = {"boots": {}, "series_vs_stock": {}, "series_vs_mainline": {}, "million": {}}
    for kernel, by_target in by_kernel.items():
        for target, recs in by_target.items():
            machine = next((r for r in recs if r.get("path") == "machine"), {})
            part["boots"].setdefault(kernel, {})[target] = {
                "guest_cpu": machine.get("cpu"), "records": recs,
                "figures": figures(recs)}
            if kernel == "bench-1m":
                part["million"][target] = million(recs)
    for target in by_kernel.get("series", {}):
        s = part["boots"]["series"][target]["figures"]
        k = part["boots"].get("stock", {}).get(target, {}).get("figures")
        if k:
            part["series_vs_stock"][target] = {key: _ratio(s[key], k[key])
                                               for key in RATIO_KEYS}
        m = part["boots"].get("mainline", {}).get(target, {}).get("figures")
        if m:
            part["series_vs_mainline"][target] = {
                key: _ratio(s[key], m[key])
                for key in RATIO_KEYS + tuple(key for key, _ in UNLOCK_KEYS)}
    return part


def summarize(raw, accel):
    """bench.json: {method: raw records, figures per boot, series/stock
    ratios}, and the two methods' ratios side by side."""
    doc = {"accel": accel, "host_cpu": host_cpu(), "seed": {
        "ms_per_million": SEED_MS, "ns_per_lock": {k: v for k, v in SEED_MS.items()},
        "walk_vs_user_uncontended": round(30 / 256, 2),
        "walk_vs_user_contended": round(130 / 256, 2)},
        "units": {m: UNIT[m] for m in raw},
        "methods": {m: summarize_method(raw[m]) for m in METHODS if m in raw}}
    doc["ratios_by_method"] = {
        target: {key: {m: doc["methods"][m]["series_vs_stock"].get(target, {}).get(key)
                       for m in doc["methods"]} for key in RATIO_KEYS}
        for target in doc["methods"].get("wall", doc["methods"].get("icount", {}))
        .get("series_vs_stock", {})}
    return doc


def _fmt(v, unit=""):
    return "-" if v is None else ("%g%s" % (v, unit))


FIGURE_ROWS = (
    ("kernel walk, uncontended (%s/lock)", "walk_uncontended_ns", 30),
    ("kernel walk, FUTEX_WAITERS, no waiter (%s/lock)", "walk_contended_ns", 130),
    ("kernel walk, a waiter per lock (%s/lock)", "walk_waiters_ns", None),
    ("user space, one FUTEX_WAKE per lock (%s/lock)", "user_uncontended_ns", 256),
    ("thread create+exit, no list (%s)", "thread_no_list_ns", None),
    ("thread create+exit, empty list (%s)", "thread_empty_list_ns", None),
    ("thread create+exit, one held lock (%s)", "thread_one_lock_ns", None),
    ("robust unlock, no waiter, classic user space (%s)", "unlock_classic_ns", None),
    ("robust unlock, no waiter, vDSO try-unlock (%s)", "unlock_vdso_ns", None),
    ("robust unlock, FUTEX_WAITERS, FUTEX_WAKE (%s)", "unlock_wake_ns", None),
    ("robust unlock, FUTEX_WAITERS, FUTEX_WAKE|FUTEX_ROBUST_UNLOCK (%s)",
     "unlock_wake_robust_ns", None),
    ("signal delivery to self, handled (%s)", "signal_delivery_ns", None),
)


# Ratios within one boot: (label, figures() key, the seed's figure).
RATIO_ROWS = (
    ("ratio: walk / user space, uncontended", "walk_vs_user_uncontended", "0.12 (30/256)"),
    ("ratio: walk / user space, contended", "walk_vs_user_contended", "0.51 (130/256)"),
    ("ratio: contended / uncontended walk", "contended_vs_uncontended", "4.33 (130/30)"),
    ("ratio: empty list / no list, thread", "empty_vs_no_list", "~1 (claim)"),
    ("ratio: vDSO try-unlock / classic unlock", "vdso_vs_classic", "-"),
    ("ratio: WAKE|ROBUST_UNLOCK / WAKE", "wake_robust_vs_wake", "-"),
)


def render(doc):
    lines = ["robust-futex-matrix bench: accelerator %s, host CPU %s" % (
        doc["accel"], doc["host_cpu"]),
        "(TCG distorts a syscall against a memory access: read the ratios, "
        "not the nanoseconds; (icount) figures are guest instructions, exact "
        "but blind to what an instruction costs; - is no figure: not measured, "
        "or a walk lost in the noise of the N = 0 deaths)", ""]
    methods = doc["methods"]
    first = methods.get("wall") or methods.get("icount")
    for target in first["boots"].get("series", {}):
        f0 = first["boots"]["series"][target]["figures"]
        lines.append("== %s (guest CPU %s), per lock at N=%s unless noted; a waiter "
                     "per lock at N=%s" % (target, first["boots"]["series"][target]["guest_cpu"],
                                           f0["n"], f0["walk_waiters_n"]))
        # Mainline's columns when make bench booted it (KERNELS=...,mainline).
        mainline = any(target in p["boots"].get("mainline", {}) for p in methods.values())
        table = [["figure", "series", "stock", "series/stock"]
                 + (["mainline", "series/mainline"] if mainline else []) + ["seed 2006"]]
        for label, key, seed in FIGURE_ROWS:
            for m, part in methods.items():
                f = part["boots"]["series"].get(target, {}).get("figures", {})
                g = part["boots"].get("stock", {}).get(target, {}).get("figures", {})
                r = part["series_vs_stock"].get(target, {})
                row = [(label % UNIT[m]) + LABEL[m], _fmt(f.get(key)), _fmt(g.get(key)),
                       _fmt(r.get(key))]
                if mainline:
                    h = part["boots"].get("mainline", {}).get(target, {}).get("figures", {})
                    row += [_fmt(h.get(key)), _fmt(_ratio(f.get(key), h.get(key)))]
                table.append(row + ["-" if seed is None or m != "wall" else seed])
        f = first["boots"]["series"][target]["figures"]
        g = first["boots"].get("stock", {}).get(target, {}).get("figures", {})
        h = first["boots"].get("mainline", {}).get(target, {}).get("figures", {})
        for label, key, seed in RATIO_ROWS:
            table.append([label, _fmt(f[key]), _fmt(g.get(key)), ""]
                         + ([_fmt(h.get(key)), ""] if mainline else []) + [seed])
        lines += table_lines(table[0], table[1:])
        lines.append("")
    if len(methods) > 1 and doc["ratios_by_method"]:
        lines.append("== series/stock by method: wall clock | icount")
        targets = list(doc["ratios_by_method"])
        table = [["figure"] + targets]
        for label, key, _ in FIGURE_ROWS:
            if key not in RATIO_KEYS:
                continue    # the new ABI's ways: no stock figure to compare
            table.append([label.split(" (")[0]] + [
                "%s | %s" % (_fmt(doc["ratios_by_method"][t][key].get("wall")),
                             _fmt(doc["ratios_by_method"][t][key].get("icount")))
                for t in targets])
        lines += table_lines(table[0], table[1:])
        lines.append("")
    for m, part in methods.items():
        if not part["million"]:
            continue
        lines.append("== one million held locks (bench-1m kernel: ROBUST_LIST_LIMIT "
                     "1048576), %s%s" % ("ms" if m == "wall" else "million instructions",
                                         LABEL[m]))
        table = [["target", "walk uncontended", "walk FUTEX_WAITERS", "user space"]]
        for target, mm in part["million"].items():
            table.append([target] + [_fmt(mm[k]) for k in SEED_MS])
        if m == "wall":
            table.append(["seed 2006 (2 GHz)", "30", "130", "256"])
        lines += table_lines(table[0], table[1:])
        lines.append("")
    return "\n".join(lines)


# ---- the performance gate (make check), on the exact figures ----

# What an empty registered list may add to a thread's create+exit, in
# instructions, per kernel architecture, where the exit release itself
# cannot be counted (no patches/bench-exit counter: ARM). That figure is
# the difference of two create+exit averages and moves with the kernel's
# layout, so it gets a bound, not a comparison with stock. On arm64
# reading the head is one instruction in a PAN window per word; the
# 32-bit ARM kernel (CPU_SW_DOMAIN_PAN, as Debian's armmp has it)
# rewrites the domain access register around every user read.
EMPTY_LIST_BOUNDS = {"arm64": 100, "arm": 130}
# Kernel architectures the gate has no figure for yet, and why: make
# perf-gate refuses their targets by name rather than judge them.
NOT_GATED = {"mips": "no bound measured yet for MIPS (docs/known-gaps.md)",
             "powerpc": "no bound measured yet for PowerPC (docs/known-gaps.md)",
             "s390": "no bound measured yet for s390 (docs/known-gaps.md)"}


def empty_list_bound(target_name):
    return EMPTY_LIST_BOUNDS[KERNEL_CONFIGS[target_named(target_name).kconfig].arch]


# What the series' signal-time hook (patch 13: futex_fixup_robust_unlock()
# before every signal delivery: a look at the instruction pointer and the
# vDSO image) may cost a signal delivered outside any vDSO unlock, in
# instructions, counted where it runs (patches/bench-signal) on the
# architectures that have it. Not the difference of two deliveries: that
# moves by hundreds of instructions between builds of the same code.
# Counted on 2026-12-05: 39 on x86_64 and x32 (ZF set in the interrupted
# flags: both windows compared), 33 on i386, 25 for an ia32 task; the
# bound leaves a fifth for another compiler.
SIGNAL_HOOK_BOUND = 48

# Kernel architectures whose bench-exit kernels count the exit release
# (patches/bench-exit reads the TSC): their gate requires that figure.
COUNTED_ARCHES = ("x86_64", "i386")


def _no_more(rows, target, rule, sv, kv):
    rows.append((target, rule, sv, kv, None not in (sv, kv) and sv <= kv))


# The references the gate holds the series against, in this order, when
# their boots are there: stock 6.1, and mainline (7.3).
GATE_REFERENCES = ("stock", "mainline")


def gate(part):
    """[(target, check, series, reference, ok)] on the icount figures of
    one run, against each reference there is (GATE_REFERENCES): the
    series' walk costs no more instructions per lock than the
    reference's, uncontended and with FUTEX_WAITERS; and a thread that
    holds nothing pays no more: the exit release (futex_exit_release()
    on 6.1, futex_exit_exec_release() on 7.3) of a thread with no list
    and with an empty list, counted where it runs (the bench-exit
    kernels; no count is a failure). An architecture without that
    counter gets the bound of EMPTY_LIST_BOUNDS on the create+exit
    difference instead. Against mainline, each unlock path of the 2026
    ABI costs no more either. Where the series has its signal-time hook
    (x86), the hook costs a signal delivered outside any unlock at most
    SIGNAL_HOOK_BOUND instructions, counted where it runs (no count is a
    failure); no reference has that hook to compare with."""
    rows = []
    references = [r for r in GATE_REFERENCES if r in part["boots"]]
    for target, boot in part["boots"].get("series", {}).items():
        s = boot["figures"]
        arch = KERNEL_CONFIGS[target_named(target).kconfig].arch
        if arch in COUNTED_ARCHES:
            hook = s.get("signal_hook")
            rows.append((target, "signal hook <= %d" % SIGNAL_HOOK_BOUND, hook, None,
                         hook is not None and hook <= SIGNAL_HOOK_BOUND))
        for ref in references:
            k = part["boots"][ref].get(target, {}).get("figures", {})
            for key in ("walk_uncontended_ns", "walk_contended_ns"):
                _no_more(rows, target, "%s <= %s" % (key.replace("_ns", ""), ref),
                         s.get(key), k.get(key))
            if arch in COUNTED_ARCHES:
                for kind in ("no_list", "empty_list"):
                    key = "exit_release_" + kind
                    _no_more(rows, target, "exit release, %s <= %s" % (
                        kind.replace("_", " "), ref), s.get(key), k.get(key))
            if ref == "mainline":
                for key, what in UNLOCK_KEYS:
                    _no_more(rows, target, "unlock, %s <= mainline" % what,
                             s.get(key), k.get(key))
        if arch in COUNTED_ARCHES:
            continue
        k = part["boots"].get("stock", {}).get(target, {}).get("figures", {})
        extra = (None if None in (s.get("thread_empty_list_ns"), s.get("thread_no_list_ns"))
                 else s["thread_empty_list_ns"] - s["thread_no_list_ns"])
        k_extra = (None if None in (k.get("thread_empty_list_ns"), k.get("thread_no_list_ns"))
                   else k["thread_empty_list_ns"] - k["thread_no_list_ns"])
        bound = empty_list_bound(target)
        rows.append((target, "empty list - no list <= %d (no exit counter)" % bound,
                     extra, k_extra, extra is not None and extra <= bound))
    return rows


def plot(doc, out):
    """Per lock cost against N, a line per path and kernel: one PNG per
    target and method (bench-<target>.png, bench-<target>-icount.png)."""
    if shutil.which("gnuplot") is None:
        raise Fatal("gnuplot is missing: apt-get install gnuplot-nox")
    made = []
    for method, part in doc["methods"].items():
        made += _plot_method(part, method, doc["accel"], out)
    return made


def _plot_method(part, method, accel, out):
    made = []
    suffix = "" if method == "wall" else "-" + method
    for target in part["boots"].get("series", {}):
        series_lines, data = [], []
        for kernel in ("series", "stock"):
            recs = part["boots"].get(kernel, {}).get(target, {}).get("records", [])
            for path, contention in (("kernel_walk", "uncontended"),
                                     ("kernel_walk", "contended"),
                                     ("kernel_walk", "waiters"),
                                     ("user_unlock", "uncontended")):
                pts = sorted((r["n"], r["ns_per_lock"]) for r in recs
                             if r.get("path") == path and r.get("contention") == contention
                             and r["n"] >= 16 and r["n"] <= 2048)
                if not pts:
                    continue
                name = "%s %s %s" % (kernel, path.replace("_", " "), contention)
                dat = out / ("plot-%s%s-%d.dat" % (target, suffix, len(data)))
                dat.write_text("".join("%d %s\n" % p for p in pts))
                data.append(dat)
                series_lines.append("'%s' using 1:2 with linespoints title '%s'%s" % (
                    dat, name, " dashtype 2" if kernel == "stock" else ""))
        if not series_lines:
            continue
        png = out / ("bench-%s%s.png" % (target, suffix))
        script = "\n".join([
            ("set terminal pngcairo noenhanced size 1000,560" if _has_cairo()
             else "set terminal png size 1000,560"),
            "set output '%s'" % png,
            "set title 'robust list release cost per lock, %s (%s%s)'" % (
                target, accel, LABEL[method]),
            "set logscale x 2", "set logscale y 10",
            "set xlabel 'held locks N'",
            "set ylabel '%s per lock (median, log scale)'" % UNIT[method],
            "set key outside right", "set grid",
            "plot " + ", ".join(series_lines)])
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            raise Fatal("gnuplot failed: %s" % r.stderr[-500:])
        for d in data:
            d.unlink()
        made.append(png)
    return made


def _has_cairo():
    r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (r.stdout + r.stderr)


def bench_boots(kernels, targets, out, icount, append=""):
    """{kernel: {target: records}} and the accelerator: wall-clock boots
    one at a time (so guests do not disturb each other), icount boots JOBS
    at a time (their counts do not depend on the host). A guest that does
    not complete, or a case that fails, is Fatal: no figure from it."""
    p = Pipeline(kernels, targets, suite="bench").build()
    if p.unavailable:
        raise Fatal("; ".join("%s: %s" % kv for kv in p.unavailable.items()))
    backend = p.backend(icount=icount, jobs=None if icount else 1)
    where = out / ("icount" if icount else "wall")
    guests = [p.guest(k, t, where, icount=icount, run_timeout=knobs.get("RUN_TIMEOUT"),
                      append=" ".join(a for a in (append, "rfm.bench_max_n=%d" % MILLION
                                                  if k == "bench-1m" else "") if a))
              for k in kernels for t in targets]
    raw = {}

    def figures_of(g, run):
        if run.boot_status != "complete":
            raise Fatal("bench guest %s/%s: %s %s (see %s)" % (
                g.kernel, g.target.name, run.boot_status, run.detail, g.out / "console.log"))
        failed = [c.key for c in run.run.cases().values()
                  if c.status not in (ktap.PASS, ktap.SKIP)]
        if failed:
            raise Fatal("bench %s/%s: %s failed (see %s)" % (
                g.kernel, g.target.name, ", ".join(failed), g.out / "results.ktap"))
        raw.setdefault(g.kernel, {})[g.target.name] = records(
            (g.out / "results.ktap").read_text())

    boot_all(backend, guests, stage="bench", check=figures_of)
    return raw, backend.accel


def cmd_bench(_args):
    """The benchmark on every target and kernel, measured twice: by the
    wall clock and by QEMU's instruction count."""
    kernels = knobs.get("KERNELS")
    targets = knobs.get("TARGETS")
    knobs.user_images(kernels, targets)
    deps.ensure(extra=("gnuplot-nox",))
    out = config.out_dir() / "bench"
    shutil.rmtree(out, ignore_errors=True)
    raw = {}
    raw["wall"], accel = bench_boots(kernels, targets, out, icount=False)
    raw["icount"], _ = bench_boots(kernels, targets, out, icount=True)
    doc = summarize(raw, accel)
    (out / "bench.json").write_text(json.dumps(doc, indent=1) + "\n")
    text = render(doc)
    (out / "bench.txt").write_text(text)
    pngs = plot(doc, out)
    print()
    print(text, end="")
    print("written: %s/bench.json, bench.txt, %s" % (out, ", ".join(p.name for p in pngs)))
    return 0


def cmd_perf_gate(_args):
    """The performance gate, on exact figures: series against stock under
    QEMU's instruction count, on every target, run twice; the two runs
    must give the same figures (or the gate could flake) and the series
    must keep to gate()'s rules."""
    targets = knobs.get("TARGETS")
    kernels = knobs.get("KERNELS")
    refused = [t.name for t in targets if KERNEL_CONFIGS[t.kconfig].arch in NOT_GATED]
    if refused:
        raise Fatal("make perf-gate: %s: %s" % (", ".join(refused), "; ".join(sorted(
            {NOT_GATED[KERNEL_CONFIGS[target_named(n).kconfig].arch] for n in refused}))))
    deps.ensure()
    column = {kernel: name for name, kernel in PERF_GATE_KERNELS.items()}
    if any(k not in column for k in kernels) or PERF_GATE_KERNELS["series"] not in kernels \
            or len(kernels) < 2:
        raise Fatal("make perf-gate: KERNELS=%s: the series' %s and at least one of %s" % (
            ",".join(kernels), PERF_GATE_KERNELS["series"], ", ".join(
                k for n, k in PERF_GATE_KERNELS.items() if n != "series")))
    out = config.out_dir() / "perf-gate"
    shutil.rmtree(out, ignore_errors=True)
    runs = []
    for n in (1, 2):
        # Only the figures the gate reads, three runs each (they are exact).
        raw, _ = bench_boots(kernels, targets, out / ("run%d" % n), icount=True,
                             append="rfm.bench_gate=1")
        # The counter adds the same to every exit on each: they stand for
        # the series, stock and mainline.
        runs.append(summarize_method({column[k]: raw[k] for k in kernels}))
    figures = [{k: {t: b["figures"] for t, b in by_t.items()}
                for k, by_t in r["boots"].items()} for r in runs]
    rows = [[t, check, _fmt(sv), _fmt(kv), "ok" if ok else "FAIL"]
            for t, check, sv, kv, ok in gate(runs[0])]
    text = tables.format_table(["target", "rule (instructions)", "series", "reference", ""],
                               rows)
    same = figures[0] == figures[1]
    bad = sum(r[-1] != "ok" for r in rows)
    text += "\n%s\nperf gate: %s\n" % (
        "two runs, identical figures" if same else
        "the two runs DIFFER: the exact figures are not exact (see %s)" % out,
        "%d rule(s) broken" % bad if bad else "every rule holds" if same else "not judged")
    (out / "perf-gate.txt").write_text(text)
    (out / "perf-gate.json").write_text(json.dumps(
        {"identical": same, "figures": figures, "rules": [
            {"target": t, "rule": check, "series": sv, "reference": kv, "ok": ok}
            for t, check, sv, kv, ok in gate(runs[0])]}, indent=1) + "\n")
    print(text, end="")
    return 0 if same and not bad else 1
