"""make check and make check-arm: run a table of steps.py, in order.

Each step is its own `rfm COMMAND` (a child, so that it reads its knobs
as that command does, with the step's settings on top of the caller's
environment). The first step that fails ends the run with its exit
status; every step's time, and the total against steps.CHECK_BUDGET, are
printed and written to RFM_OUT/check.json (make check) or
check-arm.json.
"""
import json
import os
import sys
import time

from . import archive, atomic, config, procs, steps, tree
from .log import Usage, progress
from .tables import format_table

RFM = config.REPO / "scripts" / "rfm"


def minutes(seconds):
    return "%d min %02d s" % (seconds // 60, seconds % 60)


def run_steps(table_name, only=None):
    table = steps.TABLES[table_name]
    chosen = [s for s in table if only in (None, s.name)]
    if not chosen:
        raise Usage("%s has no step %s; its steps: %s" % (
            table_name, only, ", ".join(s.name for s in table)))
    out = config.out_dir()
    rows, results, status, start = [], [], 0, time.monotonic()
    for n, step in enumerate(chosen, 1):
        progress("check", "%d/%d %s: %s" % (n, len(chosen), step.name, step.about))
        began = time.monotonic()
        env = dict(os.environ, **step.env(out))
        rc = procs.run([sys.executable, str(RFM), step.command] + list(step.args),
                       env=env).returncode
        took = time.monotonic() - began
        results.append({"step": step.name, "command": step.command,
                        "settings": step.env(out), "exit": rc, "seconds": round(took, 1)})
        rows.append([step.name, "ok" if rc == 0 else "FAILED (exit %d)" % rc, minutes(took)])
        progress("check", "%s: %s in %s" % (step.name, "ok" if rc == 0 else
                                           "FAILED (exit %d)" % rc, minutes(took)))
        if rc != 0:
            status = rc
            break
        if step.command == "deps" and archive.CHOSEN_ENV not in os.environ:
            # One tree for every step that follows, whatever Debian uploads
            # meanwhile (only a fallback from a pin no longer served can move).
            os.environ[archive.CHOSEN_ENV] = json.dumps(tree.source().package.__dict__)
    total = time.monotonic() - start
    ran = {r["step"] for r in results}
    rows += [[s.name, "not run", "-"] for s in chosen if s.name not in ran]
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
