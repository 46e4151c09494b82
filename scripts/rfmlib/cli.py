"""Commands behind the Makefile: run, check, report, kernels, shell, deps.

Knobs come from the environment (the Makefile passes its variables on);
knobs.py is their table, and main() checks those of a command first.
"""
import argparse
import contextlib
import dataclasses
import datetime
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from . import (abi, atomic, bench, ci, compare, config, deps, guest, kbuild, knobs, ktap, merge,
               mutate, mutgen, names, prebuilt, procs, qemu, report, sparse, tables, tree)
from .log import Fatal, Usage, elapsed, progress, warn
from .targets import (BENCH_KERNELS, CHECK_KERNELS, DEFAULT_RUN_KERNELS, KERNEL_CONFIGS,
                      KERNEL_VARIANTS, PERF_GATE_KERNELS, bisect_configs, kernel_append,
                      select_targets, target)

CONTROL_RULES = config.REPO / "tests" / "negative-control.txt"
DEVIATIONS = config.PATCHES / "deviations.txt"


def build_kernels(kernels, targets):
    """{(kernel, kconfig): image dir}, and {kernel: why unavailable}."""
    images, unavailable, described = {}, {}, {}
    for kernel in kernels:
        if KERNEL_VARIANTS[kernel].get("prebuilt"):
            for kc in sorted({t.kconfig for t in targets}):
                images[(kernel, kc)] = (
                    prebuilt.fetch(kc) if KERNEL_VARIANTS[kernel]["prebuilt"] == "debian"
                    else prebuilt.user_kernel(kc, tree.pristine_tree(),
                                              x32=any(t.userland == "x32" for t in targets)))
            described[kernel] = "; ".join(sorted({prebuilt.describe(images[(kernel, kc)])
                                                  for kc in {t.kconfig for t in targets}}))
            continue
        patches = tree.patches_for(KERNEL_VARIANTS[kernel]["patches"])
        if patches is None:
            unavailable[kernel] = ("patches/series is empty, so there is no "
                                   "removal patch to build it from yet")
            continue
        described[kernel] = "%s + %d patch(es)" % (config.LINUX_VERSION, len(patches))
        base = KERNEL_VARIANTS[kernel].get("base")
        if base:
            described[kernel] += ", Debian's config"
        # Each variant built from its own config keeps its own build dirs.
        slot = kernel if patches or base else "stock"
        extra = KERNEL_VARIANTS[kernel].get("fragments", {})
        lacking = sorted({t.kconfig for t in targets} - set(extra)) if extra else []
        if lacking:
            raise Usage("KERNELS=%s has no config fragments for the %s kernel(s) "
                        "(targets %s); choose other targets, or KERNELS=series" % (
                            kernel, ", ".join(lacking),
                            ", ".join(t.name for t in targets if t.kconfig in lacking)))
        for kc in sorted({t.kconfig for t in targets}):
            images[(kernel, kc)] = kbuild.build(
                slot, patches, kc, label="%s/%s" % (kernel, kc),
                extra_fragments=[config.KCONFIG / f for f in extra.get(kc, ())],
                base_config=prebuilt.base_config(KERNEL_VARIANTS[kernel], kc))
    return images, unavailable, described


def libc_mode():
    """LIBC=static|shared: how the project's robust-mutex programs link."""
    return knobs.get("LIBC", "static")


def program_timeout():
    """PROGRAM_TIMEOUT=seconds: each guest program's limit (init's rfm.timeout)."""
    return knobs.get("PROGRAM_TIMEOUT", 300)


def boot_all(jobs, accel, out, append="", run_timeout=None):
    """Boot (kernel, target, image, initramfs, programs) jobs in parallel;
    each kernel variant's own command line goes after `append`."""
    def one(job):
        kernel, t, image, initrd, programs = job
        d = out / kernel / t.name
        b = qemu.boot(t, image / "bzImage", initrd, d, accel,
                      append=" ".join(a for a in (append, kernel_append(kernel)) if a),
                      run_timeout=run_timeout)
        progress("boot", "%s/%s: %s in %.1fs%s" % (
            kernel, t.name, b.status, b.seconds, " (%s)" % b.detail if b.detail else ""))
        return kernel, t, b, programs

    runs = {}
    for kernel, t, b, programs in procs.parallel(one, jobs, config.jobs()):
        d = out / kernel / t.name
        runs.setdefault(kernel, {})[t.name] = load_guest_run(
            d, t.name, b.status, b.seconds, b.detail, programs)
    return runs


def load_guest_run(d, target_name, status, seconds, detail, programs):
    results = d / "results.ktap"
    console = d / "console.log"
    log = console.read_text(errors="replace") if console.exists() else ""
    return compare.GuestRun(
        target=target_name, boot_status=status,
        run=ktap.parse(results.read_text(errors="replace") if results.exists() else ""),
        console=ktap.scan_console(log), console_seen=bool(log.strip()),
        programs=tuple(programs), seconds=seconds, detail=detail)


def initramfs_images(targets, extra=None, suite="tests", libc="static"):
    """{userland: (cpio, programs)} for the targets' user-space ABIs."""
    pristine = tree.pristine_tree()
    initrds = {}
    for t in targets:
        if t.userland not in initrds:
            cpio, tests, extras = guest.build_initramfs(pristine, t.user, extra, suite=suite,
                                                        libc=libc)
            initrds[t.userland] = (cpio, tests + extras)
    return initrds


def run_meta(accel, described, extra=None):
    return {"tree": "%s %s" % (config.LINUX_SOURCE_PACKAGE, config.LINUX_SOURCE_DEB_VERSION),
            "accel": accel, "kernels": described,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "extra": str(extra or "")}


def matrix_run(kernels, targets, extra):
    libc, timeout = libc_mode(), program_timeout()
    run_timeout = knobs.get("RUN_TIMEOUT", qemu.RUN_TIMEOUT)
    if timeout >= run_timeout:
        warn("PROGRAM_TIMEOUT=%d is not below RUN_TIMEOUT=%d: one hung program "
             "ends the guest, and the programs after it are reported as not run"
             % (timeout, run_timeout))
    deps.ensure()
    out = config.out_dir()
    # No verdict of an earlier run may outlive this one's start: a run that
    # is killed leaves no matrix (make report then says so), never an old one.
    for name in ("run.json", "matrix.txt", "matrix.json", "junit.xml", "kcidb.json"):
        (out / name).unlink(missing_ok=True)
    images, unavailable, described = build_kernels(kernels, targets)
    initrds = initramfs_images(targets, extra, libc=libc)
    jobs = [(k, t, images[(k, t.kconfig)]) + initrds[t.userland]
            for k in kernels if k not in unavailable for t in targets]
    accel = "tcg"
    if jobs:
        k, t, image, initrd, _ = jobs[0]
        accel = qemu.choose_accel(t, image / "bzImage", initrd)
    for k in kernels:
        shutil.rmtree(out / k, ignore_errors=True)
    progress("boot", "%d guest(s), %s, up to %d at a time" % (len(jobs), accel, config.jobs()))
    runs = boot_all(jobs, accel, out, append="rfm.timeout=%d" % timeout)
    meta = run_meta(accel, described, extra)
    meta["program_timeout"] = timeout
    meta["libc"] = {t.name: guest.libc_used(t.user, libc) for t in targets}
    meta["provenance"] = merge.provenance(
        kernels, targets, images, unavailable, initrds,
        {kc: kbuild.compiler_ident(KERNEL_CONFIGS[kc]) for kc in {t.kconfig for t in targets}})
    atomic.write(out / "run.json", json.dumps({
        "meta": meta, "kernels": list(kernels), "targets": [t.name for t in targets],
        "unavailable": unavailable,
        "guests": {k: {t: {"status": r.boot_status, "seconds": r.seconds, "detail": r.detail,
                           "programs": list(r.programs)} for t, r in v.items()}
                   for k, v in runs.items()}}, indent=1))
    return render(runs, kernels, targets, unavailable, meta, out)


def render(runs, kernels, targets, unavailable, meta, out):
    matrix = compare.build_matrix(
        runs, targets, kernels, deviations=compare.load_rules(DEVIATIONS),
        control=compare.load_rules(CONTROL_RULES), unavailable=unavailable, meta=meta)
    text = report.write_all(matrix, out)
    progress("report", "%s/{matrix.txt,matrix.json,junit.xml}" % out)
    print()
    print(text, end="")
    return matrix["summary"]["exit_status"]


def cmd_report(_args):
    """Re-read out/ (results and console logs) and render the matrix again."""
    out = config.out_dir()
    if not (out / "run.json").is_file():
        raise Usage("%s/run.json: no run to report (make run writes it; a run that "
                    "was interrupted leaves none)" % out)
    state = json.loads((out / "run.json").read_text())
    targets = select_targets(",".join(state["targets"]))
    runs = {}
    for k, by_t in state["guests"].items():
        for t, g in by_t.items():
            runs.setdefault(k, {})[t] = load_guest_run(
                out / k / t, t, g["status"], g["seconds"], g["detail"], g["programs"])
    return render(runs, state["kernels"], targets, state["unavailable"], state["meta"], out)


def cmd_merge(args):
    """Join shard outputs (RESULTS="dir1 dir2 ...") into RFM_OUT as one run
    over their union, then render it as `make report` does."""
    merge.join((knobs.get("RESULTS") or "").split(), config.out_dir(),
               knobs.raw("KERNELS"), knobs.raw("TARGETS"))
    return cmd_report(args)


def cmd_cache_key(args):
    """The kernel cache key of KERNELS (default: series) on TARGETS."""
    deps.require_commands("gcc")    # the compiler is part of every key
    kernels = knobs.get("KERNELS", DEFAULT_RUN_KERNELS)
    keys = ci.kernel_keys(kernels, knobs.get("TARGETS", select_targets("")))
    if args.list:
        for kernel, kc, key in keys:
            print("%s/%s %s" % (kernel, kc, key))
    if args.prune:
        for key in ci.prune(keys):
            print("removed %s" % key, file=sys.stderr)
    if not args.list:
        print(ci.cache_key(keys))
    return 0


def cmd_run(args):
    default, targets = args.default_kernels, knobs.get("TARGETS")
    if knobs.raw("BZIMAGE") or knobs.raw("BZIMAGE32"):
        # The user's own kernel(s): only the targets they can boot.
        default = ("user",)
        if not targets:
            have = {kc for kc, var in (("x86_64", "BZIMAGE"), ("i386", "BZIMAGE32"))
                    if knobs.raw(var)}
            targets = tuple(t for t in select_targets("") if t.kconfig in have)
            progress("targets", "BZIMAGE: %s (TARGETS= to choose; x86_64-x32 needs "
                     "CONFIG_X86_X32_ABI)" % ",".join(t.name for t in targets))
    kernels = knobs.get("KERNELS", default)
    targets = targets or select_targets("")
    knobs.user_images(kernels, targets)
    return matrix_run(kernels, targets, guest.extra_for(targets))


def cmd_host_tests(_args):
    r = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s",
                        str(config.REPO / "tests" / "host"), "-t",
                        str(config.REPO), "-v"],
                       cwd=config.REPO,
                       env=dict(os.environ, PYTHONPATH=str(config.REPO / "scripts")))
    return r.returncode


def cmd_kernels(_args):
    kernels = knobs.get("KERNELS", DEFAULT_RUN_KERNELS)
    targets = knobs.get("TARGETS", select_targets(""))
    knobs.user_images(kernels, targets)
    deps.ensure()
    _, unavailable, _ = build_kernels(kernels, targets)
    for k, why in unavailable.items():
        print("%s: not available: %s" % (k, why))
    return 0


def cmd_shell(_args):
    t = knobs.get("TARGET", target("x86_64"))
    kernel = knobs.get("KERNEL", "series")
    knobs.user_images((kernel,), (t,))
    extra = guest.extra_for((t,))
    deps.ensure()
    images, unavailable, _ = build_kernels((kernel,), (t,))
    if unavailable:
        raise Fatal("%s: %s" % (kernel, unavailable[kernel]))
    cpio, _, _ = guest.build_initramfs(tree.pristine_tree(), t.user, extra,
                                       libc=libc_mode())
    accel = knobs.get("ACCEL", "tcg")
    cmd = qemu.qemu_command(t, images[(kernel, t.kconfig)] / "bzImage", cpio,
                            accel, "shell", None, None)
    print("Booting %s/%s; the tests are in /tests; `exit` powers off; "
          "Ctrl-a x quits QEMU." % (kernel, t.name), flush=True)
    return procs.wait(procs.popen(cmd, group=False))   # QEMU reads the terminal


def cmd_guest_selftest(_args):
    """Prove the failure paths on a real guest: a kernel that panics must
    give exit 1, a guest that hangs exit 2; neither may ever give 0."""
    t = knobs.get("TARGETS", select_targets(""))[0]
    deps.ensure()
    kernel = "stock"
    images, _, _ = build_kernels((kernel,), (t,))
    cpio, programs, _ = guest.build_initramfs(tree.pristine_tree(), t.user)
    image = images[(kernel, t.kconfig)] / "bzImage"
    failed = 0
    for mode, want in (("crash", 1), ("hang", 2)):
        d = config.out_dir() / "selftest" / mode
        b = qemu.boot(t, image, cpio, d, knobs.get("ACCEL", "tcg"),
                      mode=mode, boot_timeout=30, run_timeout=10)
        run = load_guest_run(d, t.name, b.status, b.seconds, b.detail, programs)
        got = compare.build_matrix({kernel: {t.name: run}}, (t,), (kernel,))
        status = got["summary"]["exit_status"]
        ok = status == want
        failed += not ok
        progress("selftest", "%s %s: guest %s, console %s -> exit %d (want %d)" % (
            "ok  " if ok else "FAIL", mode, b.status,
            run.console[0][1] if run.console else "clean", status, want))
    return 1 if failed else 0


def x86_64_table_wired(patches):
    """Does pristine + patches have set_robust_list in syscall_64.tbl?
    Read from the diffs: the last patch that adds or removes its row."""
    wired = True        # the pristine tree has it
    for p in patches:
        in_table = False
        for line in p.read_text(errors="replace").splitlines():
            if line.startswith("+++ "):
                in_table = line.endswith("arch/x86/entry/syscalls/syscall_64.tbl")
            elif in_table and re.match(r"^[+-]\d+\s+64\s+set_robust_list\s", line):
                wired = line[0] == "+"
    return wired


SMOKE = "smoke"


def smoke_verdict(run, t, wired):
    """(ok, what) for a bisect step's smoke boot: every case passes where
    the x86_64 table has the calls, ENOSYS and no lock released where not.
    The boot runs smoke alone (rfm.only=smoke): the other programs of the
    initramfs are not missing, they were not asked for."""
    run = dataclasses.replace(run, programs=(SMOKE,))
    m = compare.build_matrix({"step": {t.name: run}}, (t,), ("step",))
    if wired:
        return m["summary"]["exit_status"] == 0, "smoke passes"
    rules = [("smoke.death_*", "FAIL"), ("smoke.set_get_roundtrip", "obs set_errno=ENOSYS")]
    got = compare.check_control(m["kernels"]["step"]["cases"], rules)
    ok = run.boot_status == "complete" and not run.console and all(c["ok"] for c in got)
    return ok, "ENOSYS, nothing released" if ok else "; ".join(
        c["detail"] for c in got if not c["ok"]) or run.boot_status


def cmd_bisect_check(_args):
    """Apply the series one patch at a time. After each: every bisect
    config builds, with no warning that stock's build of the same config
    lacks, and the x86_64 kernel boots and runs smoke (ENOSYS until the
    x86_64 table has the calls, every case passing from then on)."""
    deps.ensure()
    series = tree.read_series()
    if not series:
        raise Fatal("patches/series is empty: nothing to bisect")
    configs = bisect_configs(knobs.get("TARGETS"))
    progress("bisect", "configs: %s" % ", ".join(configs))
    stock = {kc: kbuild.build("stock", [], kc, label="stock/%s" % kc) for kc in configs}
    stock_warnings = {kc: kbuild.kernel_warnings(d) or set() for kc, d in stock.items()}
    # The smoke boot needs the x86_64 kernel: TARGETS=arm has none to boot.
    t = target("x86_64")
    smoke = t.kconfig in configs
    if smoke:
        cpio, programs = initramfs_images((t,))[t.userland]
    out = config.cache_dir() / "bisect-smoke"
    table, bad = [], 0
    for n in range(1, len(series) + 1):
        row, notes = [series[n - 1].name], []
        images = {}
        for kc in configs:
            try:
                images[kc] = kbuild.build("bisect", series[:n], kc,
                                          label="bisect %d/%d %s" % (n, len(series), kc))
            except Fatal as e:
                print(str(e), file=sys.stderr)
                row.append("FAIL")
                continue
            extra = sorted((kbuild.kernel_warnings(images[kc]) or set()) - stock_warnings[kc])
            row.append("ok" if not extra else "%d new warning(s)" % len(extra))
            notes += ["  %s %s: %s" % (series[n - 1].name[:4], kc, w) for w in extra]
        if smoke and t.kconfig in images:
            wired = x86_64_table_wired(series[:n])
            b = qemu.boot(t, images[t.kconfig] / "bzImage", cpio, out / str(n), "tcg",
                          append="rfm.only=" + SMOKE, run_timeout=120)
            ok, what = smoke_verdict(load_guest_run(out / str(n), t.name, b.status,
                                                    b.seconds, b.detail, programs), t, wired)
            row.append(("ok: " if ok else "FAIL: ") + what)
            progress("bisect", "%d/%d smoke on x86_64: %s" % (n, len(series), row[-1]))
        elif smoke:
            row.append("not booted")
        bad += sum(1 for c in row[1:] if c != "ok" and not c.startswith("ok:"))
        table.append(row)
        for note in notes:
            print(note)
    print()
    print(tables.format_table(["patch"] + list(configs) + ["x86_64 smoke"] * smoke, table))
    booted = sum(1 for row in table if smoke and row[-1] != "not booted")
    print("%d steps, %d builds, %d smoke boots: %d problem(s)" % (
        len(table), len(table) * len(configs), booted, bad))
    return 1 if bad else 0


def cmd_checkpatch(_args):
    """scripts/checkpatch.pl --strict from the tree, on every patch. Errors
    fail; warnings and checks fail unless patches/checkpatch-allowed.txt
    names their type with a reason."""
    deps.ensure()
    pristine = tree.pristine_tree()
    allowed = dict(compare.load_rules(config.PATCHES / "checkpatch-allowed.txt"))
    rows, bad = [], 0
    for p in tree.read_series():
        r = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict",
                            "--show-types", str(p)],
                           cwd=pristine, capture_output=True, text=True)
        found = re.findall(r"^(ERROR|WARNING|CHECK):(\w+):", r.stdout, re.M)
        refused = [f for f in found if f[0] == "ERROR" or f[1] not in allowed]
        summary = [l for l in r.stdout.splitlines() if l.startswith("total:")]
        rows.append([p.name, summary[0] if summary else "checkpatch failed",
                     ", ".join("%s (allowed)" % t for k, t in found if (k, t) not in refused)
                     or "-"])
        if refused or not summary:
            bad += 1
            print(r.stdout)
    print(tables.format_table(["patch", "checkpatch --strict", "justified"], rows))
    print("checkpatch: %s" % ("%d patch(es) with unjustified findings" % bad if bad
                              else "clean"))
    clashes = names.check(tree.read_series())
    for line in clashes:
        print("names: %s" % line)
    print("names: %s" % ("%d clash(es) with mainline" % len(clashes) if clashes else
                         "no name of the series means something else in mainline"))
    stale = stale_mutants()
    for name, why in stale:
        print("mutants: %s does not apply exactly to its kernel:\n%s" % (name, why))
    print("mutants: %s" % ("%d of the catalogue no longer apply" % len(stale) if stale else
                           "every mutant of tests/mutants applies exactly"))
    return 1 if bad or clashes or stale else 0


def stale_mutants():
    """[(name, why)] of the mutants of tests/mutants that do not apply
    exactly to their kernel (the series, or the variant they name): a
    change of the series that moves their lines leaves them to be
    regenerated, before make mutate would call them invalid."""
    catalogue = mutate.load_catalogue(config.REPO / "tests" / "mutants")
    stale = []
    for kernel in dict.fromkeys(m.kernel for m in catalogue):
        patches = tree.patches_for(KERNEL_VARIANTS[kernel]["patches"])
        src, _ = tree.variant_tree(kernel, patches)
        try:
            stale += [(m.name, why) for m in catalogue if m.kernel == kernel
                      for why in [tree.inexact(src, m.path)] if why]
        finally:
            tree.release(kernel)
    return stale


def cmd_sparse(_args):
    """sparse on the series' C files, x86_64 and i386, against stock."""
    deps.ensure()
    text, new = sparse.run()
    print(text, end="")
    return 1 if any(new.values()) else 0


def cmd_abi(args):
    """The ABI gate (no QEMU): the series and stock trees, or KSRC=tree."""
    expected = args.expected or abi.ABI_DIR / "expected.abi"
    if args.system_only:
        trees = []
    elif knobs.get("KSRC"):
        trees = [("KSRC", knobs.get("KSRC"))]
    else:
        deps.ensure()
        series = tree.patches_for("all")
        trees = [("series", tree.variant_tree("series", series)[0] if series
                  else tree.pristine_tree()),
                 ("stock", tree.pristine_tree())]
    outdir = config.out_dir() / "abi"
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    with cache_lock("abi"):   # its work and build directories are shared
        text, drifts = abi.run_gate(trees, expected, kernel_view=bool(trees), outdir=outdir)
    text += "".join("DRIFT: %s\n" % d for d in drifts)
    text += "abi: %s\n" % ("%d drift(s)" % len(drifts) if drifts else
                           "no drift in %s" % ", ".join(abi.ABIS))
    (outdir / "report.txt").write_text(text)
    print(text, end="")
    return 1 if drifts else 0


def bench_boot(k, t, image, initrd, d, accel, icount, append=""):
    """One boot of bench/robust_bench: its "# bench" records, or Fatal."""
    if k == "bench-1m":
        append += " rfm.bench_max_n=%d" % BENCH_MILLION
    b = qemu.boot(t, image / "bzImage", initrd, d, accel, icount=icount,
                  run_timeout=knobs.get("RUN_TIMEOUT", 1800),
                  append=append.strip())
    progress("bench", "%s/%s%s: %s in %.0fs" % (k, t.name, " (icount)" if icount else "",
                                                b.status, b.seconds))
    if b.status != "complete":
        raise Fatal("bench guest %s/%s: %s %s (see %s)" % (
            k, t.name, b.status, b.detail, d / "console.log"))
    text = (d / "results.ktap").read_text()
    failed = [c.key for c in ktap.parse(text).cases().values()
              if c.status not in (ktap.PASS, ktap.SKIP)]
    if failed:
        raise Fatal("bench %s/%s: %s failed (see %s)" % (k, t.name, ", ".join(failed),
                                                         d / "results.ktap"))
    return bench.records(text)


BENCH_MILLION = 1000000


def bench_boots(kernels, targets, out, icount, append=""):
    """{kernel: {target: records}}: wall-clock boots one at a time (so
    guests do not disturb each other), icount boots JOBS at a time (their
    counts do not depend on the host)."""
    images, unavailable, _ = build_kernels(kernels, targets)
    if unavailable:
        raise Fatal("; ".join("%s: %s" % kv for kv in unavailable.items()))
    initrds = {u: cpio for u, (cpio, _) in initramfs_images(targets, suite="bench").items()}
    t0 = targets[0]
    accel = "tcg" if icount else qemu.choose_accel(
        t0, images[(kernels[0], t0.kconfig)] / "bzImage", initrds[t0.userland])
    jobs = [(k, t) for k in kernels for t in targets]
    sub = "icount" if icount else "wall"

    def one(job):
        k, t = job
        return k, t, bench_boot(k, t, images[(k, t.kconfig)], initrds[t.userland],
                                out / sub / k / t.name, accel, icount, append)

    raw = {}
    for k, t, recs in procs.parallel(one, jobs, config.jobs() if icount else 1):
        raw.setdefault(k, {})[t.name] = recs
    return raw, accel


def cmd_bench(_args):
    """The benchmark on every target and kernel, measured twice: by the
    wall clock and by QEMU's instruction count."""
    kernels = knobs.get("KERNELS", BENCH_KERNELS)
    targets = knobs.get("TARGETS", select_targets(""))
    knobs.user_images(kernels, targets)
    deps.ensure(extra=("gnuplot-nox",))
    out = config.out_dir() / "bench"
    shutil.rmtree(out, ignore_errors=True)
    raw = {}
    raw["wall"], accel = bench_boots(kernels, targets, out, icount=False)
    raw["icount"], _ = bench_boots(kernels, targets, out, icount=True)
    doc = bench.summarize(raw, accel)
    (out / "bench.json").write_text(json.dumps(doc, indent=1) + "\n")
    text = bench.render(doc)
    (out / "bench.txt").write_text(text)
    pngs = bench.plot(doc, out)
    print()
    print(text, end="")
    print("written: %s/bench.json, bench.txt, %s" % (out, ", ".join(p.name for p in pngs)))
    return 0


def cmd_perf_gate(_args):
    """The performance gate, on exact figures: series against stock under
    QEMU's instruction count, on every target, run twice; the two runs
    must give the same figures (or the gate could flake) and the series
    must keep to bench.gate()'s rules."""
    deps.ensure()
    targets = knobs.get("TARGETS", select_targets(""))
    out = config.out_dir() / "perf-gate"
    shutil.rmtree(out, ignore_errors=True)
    runs = []
    series, stock = PERF_GATE_KERNELS
    for n in (1, 2):
        # Only the figures the gate reads, three runs each (they are exact).
        raw, _ = bench_boots(PERF_GATE_KERNELS, targets, out / ("run%d" % n), icount=True,
                             append="rfm.bench_gate=1")
        # The counter adds the same to every exit on both: they stand for
        # the series and stock.
        runs.append(bench.summarize_method({"series": raw[series], "stock": raw[stock]}))
    figures = [{k: {t: b["figures"] for t, b in by_t.items()}
                for k, by_t in r["boots"].items()} for r in runs]
    rows = [[t, check, bench._fmt(sv), bench._fmt(kv), "ok" if ok else "FAIL"]
            for t, check, sv, kv, ok in bench.gate(runs[0])]
    text = tables.format_table(["target", "rule (instructions)", "series", "stock", ""], rows)
    same = figures[0] == figures[1]
    bad = sum(r[-1] != "ok" for r in rows)
    text += "\n%s\nperf gate: %s\n" % (
        "two runs, identical figures" if same else
        "the two runs DIFFER: the exact figures are not exact (see %s)" % out,
        "%d rule(s) broken" % bad if bad else "every rule holds" if same else "not judged")
    (out / "perf-gate.txt").write_text(text)
    (out / "perf-gate.json").write_text(json.dumps(
        {"identical": same, "figures": figures, "rules": [
            {"target": r[0], "rule": r[1], "series": r[2], "stock": r[3], "ok": r[4] == "ok"}
            for r in rows]}, indent=1) + "\n")
    print(text, end="")
    return 0 if same and not bad else 1


def run_guest_suite(suite, append, keys, run_timeout):
    """Boot a suite (fuzz/, stress/) on every selected kernel and target
    (KERNELS=debug by default) and tabulate its "# <suite> {...}" records.
    A row passes only if the guest completed, every case passed and the
    console shows no kernel warning, oops or lockdep/KASAN report."""
    kernels = knobs.get("KERNELS", ("debug",))
    targets = knobs.get("TARGETS", select_targets(""))
    knobs.user_images(kernels, targets)
    deps.ensure()
    out = config.out_dir() / suite
    images, unavailable, _ = build_kernels(kernels, targets)
    if unavailable:
        raise Fatal("; ".join("%s: %s" % kv for kv in unavailable.items()))
    initrds = {u: cpio for u, (cpio, _) in initramfs_images(targets, suite=suite).items()}
    accel = knobs.get("ACCEL", "tcg")
    shutil.rmtree(out, ignore_errors=True)
    # Timeouts nest: the harness's per case, init's per program (below),
    # the host's per guest (run_timeout), each outlasting the one inside.
    append += " rfm.timeout=%d" % (run_timeout - 100)

    def one(job):
        k, t = job
        d = out / k / t.name
        b = qemu.boot(t, images[(k, t.kconfig)] / "bzImage", initrds[t.userland], d,
                      accel, run_timeout=run_timeout, append=append)
        run = load_guest_run(d, t.name, b.status, b.seconds, b.detail, ())
        records = [json.loads(line[len(suite) + 1:])
                   for case in run.run.cases().values() for line in case.diag
                   if line.startswith(suite + " ")]
        passed = all(c.status == ktap.PASS for c in run.run.cases().values())
        ok = bool(b.status == "complete" and not run.console and records and passed)
        progress(suite, "%s/%s: %s in %.0fs, %d record(s)%s" % (
            k, t.name, b.status, b.seconds, len(records), "" if ok else ", FAILED"))
        return [[k, t.name, b.status] + [str(r.get(key, "-")) for key in keys]
                + [str(len(run.console)), "ok" if ok else "FAIL"]
                for r in records or [{}]], ok

    jobs = [(k, t) for k in kernels for t in targets]
    progress(suite, "%d guest(s), %s, up to %d at a time" % (len(jobs), accel, config.jobs()))
    rows, bad = [], 0
    for job_rows, ok in procs.parallel(one, jobs, config.jobs()):
        rows += job_rows
        bad += not ok
    text = tables.format_table(["kernel", "target", "guest"] + list(keys)
                               + ["kernel warnings", ""], rows) + "\n"
    (out / ("%s.txt" % suite)).write_text(text)
    print(text, end="")
    print("details: %s/<kernel>/<target>/results.ktap and console.log" % out)
    return 1 if bad else 0


def cmd_fuzz(_args):
    """The list fuzzer: FUZZ_ITERATIONS and FUZZ_SECONDS per target, FUZZ_SEED."""
    seconds = knobs.get("FUZZ_SECONDS", 180)
    append = "rfm.fuzz_seed=%d rfm.fuzz_iterations=%d rfm.fuzz_seconds=%d" % (
        knobs.get("FUZZ_SEED", 1), knobs.get("FUZZ_ITERATIONS", 20000), seconds)
    return run_guest_suite("fuzz", append, ("seed", "iterations", "deaths", "checks",
                                            "released", "wake_checks", "failures"), seconds + 600)


def cmd_stress(_args):
    """Concurrent deaths: STRESS_SECONDS per case and target."""
    seconds = knobs.get("STRESS_SECONDS", 20)
    return run_guest_suite("stress", "rfm.stress_seconds=%d" % seconds,
                           ("case", "deaths", "acquisitions", "recoveries",
                            "lost_wakeups", "stuck_at_end"), 2 * seconds + 900)


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


def cmd_mutate(_args):
    """Build every mutant of the catalogue (MUTANTS=DIR, default
    tests/mutants; MUTANT=names for some), boot it on every target and
    judge it with the matrix's comparer against the stock kernel."""
    deps.ensure()
    catalogue = knobs.get("MUTANTS", config.REPO / "tests" / "mutants").resolve()
    mutants = mutate.load_catalogue(catalogue, knobs.get("MUTANT", ""))
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
    made = []
    for path in mutgen.SOURCES:
        if path not in touched:
            continue
        before = (pristine / path).read_text() if (pristine / path).exists() else ""
        after = (src / path).read_text()
        for g in mutgen.generate(path, before, after):
            (catalogue / (g.name + ".patch")).write_text(mutgen.patch_text(g, after))
            made.append(g.name)
    tree.release("series")
    equivalents = mutgen.read_equivalents((config.REPO / mutgen.EQUIVALENTS).read_text())
    stale = sorted(set(equivalents) - set(made))
    if stale:
        raise Fatal("%s names mutants the series no longer generates: %s" % (
            mutgen.EQUIVALENTS, ", ".join(stale[:5])))
    wanted = knobs.get("MUTANT", "")
    if not wanted and knobs.get("SAMPLE"):
        wanted = ",".join(mutgen.sample(made, knobs.get("SAMPLE")))
    mutants = mutate.load_catalogue(catalogue, wanted)
    for m in mutants:
        m.equivalent = equivalents.get(m.name, "")
    progress("mutate", "generated %d mutant(s) from %d file(s); running %d" % (
        len(made), len(touched & set(mutgen.SOURCES)), len(mutants)))
    return run_mutants(catalogue, mutants, out)


def run_mutants(catalogue, mutants, out):
    """Build, boot and judge `mutants` on every target; the table and the
    score in `out`."""
    targets = knobs.get("TARGETS", select_targets(""))
    series = tree.patches_for("all")
    if not series:
        raise Fatal("patches/series is empty: there is no series to mutate")
    start = elapsed()
    # The series and stock, and the test-only variants some mutants apply to.
    bases = tuple(k for k in KERNEL_VARIANTS if k != "series" and
                  any(m.kernel == k for m in mutants))
    images, _, described = build_kernels(("series", "stock") + bases, targets)
    initrds = initramfs_images(targets)
    t0 = targets[0]
    accel = qemu.choose_accel(t0, images[("series", t0.kconfig)] / "bzImage",
                              initrds[t0.userland][0])
    deviations = compare.load_rules(DEVIATIONS)

    def matrix_of(runs, of=targets):
        return compare.build_matrix(runs, of, ("series", "stock"), deviations=deviations)

    # The reference: the series itself must be green against stock, or no
    # mutant's red means anything.
    ref = boot_all([(k, t, images[(k, t.kconfig)]) + initrds[t.userland]
                    for k in ("series", "stock") + bases for t in targets],
                   accel, out / "reference")
    references = [("series", "stock", matrix_of(ref))] + [
        (b, b, compare.build_matrix(ref, targets, (b,), deviations=deviations))
        for b in bases]
    for name, against, reference in references:
        if reference["summary"]["exit_status"] != 0:
            raise Fatal("%s is not green%s (%s): fix that before judging mutants "
                        "(see %s)" % (
                            name, " against stock" if against == "stock" else "",
                            "; ".join((reference["summary"]["failures"]
                                       + reference["summary"]["incomplete"])[:3]),
                            out / "reference"))
    progress("mutate", "reference: the series matches stock on %d target(s); %d mutant(s)"
             % (len(targets), len(mutants)))
    # A mutant is built and booted one kernel config at a time, the config
    # with the most targets first, and is killed as soon as the targets
    # booted so far show it: every sign of a wrong kernel among some
    # targets is one among all. A survivor runs everything.
    configs = sorted({t.kconfig for t in targets},
                     key=lambda kc: (-sum(t.kconfig == kc for t in targets), kc))
    outcomes = []
    for n, m in enumerate(mutants, 1):
        t_start = elapsed()
        base = tree.patches_for(KERNEL_VARIANTS[m.kernel]["patches"])
        # A mutant of a test-only variant is judged against that variant's
        # run, in the comparer's "stock" column (see mutate.py).
        against = "stock" if m.kernel == "series" else m.kernel
        mimages, runs, o = {}, {}, None
        for kc in configs:
            try:
                mimages[kc] = kbuild.build(m.kernel, base + [m.path], kc,
                                           label="mutant %s/%s" % (m.name, kc))
            except Fatal as e:
                result = mutate.UNBUILDABLE if m.generated else "invalid"
                o = mutate.Outcome(m, result, [], elapsed() - t_start,
                                   str(e).splitlines()[0])
                break
            runs.update(boot_all([("mutant", t, mimages[kc]) + initrds[t.userland]
                                  for t in targets if t.kconfig == kc], accel, out / m.name,
                                 append=kernel_append(m.kernel),
                                 run_timeout=MUTANT_TIMEOUT)["mutant"])
            booted = [t for t in targets if t.name in runs]
            o = mutate.judge(m, matrix_of({"series": runs, "stock": ref[against]}, booted),
                             elapsed() - t_start,
                             new_warnings(mimages, images, (m.kernel, "stock")))
            if o.killers:
                break
        outcomes.append(o)
        if o.result in ("invalid", mutate.UNBUILDABLE):
            progress("mutate", "%d/%d %s: %s: %s" % (n, len(mutants), m.name,
                                                     o.result.upper(), o.detail))
            continue
        progress("mutate", "%d/%d %s: %s in %.0fs%s" % (
            n, len(mutants), m.name, o.result, o.seconds,
            ": " + mutate.killer_summary(o, 2) if o.killers else ""))
    meta = run_meta(accel, described)
    meta["targets"] = [t.name for t in targets]
    text = mutate.write(out, outcomes, catalogue, elapsed() - start, meta)
    print()
    print(text, end="")
    return 1 if any(mutate.failed(o) for o in outcomes) else 0


def cmd_deps(_args):
    deps.ensure()
    print("all packages present")
    return 0


# Commands that replace parts of the output directory. Two of them at once
# on one directory would delete each other's results (a make check during a
# long make fuzz did), so they take a lock on it.
WRITES_OUT = {"run", "matrix-check", "report", "bench", "fuzz",
              "stress", "abi", "guest-selftest", "mutate", "mutate-gen", "perf-gate", "merge"}


@contextlib.contextmanager
def cache_lock(name):
    """One run at a time in a part of the cache without finer locks; the
    others wait."""
    config.cache_dir().mkdir(parents=True, exist_ok=True)
    with open(config.cache_dir() / ("%s.lock" % name), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(name, "waiting for another run using %s" % (config.cache_dir() / name))
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def cmd_knobs(args):
    """The knob table, or (--check COMMAND) a check of COMMAND's knobs."""
    if args.check:
        knobs.check(args.check)
        return 0
    print(knobs.table())
    return 0


@contextlib.contextmanager
def out_dir_lock():
    out = config.out_dir()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".rfm-lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Fatal("another run is writing %s: wait for it to end, or give "
                        "this one RFM_OUT=<another directory>" % out)
        yield


def main(argv=None):
    ap = argparse.ArgumentParser(prog="rfm")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="build, boot and print the matrix")
    p.set_defaults(fn=cmd_run, default_kernels=DEFAULT_RUN_KERNELS)
    p = sub.add_parser("matrix-check", help="the matrix with the check kernels")
    p.set_defaults(fn=cmd_run, default_kernels=CHECK_KERNELS)
    sub.add_parser("host-tests").set_defaults(fn=cmd_host_tests)
    sub.add_parser("report").set_defaults(fn=cmd_report)
    sub.add_parser("merge", help="join shard outputs (RESULTS) into one matrix"
                   ).set_defaults(fn=cmd_merge)
    p = sub.add_parser("cache-key", help="the key of the kernels KERNELS and TARGETS select")
    p.add_argument("--list", action="store_true", help="each kernel's key instead")
    p.add_argument("--prune", action="store_true",
                   help="remove every other kernel from $RFM_CACHE/kernels")
    p.set_defaults(fn=cmd_cache_key)
    sub.add_parser("kernels").set_defaults(fn=cmd_kernels)
    sub.add_parser("shell").set_defaults(fn=cmd_shell)
    sub.add_parser("deps").set_defaults(fn=cmd_deps)
    sub.add_parser("guest-selftest").set_defaults(fn=cmd_guest_selftest)
    sub.add_parser("bench").set_defaults(fn=cmd_bench)
    sub.add_parser("perf-gate").set_defaults(fn=cmd_perf_gate)
    sub.add_parser("fuzz").set_defaults(fn=cmd_fuzz)
    sub.add_parser("stress").set_defaults(fn=cmd_stress)
    sub.add_parser("bisect-check").set_defaults(fn=cmd_bisect_check)
    sub.add_parser("mutate").set_defaults(fn=cmd_mutate)
    sub.add_parser("mutate-gen").set_defaults(fn=cmd_mutate_gen)
    sub.add_parser("checkpatch").set_defaults(fn=cmd_checkpatch)
    sub.add_parser("sparse").set_defaults(fn=cmd_sparse)
    p = sub.add_parser("abi", help="the ABI gate against headers, pahole, tables")
    p.add_argument("--expected", type=Path, help="expected ABI file (abi/expected.abi)")
    p.add_argument("--system-only", action="store_true",
                   help="only /usr/include (no kernel tree)")
    p.set_defaults(fn=cmd_abi)
    p = sub.add_parser("knobs", help="the knob table; --check COMMAND checks its knobs")
    p.add_argument("--check", metavar="COMMAND")
    p.set_defaults(fn=cmd_knobs)
    args = ap.parse_args(argv)
    procs.handle_termination()
    try:
        knobs.check(args.cmd)
        if args.cmd in WRITES_OUT:
            with out_dir_lock():
                return args.fn(args)
        return args.fn(args)
    except Fatal as e:
        print("error: %s" % e, file=sys.stderr)
        return e.status
    except ValueError as e:   # a bad KERNELS=/TARGETS= value
        print("error: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: children stopped; the next run repairs the cache",
              file=sys.stderr)
        return 130
    finally:
        procs.end_run()
