"""make bench: the seed's performance claims, side by side.

Boots bench/robust_bench on every target under `series`, `stock` and
`bench-1m` (the series with V1's limit of 1048576), one guest at a time so
guests do not disturb each other, collects its "# bench {...}" lines
(through the one KTAP parser), and reports ratios measured within one
boot, and series against stock booted in the same run.
"""
import json
import os
import platform
import shutil
import subprocess

from . import config, ktap
from .log import Fatal, progress

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


def _ratio(a, b):
    return round(a / b, 2) if a is not None and b not in (None, 0) else None


def figures(recs, limit=2048):
    """The headline figures of one boot: per-lock costs and their ratios."""
    n = _largest_n(recs, "kernel_walk", "uncontended", limit)
    get = lambda path, c, at=n: (_point(recs, path, c, at) or {}).get("ns_per_lock")
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
    }
    f["walk_vs_user_uncontended"] = _ratio(f["walk_uncontended_ns"], f["user_uncontended_ns"])
    f["walk_vs_user_contended"] = _ratio(f["walk_contended_ns"], f["user_contended_ns"])
    f["contended_vs_uncontended"] = _ratio(f["walk_contended_ns"], f["walk_uncontended_ns"])
    f["empty_vs_no_list"] = _ratio(f["thread_empty_list_ns"], f["thread_no_list_ns"])
    return f


RATIO_KEYS = ("walk_uncontended_ns", "walk_contended_ns", "walk_waiters_ns",
              "user_uncontended_ns", "thread_no_list_ns", "thread_empty_list_ns",
              "thread_one_lock_ns")


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
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def summarize(raw, accel):
    """bench.json: raw records, figures per boot, series/stock ratios."""
    doc = {"accel": accel, "host_cpu": host_cpu(), "seed": {
        "ms_per_million": SEED_MS, "ns_per_lock": {k: v for k, v in SEED_MS.items()},
        "walk_vs_user_uncontended": round(30 / 256, 2),
        "walk_vs_user_contended": round(130 / 256, 2)},
        "boots": {}, "series_vs_stock": {}, "million": {}}
    for kernel, by_target in raw.items():
        for target, recs in by_target.items():
            machine = next((r for r in recs if r.get("path") == "machine"), {})
            doc["boots"].setdefault(kernel, {})[target] = {
                "guest_cpu": machine.get("cpu"), "records": recs,
                "figures": figures(recs)}
            if kernel == "bench-1m":
                doc["million"][target] = million(recs)
    for target in raw.get("series", {}):
        s = doc["boots"]["series"][target]["figures"]
        k = doc["boots"].get("stock", {}).get(target, {}).get("figures")
        if k:
            doc["series_vs_stock"][target] = {key: _ratio(s[key], k[key]) for key in RATIO_KEYS}
    return doc


def _fmt(v, unit=""):
    return "-" if v is None else ("%g%s" % (v, unit))


def render(doc):
    lines = ["robust-futex-matrix bench: accelerator %s, host CPU %s" % (
        doc["accel"], doc["host_cpu"]),
        "(TCG distorts a syscall against a memory access: read the ratios, "
        "not the nanoseconds)", ""]
    for target in doc["boots"].get("series", {}):
        s = doc["boots"]["series"][target]
        k = doc["boots"].get("stock", {}).get(target)
        ratio = doc["series_vs_stock"].get(target, {})
        f, g = s["figures"], (k or {}).get("figures", {})
        lines.append("== %s (guest CPU %s), per lock at N=%s unless noted" % (
            target, s["guest_cpu"], f["n"]))
        rows = [
            ("kernel walk, uncontended (ns/lock)", "walk_uncontended_ns", 30),
            ("kernel walk, FUTEX_WAITERS, no waiter (ns/lock)", "walk_contended_ns", 130),
            ("kernel walk, a waiter per lock, N=%s (ns/lock)" % f["walk_waiters_n"],
             "walk_waiters_ns", None),
            ("user space, one FUTEX_WAKE per lock (ns/lock)", "user_uncontended_ns", 256),
            ("thread create+exit, no list (ns)", "thread_no_list_ns", None),
            ("thread create+exit, empty list (ns)", "thread_empty_list_ns", None),
            ("thread create+exit, one held lock (ns)", "thread_one_lock_ns", None),
        ]
        table = [["figure", "series", "stock", "series/stock", "seed 2006"]]
        for label, key, seed in rows:
            table.append([label, _fmt(f.get(key)), _fmt(g.get(key)), _fmt(ratio.get(key)),
                          "-" if seed is None else "%d" % seed])
        table += [
            ["ratio: walk / user space, uncontended", _fmt(f["walk_vs_user_uncontended"]),
             _fmt(g.get("walk_vs_user_uncontended")), "", "0.12 (30/256)"],
            ["ratio: walk / user space, contended", _fmt(f["walk_vs_user_contended"]),
             _fmt(g.get("walk_vs_user_contended")), "", "0.51 (130/256)"],
            ["ratio: contended / uncontended walk", _fmt(f["contended_vs_uncontended"]),
             _fmt(g.get("contended_vs_uncontended")), "", "4.33 (130/30)"],
            ["ratio: empty list / no list, thread", _fmt(f["empty_vs_no_list"]),
             _fmt(g.get("empty_vs_no_list")), "", "~1 (claim)"],
        ]
        widths = [max(len(str(r[i])) for r in table) for i in range(5)]
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
        lines.append("")
    if doc["million"]:
        lines.append("== one million held locks (bench-1m kernel: ROBUST_LIST_LIMIT 1048576), ms")
        table = [["target", "walk uncontended", "walk FUTEX_WAITERS", "user space", ]]
        for target, m in doc["million"].items():
            table.append([target] + [_fmt(m[k]) for k in SEED_MS])
        table.append(["seed 2006 (2 GHz)", "30", "130", "256"])
        widths = [max(len(str(r[i])) for r in table) for i in range(4)]
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    return "\n".join(lines) + "\n"


def plot(doc, out):
    """ns/lock against N, a line per path and kernel, one PNG per target."""
    if shutil.which("gnuplot") is None:
        raise Fatal("gnuplot is missing: apt-get install gnuplot-nox")
    made = []
    for target in doc["boots"].get("series", {}):
        series_lines, data = [], []
        for kernel in ("series", "stock"):
            recs = doc["boots"].get(kernel, {}).get(target, {}).get("records", [])
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
                dat = out / ("plot-%s-%d.dat" % (target, len(data)))
                dat.write_text("".join("%d %s\n" % p for p in pts))
                data.append(dat)
                series_lines.append("'%s' using 1:2 with linespoints title '%s'%s" % (
                    dat, name, " dashtype 2" if kernel == "stock" else ""))
        if not series_lines:
            continue
        png = out / ("bench-%s.png" % target)
        script = "\n".join([
            ("set terminal pngcairo noenhanced size 1000,560" if _has_cairo()
             else "set terminal png size 1000,560"),
            "set output '%s'" % png,
            "set title 'robust list release cost per lock, %s (%s)'" % (target, doc["accel"]),
            "set logscale x 2", "set logscale y 10",
            "set xlabel 'held locks N'", "set ylabel 'ns per lock (median, log scale)'",
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
