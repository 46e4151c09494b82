"""make bisect-check: the series one patch at a time. After each patch,
every bisect config builds with no warning that stock's build of the
same config lacks, and the x86_64 kernel boots and runs smoke (ENOSYS
until the x86_64 table has the calls, every case passing from then on)."""
import dataclasses
import re
import sys

from . import compare, config, deps, kbuild, knobs, tables, tree
from .log import Fatal, progress
from .pipeline import LocalQemu, Pipeline, boot_all
from .targets import bisect_configs, target

SMOKE = "smoke"


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
    deps.ensure()
    series = tree.read_series()
    if not series:
        raise Fatal("patches/series is empty: nothing to bisect")
    configs = bisect_configs(knobs.get("TARGETS"))
    first = knobs.get("BISECT_FROM")
    if first > len(series):
        raise Fatal("BISECT_FROM=%d: the series has %d patches" % (first, len(series)))
    progress("bisect", "configs: %s; steps %d to %d" % (", ".join(configs), first, len(series)))
    stock = {kc: kbuild.build("stock", [], kc, label="stock/%s" % kc) for kc in configs}
    stock_warnings = {kc: kbuild.kernel_warnings(d) or set() for kc, d in stock.items()}
    # The smoke boot needs the x86_64 kernel: TARGETS=arm has none to boot.
    t = target("x86_64")
    smoke = t.kconfig in configs
    if smoke:
        # The steps' kernels are built here, one per patch; the pipeline
        # gives the initramfs and the boot. TCG: the verdict must not hang
        # on a KVM probe.
        p = Pipeline((), (t,)).build_initramfs()
        backend = LocalQemu("tcg", 1)
    out = config.cache_dir() / "bisect-smoke"
    table, bad = [], 0
    for n in range(first, len(series) + 1):
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
            g = dataclasses.replace(
                p.guest("step", t, out, image=images[t.kconfig], append="rfm.only=" + SMOKE,
                        run_timeout=120), out=out / str(n))
            run = boot_all(backend, [g], stage="bisect")["step"][t.name]
            ok, what = smoke_verdict(run, t, x86_64_table_wired(series[:n]))
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
