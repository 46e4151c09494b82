"""make check, make check-arm, make check-all: run tables of steps.py.

Each step is its own `rfm COMMAND` (a child, so that it reads its knobs
as that command does, with the step's settings on top of the caller's
environment). In make check the first step that fails ends the run with
its exit status; every step's time, and the total against
steps.CHECK_BUDGET, are printed and written to RFM_OUT/check.json (make
check) or check-arm.json.

make check-all runs CI's schedule (steps.SCHEDULE) job by job, each in
RFM_OUT/schedule/JOB, every step of every job whatever the others gave,
and prints a table of the jobs' results and times (RFM_OUT/check-all.json).
make check-next, which .ci/run runs after make check, runs the one job
whose turn it is (the commit count of HEAD picks it), if the job's
stated time fits in what is left of CI's 90 minutes.
"""
import dataclasses
import json
import os
import subprocess
import sys
import time

from . import archive, atomic, config, knobs, procs, steps, tree
from .log import Fatal, Usage, one_line, progress
from .tables import format_table

RFM = config.REPO / "scripts" / "rfm"


def minutes(seconds):
    return "%d min %02d s" % (seconds // 60, seconds % 60)


def run_table(chosen, out, env=None, keep_going=False, deadline=None, label="check"):
    """Run the steps `chosen` in order, each a child with the step's
    settings over `env` (default: this process's environment). The first
    failure ends the run unless `keep_going`; at `deadline` (a
    time.monotonic() value) the running step is stopped and the run ends.
    Returns (status, [result per step run], [table row per step])."""
    rows, results, status = [], [], 0
    env = dict(os.environ if env is None else env)
    for n, step in enumerate(chosen, 1):
        progress(label, "%d/%d %s: %s" % (n, len(chosen), step.name, step.about))
        began = time.monotonic()
        cmd = ([sys.executable, str(config.REPO / "scripts" / step.command)]
               if step.command in steps.SCRIPTS else [sys.executable, str(RFM), step.command])
        left = None if deadline is None else max(1, deadline - began)
        try:
            rc = procs.run(cmd + step.argv(out), env=dict(env, **step.env(out)),
                           timeout=left).returncode
            result = "ok" if rc == 0 else "FAILED (exit %d)" % rc
        except subprocess.TimeoutExpired:
            rc, result = STOPPED, "STOPPED at the deadline"
        took = time.monotonic() - began
        results.append({"step": step.name, "command": step.command,
                        "settings": step.env(out), "exit": rc, "seconds": round(took, 1)})
        rows.append([step.name, result, minutes(took)])
        progress(label, "%s: %s in %s" % (step.name, result, minutes(took)))
        if rc != 0 and status in (0, STOPPED):
            status = rc     # a failure outweighs a stop
        if rc == STOPPED or (rc != 0 and not keep_going):
            break
        if step.command == "deps" and archive.CHOSEN_ENV not in env:
            # One tree for every step that follows, whatever Debian uploads
            # meanwhile (only a fallback from a pin no longer served can move).
            env[archive.CHOSEN_ENV] = json.dumps(tree.source().package.__dict__)
    ran = {r["step"] for r in results}
    rows += [[s.name, "not run", "-"] for s in chosen if s.name not in ran]
    return status, results, rows


def run_steps(table_name, only=None):
    table = steps.TABLES[table_name]
    chosen = [s for s in table if only in (None, s.name)]
    if not chosen:
        raise Usage("%s has no step %s; its steps: %s" % (
            table_name, only, ", ".join(s.name for s in table)))
    out = config.out_dir()
    start = time.monotonic()
    status, results, rows = run_table(chosen, out)
    total = time.monotonic() - start
    print(format_table(["step", "result", "time"], rows))
    budget = steps.CHECK_BUDGET if table_name == "check" and only is None else None
    print("%s: %s in %s%s" % (
        "make " + table_name if only is None else only,
        "passed" if status == 0 else "FAILED at %s" % results[-1]["step"], minutes(total),
        " (budget %s cold on a quiet 2-core machine: README, Measured)" % minutes(budget)
        if budget else ""))
    if only is None:
        atomic.write(out / ("%s.json" % table_name), json.dumps(
            {"steps": results, "seconds": round(total, 1), "status": status,
             "budget_seconds": budget}, indent=1))
    return status


def cmd_check(args):
    return run_steps("check", args.step)


def cmd_check_arm(args):
    return run_steps("check-arm", args.step)


# ---- CI's schedule (steps.SCHEDULE) ----

# A step stopped at CI's deadline: the job did not finish in the time left.
STOPPED = 124

# The knobs a job takes from its caller: where things live and how this
# machine builds and boots. What to test (KERNELS, TARGETS, CPUS, MUTANT,
# ...) is the job's own: a CI file's KERNELS for its shards, say, must not
# reach it.
MACHINE_KNOBS = ("RFM_CACHE", "JOBS", "ACCEL", "V", "DEBIAN_MIRROR", "DEBIAN_SECURITY_MIRROR",
                 "BOOT_TIMEOUT", "RUN_TIMEOUT", "GUEST_MEM", "PROGRAM_TIMEOUT",
                 "KCIDB_ORIGIN", "LAVA_URL_BASE")


def job_env():
    """The caller's environment without the knobs that say what to test."""
    return {k: v for k, v in os.environ.items()
            if k not in knobs.BY_NAME or k in MACHINE_KNOBS}


def run_job(job, root, deadline=None):
    """One job of the schedule, its packages first, every step run (a
    failure fails the job, not the steps after it): (status, seconds,
    the job's result record)."""
    out = root / "schedule" / job.name
    out.mkdir(parents=True, exist_ok=True)
    chosen = (steps.Step("deps", "deps", "the packages and downloads of its steps",
                         (("DEPS_FOR", job.name),)),) + tuple(
        dataclasses.replace(s, settings=tuple((k, v.replace("{root}", str(root)))
                                              for k, v in s.settings)) for s in job.steps)
    began = time.monotonic()
    status, results, rows = run_table(chosen, out, env=dict(job_env(), RFM_OUT=str(out)),
                                      keep_going=True, deadline=deadline, label=job.name)
    took = time.monotonic() - began
    print(format_table(["step", "result", "time"], rows))
    record = {"job": job.name, "status": status, "seconds": round(took, 1),
              "stated_minutes": job.minutes, "steps": results}
    atomic.write(out / "job.json", json.dumps(record, indent=1))
    return status, took, record


def stated(job):
    """Its measured minutes, or what is counted on while it has none."""
    return ("stated %d min" % job.minutes if job.minutes is not None else
            "not measured yet: counted as %d min" % job.needs_minutes)


def job_result(status):
    return ("ok" if status == 0 else "NOT FINISHED: CI's time ran out" if status == STOPPED
            else "FAILED (exit %d)" % status)


def chosen_jobs():
    """The jobs JOB names (all of the schedule when unset), in its order."""
    wanted = knobs.get("JOB")
    return [j for j in steps.SCHEDULE if wanted is None or j.name in wanted]


def schedule_table():
    """The schedule as docs/schedule.md shows it: a row a job."""
    rows = [["`%s`" % j.name, "-" if j.minutes is None else "%d min" % j.minutes,
             "yes" if j.rotates else "no", ", ".join("`%s`" % s.name for s in j.steps),
             j.about] for j in steps.SCHEDULE]
    return "\n".join(["| job | measured | rotates | steps | what |",
                      "| --- | --- | --- | --- | --- |"]
                     + ["| %s |" % " | ".join(r) for r in rows]) + "\n"


def cmd_check_all(args):
    """make check-all: every job of CI's schedule in turn (JOB= for some),
    a table of each job's result and time; or, with --next, the one job
    whose turn it is, if what is left of CI's time allows."""
    if args.list:
        print(schedule_table(), end="")
        return 0
    if args.next:
        return run_next()
    root = config.out_dir()
    jobs = chosen_jobs()
    rows, records, status, start = [], [], 0, time.monotonic()
    for n, job in enumerate(jobs, 1):
        progress("check-all", "job %d/%d %s: %s" % (n, len(jobs), job.name, job.about))
        rc, took, record = run_job(job, root)
        records.append(record)
        rows.append([job.name, job_result(rc), minutes(took),
                     "-" if job.minutes is None else "%d min" % job.minutes])
        progress("check-all", "job %s: %s in %s" % (job.name, job_result(rc), minutes(took)))
        status = status or rc
    total = time.monotonic() - start
    print(format_table(["job", "result", "time", "stated"], rows))
    failed = [r["job"] for r in records if r["status"]]
    print("make check-all: %s in %s (%d job(s))" % (
        "passed" if not failed else "FAILED: %s" % ", ".join(failed), minutes(total),
        len(jobs)))
    atomic.write(root / "check-all.json", json.dumps(
        {"jobs": records, "seconds": round(total, 1), "status": status}, indent=1))
    return status


def commit_count():
    """How many commits HEAD has: the rotation's position."""
    r = procs.run(["git", "-C", str(config.REPO), "rev-list", "--count", "HEAD"],
                  capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        raise Fatal("make check-next needs the checkout's git history to choose a job: "
                    "%s" % one_line(r.stderr or r.stdout))
    return int(r.stdout)


def next_job():
    """(the job whose turn it is, why): JOB= if given, else the one at
    the checkout's commit count (from steps.ROTATION_START), modulo the
    number of jobs that rotate."""
    rotating = [j for j in steps.SCHEDULE if j.rotates]
    wanted = knobs.get("JOB")
    if wanted:
        if len(wanted) != 1 or not steps.job(wanted[0]).rotates:
            raise Usage("JOB=%s: make check-next runs one job that rotates: %s" % (
                ",".join(wanted), ", ".join(j.name for j in rotating)))
        return steps.job(wanted[0]), "JOB=%s" % wanted[0]
    count = commit_count()
    k = (count - steps.ROTATION_START) % len(rotating)
    return rotating[k], "commit %d of main, job %d of the %d that rotate" % (
        count, k + 1, len(rotating))


def run_next():
    """.ci/run's second part: the job whose turn it is, started only if
    its stated minutes and a margin fit in what is left of CI_MINUTES
    since CI_STARTED, and stopped if it is still running a minute before
    the end. A job that fails fails the run; one stopped with nothing
    failed so far is NOT FINISHED, which is not a pass and not a failure:
    CI's limit, not the kernel, ended it (a job's time alone can exceed
    its time in make check-all, which shares kernels between jobs), and
    the kernels it built are in the cache for its next turn."""
    job, why = next_job()
    ci_started, ci_minutes = knobs.get("CI_STARTED"), knobs.get("CI_MINUTES")
    now = time.time()
    left = ci_minutes * 60 - (now - ci_started)
    need = (job.needs_minutes + steps.ROTATION_MARGIN) * 60
    progress("check-next", "%s (%s): %s; %s of CI's %d min left" % (
        job.name, why, stated(job), minutes(max(0, left)), ci_minutes))
    if left < need:
        print("make check-next: %s NOT RUN: it needs %d min with the margin, %s is left; "
              "the next submission's turn goes on" % (job.name, need // 60,
                                                       minutes(max(0, left))))
        return 0
    deadline = time.monotonic() + left - 60
    status, took, record = run_job(job, config.out_dir(), deadline=deadline)
    atomic.write(config.out_dir() / "check-next.json", json.dumps(
        dict(record, why=why, left_seconds=round(left)), indent=1))
    print("make check-next: %s %s in %s (%s)%s" % (
        job.name, job_result(status), minutes(took), stated(job),
        "; its next turn goes on from its cached kernels" if status == STOPPED else ""))
    return 0 if status == STOPPED else status
