"""The command line behind the Makefile: argparse and dispatch.

Each command's body lives with its subject, one module per command or
family (the table in main() says which); this module only parses the
arguments, checks the command's knobs (knobs.py is their table), takes
the output directory's lock for commands that write it, and turns
errors into exit statuses.
"""
import argparse
import contextlib
import fcntl
import sys
from pathlib import Path

from . import (abi, bench, bisect, checkpatch, ci, cilint, config, deps, knobs, lab, matrix,
               mutate, procs, selftest, shell, sparse, suites)
from .log import Fatal

# Commands that replace parts of the output directory. Two of them at once
# on one directory would delete each other's results (a make check during a
# long make fuzz did), so they take a lock on it.
WRITES_OUT = {"run", "matrix-check", "report", "bench", "fuzz", "stress", "abi",
              "guest-selftest", "mutate", "mutate-gen", "perf-gate", "merge", "lava",
              "lava-run", "lava-import", "lava-check"}


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


def parser():
    """The command line: each command and the function that runs it."""
    ap = argparse.ArgumentParser(prog="rfm")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="build, boot and print the matrix")
    p.set_defaults(fn=matrix.cmd_run)
    p = sub.add_parser("matrix-check", help="the matrix with the check kernels")
    p.set_defaults(fn=matrix.cmd_run)
    sub.add_parser("host-tests").set_defaults(fn=selftest.cmd_host_tests)
    sub.add_parser("report").set_defaults(fn=matrix.cmd_report)
    sub.add_parser("merge", help="join shard outputs (RESULTS) into one matrix"
                   ).set_defaults(fn=matrix.cmd_merge)
    p = sub.add_parser("cache-key", help="the key of the kernels KERNELS and TARGETS select")
    p.add_argument("--list", action="store_true", help="each kernel's key instead")
    p.add_argument("--prune", action="store_true",
                   help="remove every other kernel from $RFM_CACHE/kernels")
    p.set_defaults(fn=ci.cmd_cache_key)
    sub.add_parser("kernels").set_defaults(fn=matrix.cmd_kernels)
    sub.add_parser("shell").set_defaults(fn=shell.cmd_shell)
    sub.add_parser("deps").set_defaults(fn=deps.cmd_deps)
    sub.add_parser("guest-selftest").set_defaults(fn=selftest.cmd_guest_selftest)
    sub.add_parser("bench").set_defaults(fn=bench.cmd_bench)
    sub.add_parser("perf-gate").set_defaults(fn=bench.cmd_perf_gate)
    sub.add_parser("fuzz").set_defaults(fn=suites.cmd_fuzz)
    sub.add_parser("stress").set_defaults(fn=suites.cmd_stress)
    sub.add_parser("bisect-check").set_defaults(fn=bisect.cmd_bisect_check)
    sub.add_parser("mutate").set_defaults(fn=mutate.cmd_mutate)
    sub.add_parser("mutate-gen").set_defaults(fn=mutate.cmd_mutate_gen)
    sub.add_parser("checkpatch").set_defaults(fn=checkpatch.cmd_checkpatch)
    sub.add_parser("ci-check", help="the CI files read by actionlint and gitlab-ci-local"
                   ).set_defaults(fn=cilint.cmd_ci_check)
    sub.add_parser("lava", help="LAVA jobs for KERNELS x TARGETS in RFM_OUT/lava"
                   ).set_defaults(fn=lab.cmd_lava)
    sub.add_parser("lava-run", help="run make lava's jobs here with lava-run (offline)"
                   ).set_defaults(fn=lab.cmd_lava_run)
    sub.add_parser("lava-import", help="LAVA job logs (LAVA_LOGS) into the matrix"
                   ).set_defaults(fn=lab.cmd_lava_import)
    sub.add_parser("lava-check", help="the LAVA round trip, offline, with lava-run"
                   ).set_defaults(fn=lab.cmd_lava_check)
    sub.add_parser("sparse").set_defaults(fn=sparse.cmd_sparse)
    p = sub.add_parser("abi", help="the ABI gate against headers, pahole, tables")
    p.add_argument("--expected", type=Path, help="expected ABI file (abi/expected.abi)")
    p.add_argument("--system-only", action="store_true",
                   help="only /usr/include (no kernel tree)")
    p.set_defaults(fn=abi.cmd_abi)
    p = sub.add_parser("knobs", help="the knob table; --check COMMAND checks its knobs")
    p.add_argument("--check", metavar="COMMAND")
    p.add_argument("--markdown", action="store_true", help="as docs/knobs.md shows it")
    p.set_defaults(fn=knobs.cmd_knobs)
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    procs.handle_termination()
    try:
        knobs.serve(args.cmd)
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
