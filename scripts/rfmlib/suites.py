"""make fuzz and make stress: suites that boot on the debug kernel and
tabulate the records their programs print ("# fuzz {...}", "# stress
{...}"), besides the pass/fail of each case."""
import json
import shutil

from . import config, deps, knobs, ktap
from .log import Fatal, progress
from .pipeline import Pipeline, boot_all
from .tables import format_table


def run_guest_suite(suite, append, keys, run_timeout):
    """Boot a suite (fuzz/, stress/) on every selected kernel and target
    (KERNELS=debug by default) and tabulate its records. A row passes only
    if the guest completed, every case passed and the console shows no
    kernel warning, oops or lockdep/KASAN report."""
    kernels = knobs.get("KERNELS")
    targets = knobs.get("TARGETS")
    knobs.user_images(kernels, targets)
    deps.ensure()
    out = config.out_dir() / suite
    p = Pipeline(kernels, targets, suite=suite).build()
    if p.unavailable:
        raise Fatal("; ".join("%s: %s" % kv for kv in p.unavailable.items()))
    backend = p.backend()
    shutil.rmtree(out, ignore_errors=True)
    # Timeouts nest: the harness's per case, init's per program (below),
    # the host's per guest (run_timeout), each outlasting the one inside.
    guests = p.guests(out, append="%s rfm.timeout=%d" % (append, run_timeout - 100),
                      run_timeout=run_timeout)
    progress(suite, "%d guest(s), %s, up to %d at a time" % (
        len(guests), backend.accel, backend.jobs))
    rows, bad = {}, []

    def tabulate(g, run):
        records = [json.loads(line[len(suite) + 1:])
                   for case in run.run.cases().values() for line in case.diag
                   if line.startswith(suite + " ")]
        # A case may skip (the unparked stress needs two CPUs): no record,
        # and named on its progress line; any other status fails the row.
        cases = run.run.cases()
        passed = all(c.status in (ktap.PASS, ktap.SKIP) for c in cases.values())
        skipped = sorted(name for name, c in cases.items() if c.status == ktap.SKIP)
        ok = bool(run.boot_status == "complete" and not run.console and records and passed)
        progress(suite, "%s/%s: %d record(s)%s%s" % (
            g.kernel, g.target.name, len(records),
            ", skipped: %s" % ", ".join(skipped) if skipped else "", "" if ok else ", FAILED"))
        bad.extend([g] * (not ok))
        rows[(g.kernel, g.target.name)] = [
            [g.kernel, g.target.name, run.boot_status] + [str(r.get(key, "-")) for key in keys]
            + [str(len(run.console)), "ok" if ok else "FAIL"] for r in records or [{}]]

    boot_all(backend, guests, stage=suite, check=tabulate)
    rows = [r for g in guests for r in rows[(g.kernel, g.target.name)]]
    text = format_table(["kernel", "target", "guest"] + list(keys)
                        + ["kernel warnings", ""], rows) + "\n"
    (out / ("%s.txt" % suite)).write_text(text)
    print(text, end="")
    print("details: %s/<kernel>/<target>/results.ktap and console.log" % out)
    return 1 if bad else 0


def cmd_fuzz(_args):
    """The list fuzzer: FUZZ_ITERATIONS and FUZZ_SECONDS per target, FUZZ_SEED."""
    seconds = knobs.get("FUZZ_SECONDS")
    append = "rfm.fuzz_seed=%d rfm.fuzz_iterations=%d rfm.fuzz_seconds=%d" % (
        knobs.get("FUZZ_SEED"), knobs.get("FUZZ_ITERATIONS"), seconds)
    return run_guest_suite("fuzz", append, ("seed", "iterations", "deaths", "checks",
                                            "released", "wake_checks", "failures"), seconds + 600)


# The stress cases: robust_stress's two, unlock_stress's five (two of
# them without parking, on two CPUs or more).
STRESS_CASES = 7


def cmd_stress(_args):
    """Concurrent deaths: STRESS_SECONDS per case and target."""
    seconds = knobs.get("STRESS_SECONDS")
    return run_guest_suite("stress", "rfm.stress_seconds=%d" % seconds,
                           ("case", "parking", "cpus", "deaths", "acquisitions", "recoveries",
                            "corrupted", "lost_wakeups", "stuck_at_end"),
                           STRESS_CASES * seconds + 900)
