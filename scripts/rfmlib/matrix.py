"""The matrix's commands: run and matrix-check (build, boot, compare,
report), report (render out/ again), merge (join shards), kernels (build
only)."""
import datetime
import json
import shutil

from . import (atomic, compare, config, deps, guest, kbuild, knobs, kselftest, merge, report,
               tree)
from .log import Usage, progress, warn
from .pipeline import Pipeline, boot_all, libc_mode, load_guest_run, program_timeout
from .targets import kernel_config, select_targets, variant_tree

CONTROL_RULES = config.REPO / "tests" / "negative-control.txt"
# The files of one run's verdict, all removed when a run starts.
VERDICT_FILES = ("run.json", "matrix.txt", "matrix.json", "junit.xml", "kcidb.json")


def run_meta(accel, described, extra=None):
    """What the report says about a run: tree, accelerator, kernels, date."""
    return {"tree": tree.source().describe(),
            "trees": {k: tree.source(package=variant_tree(k)).describe()
                      for k in described if variant_tree(k)},
            "accel": accel, "kernels": described,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "extra": str(extra or "")}


def matrix_run(kernels, targets, extra, out=None):
    """Build, boot and render `kernels` on `targets` into `out` (RFM_OUT)."""
    libc, timeout = libc_mode(), program_timeout()
    run_timeout = knobs.get("RUN_TIMEOUT")
    if timeout >= run_timeout:
        warn("PROGRAM_TIMEOUT=%d is not below RUN_TIMEOUT=%d: one hung program "
             "ends the guest, and the programs after it are reported as not run"
             % (timeout, run_timeout))
    deps.ensure()
    out = out or config.out_dir()
    # No verdict of an earlier run may outlive this one's start: a run that
    # is killed leaves no matrix (make report then says so), never an old one.
    for name in VERDICT_FILES:
        (out / name).unlink(missing_ok=True)
    p = Pipeline(kernels, targets, extra=extra, libc=libc,
                 selftests=kselftest.wanted(kernels)).build()
    backend = p.backend()
    for k in kernels:
        shutil.rmtree(out / k, ignore_errors=True)
    guests = p.guests(out, append="rfm.timeout=%d" % timeout)
    progress("boot", "%d guest(s), %s, up to %d at a time" % (
        len(guests), backend.accel, backend.jobs))
    runs = boot_all(backend, guests)
    for k, absent in p.absent_runs(out).items():
        runs.setdefault(k, {}).update(absent)
    meta = run_meta(backend.accel, p.described, extra)
    meta["program_timeout"] = timeout
    meta["libc"] = {t.name: guest.libc_used(t.user, libc) for t in targets}
    write_run(out, p, runs, meta)
    return render(runs, kernels, targets, p.unavailable, meta, out)


def provenance(p):
    """What pipeline p's run is made of (merge checks shards agree on it)."""
    return merge.provenance(
        p.kernels, p.targets, p.images, p.unavailable, p.initrds,
        {(k, kc): kbuild.compiler_ident(kernel_config(kc, k)) for k in p.kernels
         for kc in p.kconfigs})


def write_run(out, p, runs, meta):
    """run.json: what make report renders and make merge joins."""
    if "provenance" not in meta:        # an import brings its own
        meta["provenance"] = provenance(p)
    atomic.write(out / "run.json", json.dumps({
        "meta": meta, "kernels": list(p.kernels), "targets": [t.name for t in p.targets],
        "unavailable": p.unavailable,
        "guests": {k: {t: {"status": r.boot_status, "seconds": r.seconds, "detail": r.detail,
                           "programs": list(r.programs)} for t, r in v.items()}
                   for k, v in runs.items()}}, indent=1))


def render(runs, kernels, targets, unavailable, meta, out, show=True):
    """Compare, write matrix.{txt,json}, junit.xml and kcidb.json, print
    (unless not `show`); the exit status."""
    matrix = compare.build_matrix(
        runs, targets, kernels,
        control=compare.load_rules(CONTROL_RULES), unavailable=unavailable, meta=meta)
    text = report.write_all(matrix, out)
    progress("report", "%s/{matrix.txt,matrix.json,junit.xml}" % out)
    if show:
        print()
        print(text, end="")
    return matrix["summary"]["exit_status"]


def cmd_report(_args):
    """Re-read out/ (results and console logs) and render the matrix again."""
    return render_dir(config.out_dir())


def render_dir(out, show=True):
    """Render the run recorded in out/run.json (a run, a merge, an import)."""
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
    return render(runs, state["kernels"], targets, state["unavailable"], state["meta"], out,
                  show)


def cmd_merge(args):
    """Join shard outputs (RESULTS="dir1 dir2 ...") into RFM_OUT as one run
    over their union, then render it as `make report` does."""
    merge.join((knobs.get("RESULTS") or "").split(), config.out_dir(),
               knobs.raw("KERNELS"), knobs.get("TARGETS"))
    return cmd_report(args)


def cmd_run(_args):
    """run (KERNELS=series) and matrix-check (series, stock, baseline)."""
    kernels, targets = knobs.get("KERNELS"), knobs.get("TARGETS")
    if knobs.raw("BZIMAGE") or knobs.raw("BZIMAGE32"):
        # The user's own kernel(s), on the targets they can boot.
        if not knobs.raw("KERNELS"):
            kernels = ("user",)
        if not knobs.raw("TARGETS"):
            have = {kc for kc, var in (("x86_64", "BZIMAGE"), ("i386", "BZIMAGE32"))
                    if knobs.raw(var)}
            targets = tuple(t for t in targets if t.kconfig in have)
            progress("targets", "BZIMAGE: %s (TARGETS= to choose; x86_64-x32 needs "
                     "CONFIG_X86_X32_ABI)" % ",".join(t.name for t in targets))
    knobs.user_images(kernels, targets)
    return matrix_run(kernels, targets, guest.extra_for(targets))


def cmd_kernels(_args):
    """Build (or find in the cache) the kernels KERNELS and TARGETS select."""
    kernels, targets = knobs.get("KERNELS"), knobs.get("TARGETS")
    knobs.user_images(kernels, targets)
    deps.ensure()
    p = Pipeline(kernels, targets).build_kernels()
    for k, why in p.unavailable.items():
        print("%s: not available: %s" % (k, why))
    return 0
