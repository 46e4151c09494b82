"""The matrix through a LAVA lab: make lava, lava-import and lava-check.

make lava writes one job per (kernel variant, target) into out/lava/
(jobs/, artifacts/, index.json), validated by lava_common's strict
schema. A lab runs them (lavacli jobs submit); their logs, saved as
out/lava/logs/KERNEL--TARGET.log, come back through make lava-import
into the same matrix a local run makes, by the same parser and comparer.
make lava-check proves the round trip offline, with Debian's lava-run.
"""
import json
import shutil

from . import atomic, compare, config, deps, knobs, ktap, lava, merge
from .log import Fatal, Usage, progress, warn
from .matrix import provenance, render_dir, run_meta, write_run
from .pipeline import LocalQemu, Pipeline, boot_all, load_guest_run, program_timeout
from .tables import format_table
from .targets import select_targets, target as target_named

INDEX = "index.json"


def lava_dir():
    return config.out_dir() / "lava"


def write_jobs(p, where, url_base):
    """Every guest of pipeline p as a job in `where`, with the program
    timeout of a local run; the index that maps each job's name to its
    kernel, target and programs, and says what the run is made of."""
    guests = p.guests(config.out_dir(), append="rfm.timeout=%d" % program_timeout())
    for g in guests:
        lava.write_job(g, where, url_base)
    return write_index(p, guests, where)


def write_index(p, guests, where):
    """where/index.json: each job's kernel, target and programs, and what
    pipeline p's run is made of (make merge checks it); its jobs."""
    index = {lava.job_name(g.kernel, g.target.name): {
        "kernel": g.kernel, "target": g.target.name, "programs": list(g.programs),
        "job": "jobs/%s.yaml" % lava.job_name(g.kernel, g.target.name)} for g in guests}
    atomic.write(where / INDEX, json.dumps({"described": p.described,
                                            "provenance": provenance(p), "jobs": index},
                                           indent=1))
    return index


def cmd_lava(_args):
    """Build the kernels and images of KERNELS x TARGETS and write their
    LAVA jobs; fail if one does not validate."""
    deps.ensure()
    kernels, targets = knobs.get("KERNELS"), knobs.get("TARGETS")
    knobs.user_images(kernels, targets)
    p = Pipeline(kernels, targets).build()
    where = lava_dir()
    for sub in ("jobs", "artifacts", "logs"):
        shutil.rmtree(where / sub, ignore_errors=True)
    url_base = knobs.get("LAVA_URL_BASE") or "file://%s" % where
    index = write_jobs(p, where, url_base)
    bad = lava.validate(sorted((where / "jobs").glob("*.yaml")))
    for line in bad:
        print("invalid: %s" % line)
    print(format_table(["job", "kernel", "target", "programs"], [
        [name, j["kernel"], j["target"], str(len(j["programs"]))]
        for name, j in sorted(index.items())]))
    for name, j in sorted(index.items()):
        if not lava.lab_can_boot(target_named(j["target"])):
            warn("%s: LAVA's qemu device type (%s) has no arch %s: a lab of "
                 "Debian 12's LAVA cannot boot it" % (
                     name, lava.server_name(),
                     lava.config_arch(target_named(j["target"]))))
    print("%d job(s) in %s/jobs, artifacts at %s/artifacts/; %s" % (
        len(index), where, url_base,
        "%d invalid" % len(bad) if bad else "all valid (lava_common, strict)"))
    print("submit: lavacli jobs submit %s/jobs/NAME.yaml; bring each log back as "
          "%s/logs/NAME.log (lavacli jobs logs ID --raw), then make lava-import"
          % (where, where))
    return 1 if bad else 0


def cmd_lava_run(_args):
    """Run every job make lava wrote with Debian's lava-run, here, as a lab
    would: a job's log lands in out/lava/logs/, ready for lava-import."""
    deps.ensure()
    where = lava_dir()
    jobs = sorted((where / "jobs").glob("*.yaml"))
    if not jobs:
        raise Fatal("%s/jobs holds no job: make lava writes them" % where, status=2)
    limit = knobs.get("RUN_TIMEOUT") + 300
    for n, path in enumerate(jobs, 1):
        log = lava.run_job(path, where, limit)
        _, boot = lava.guest_from_log(log.read_text(errors="replace"))
        progress("lava", "%d/%d %s: %s in %.1fs" % (n, len(jobs), path.stem, boot.status,
                                                   boot.seconds))
    print("%d job log(s) in %s/logs: make lava-import reads them" % (len(jobs), where))
    return 0


def import_logs(logs, out, index=None, only=None):
    """Read the NAME.log files of `logs` (all, or the names in `only`) into
    out/<kernel>/<target>/ as a local boot leaves them, and write out's
    run.json; the runs."""
    files = [f for f in sorted(logs.glob("*.log")) if only is None or f.stem in only]
    if not files:
        raise Fatal("%s: no job log (NAME.log, NAME as make lava named the job)" % logs,
                    status=2)
    jobs = (index or {}).get("jobs", {})
    runs = {}
    for f in files:
        kernel, target_name = lava.split_name(f.stem)
        select_targets(target_name)         # a name of the table, or an error
        console, boot = lava.guest_from_log(f.read_text(errors="replace"))
        seen = ktap.parse(console).meta.get("target")
        if seen and seen != target_name:
            raise Fatal("%s: the guest says it is target %s" % (f, seen))
        d = out / kernel / target_name
        shutil.rmtree(d, ignore_errors=True)
        lava.write_guest(d, console, boot)
        runs.setdefault(kernel, {})[target_name] = load_guest_run(
            d, target_name, boot.status, boot.seconds, boot.detail,
            jobs.get(f.stem, {}).get("programs", ()))
        progress("import", "%s: %s in %.1fs%s" % (f.stem, boot.status, boot.seconds,
                                                 " (%s)" % boot.detail if boot.detail else ""))
    p = Pipeline(list(runs), select_targets(",".join(sorted({t for by_t in runs.values()
                                                             for t in by_t}))))
    meta = run_meta("lava", (index or {}).get("described", {}))
    meta["source"] = "LAVA job logs in %s" % logs
    if index and "provenance" in index:
        meta["provenance"] = index["provenance"]
    else:
        meta["provenance"] = {}     # nothing to merge it with: merge says so
    write_run(out, p, runs, meta)
    return runs


def cmd_lava_import(_args):
    """LAVA job logs (LAVA_LOGS, default out/lava/logs) -> the matrix, as
    make report renders a local run."""
    where = lava_dir()
    logs = knobs.get("LAVA_LOGS") or where / "logs"
    index = json.loads((where / INDEX).read_text()) if (where / INDEX).is_file() else None
    if index is None:
        progress("import", "no %s: programs that never reported cannot be named MISS, "
                 "and the run cannot be merged" % (where / INDEX))
    import_logs(logs, config.out_dir(), index)
    return render_dir(config.out_dir())


def verdicts(run):
    """{case: status} of one guest run, with its guest-level verdict."""
    cells = {k: c.status for k, c in run.run.cases().items()}
    cells["(guest run)"] = run.boot_status
    cells["(console)"] = "clean" if not run.console else "trouble"
    return cells


def differences(local, lab):
    """[(case, local, lab)] where the two runs of one guest disagree."""
    a, b = verdicts(local), verdicts(lab)
    return [(k, a.get(k, "-"), b.get(k, "-")) for k in sorted(set(a) | set(b))
            if a.get(k) != b.get(k)]


def tampered(log_text):
    """The log with its first passing case turned into a failure: the
    proof must see that."""
    return log_text.replace('"msg": "    ok 1 ', '"msg": "    not ok 1 ', 1)


def lava_pairs(targets):
    """The guests lava-check boots both here and through lava-run: the first
    of TARGETS on each kernel config (x86: x86_64 and i386; arm: arm64 and
    armhf), so that every QEMU device setup of those targets is crossed;
    not those LAVA's qemu device type cannot boot (named). With one kernel
    config, its first two targets: two ABIs of one kernel still make a
    local shard and a LAVA one to merge."""
    firsts = {}
    for t in targets:
        firsts.setdefault(t.kconfig, t)
    refused = [t.name for t in firsts.values() if not lava.lab_can_boot(t)]
    if refused:
        warn("lava-check: LAVA's qemu device type (%s) has no arch for %s: "
             "its jobs are written and validated, not run" % (
                 lava.server_name(), ", ".join(refused)))
    pairs = tuple(t for t in firsts.values() if t.name not in refused)
    if len(pairs) == 1:
        pairs += tuple(t for t in targets if t.kconfig == pairs[0].kconfig
                       and t is not pairs[0])[:1]
    return pairs


def cmd_lava_check(_args):
    """The offline proof, on TARGETS: the jobs of KERNELS validate;
    the series on one target of each kernel config, run by lava-run on the
    stock qemu device, gives the local run's verdicts case by case; a
    tampered log does not; a local shard and LAVA ones merge into one matrix."""
    deps.ensure()
    where = config.out_dir() / "lava-check"
    shutil.rmtree(where, ignore_errors=True)
    targets = knobs.get("TARGETS")
    # Every job of KERNELS on TARGETS, validated.
    p = Pipeline(knobs.get("KERNELS"), targets).build()
    jobs = len(write_jobs(p, where / "jobs-all", "file://%s" % (where / "jobs-all")))
    bad = lava.validate(sorted((where / "jobs-all" / "jobs").glob("*.yaml")))
    for line in bad:
        print("invalid: %s" % line)
    progress("lava", "%d job(s) written, %s" % (jobs, "%d invalid" % len(bad) if bad
                                                 else "all valid"))
    pairs = lava_pairs(targets)
    if not pairs:
        raise Usage("lava-check crosses a local run with LAVA ones: TARGETS must name "
                    "a target LAVA can boot (x86, arm or all)")
    p = Pipeline(("series",), pairs).build()
    local = boot_all(LocalQemu("tcg", config.jobs()), p.guests(where / "local"))["series"]
    imported = p.guests(where / "imported")
    lab = boot_all(lava.LavaRun(where / "lava"), imported, stage="lava")["series"]
    write_index(p, imported, where / "lava")
    rows, problems = [], len(bad)
    for t in pairs:
        diff = differences(local[t.name], lab[t.name])
        cases = len(local[t.name].run.cases())
        ok = not diff and local[t.name].boot_status == "complete"
        problems += not ok
        rows.append([t.name, str(cases), lab[t.name].boot_status,
                     "same verdicts" if ok else "; ".join("%s: %s here, %s via LAVA" % d
                                                          for d in diff[:3])])
        # The proof can fail: a log with one case turned red must differ.
        log = where / "lava" / "logs" / ("%s.log" % lava.job_name("series", t.name))
        console, boot = lava.guest_from_log(tampered(log.read_text()))
        lava.write_guest(where / "tampered" / t.name, console, boot)
        red = load_guest_run(where / "tampered" / t.name, t.name, boot.status, boot.seconds,
                             boot.detail, p.initrds[t.userland][1])
        caught = bool(differences(local[t.name], red))
        problems += not caught
        rows.append([t.name + " (tampered)", "", boot.status,
                     "differs, as it must" if caught else "NOT SEEN: the proof is blind"])
    # Mixed sources: the first target from the local run, the others from
    # LAVA, one matrix; a single target has nothing to merge with.
    if len(pairs) < 2:
        rows.append([pairs[0].name + " here + LAVA", "", "not run",
                     "one target: the merge needs two (make lava-check TARGETS=x86 or arm)"])
    else:
        local_shard, lava_shard = where / "shard-local", where / "shard-lava"
        one = Pipeline(("series",), pairs[:1]).build()      # cached: no build
        write_run(local_shard, one, {"series": {pairs[0].name: local[pairs[0].name]}},
                  run_meta("tcg", p.described))
        shutil.copytree(where / "local" / "series" / pairs[0].name,
                        local_shard / "series" / pairs[0].name)
        import_logs(where / "lava" / "logs", lava_shard,
                    json.loads((where / "lava" / INDEX).read_text()),
                    only={lava.job_name("series", t.name) for t in pairs[1:]})
        merge.join([str(local_shard), str(lava_shard)], where / "merged", None, pairs)
        merged = render_dir(where / "merged", show=False)
        problems += merged != 0
        rows.append(["%s here + %s via LAVA" % (pairs[0].name,
                                                 ", ".join(t.name for t in pairs[1:])),
                     "", "merged", "one matrix, exit %d" % merged])
    print(format_table(["target", "cases", "via LAVA", "against the local run"], rows))
    m = compare.build_matrix({"series": lab}, pairs, ("series",))
    print("lava-check: %s; the LAVA runs' own matrix exits %d" % (
        "%d problem(s)" % problems if problems else "jobs valid, verdicts equal",
        m["summary"]["exit_status"]))
    return 1 if problems or m["summary"]["exit_status"] else 0
