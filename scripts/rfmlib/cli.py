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
import subprocess
import sys
from pathlib import Path

from . import (abi, bench, bisect, checkpatch, checkrun, ci, cilint, config, coverage, deps,
               knobs, lab, matrix, mutate, procs, selftest, shell, sparse, suites, tree, upstream)
from .log import Fatal, one_line

# Commands that replace parts of the output directory. Two of them at once
# on one directory would delete each other's results (a make check during a
# long make fuzz did), so they take a lock on it.
WRITES_OUT = {"run", "matrix-check", "report", "bench", "fuzz", "stress", "abi",
              "guest-selftest", "mutate", "mutate-gen", "perf-gate", "merge", "lava",
              "lava-run", "lava-import", "lava-check", "coverage", "upstream-check"}


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


# Each command, the function that runs it (in the module of its
# subject), and a line of help; the Makefile's targets name them.
COMMANDS = (
    ("run", matrix.cmd_run, "build, boot and print the matrix (KERNELS=series)"),
    ("matrix-check", matrix.cmd_run, "the matrix with series, stock and baseline"),
    ("report", matrix.cmd_report, "render RFM_OUT again without booting"),
    ("merge", matrix.cmd_merge, "join shard outputs (RESULTS) into one matrix"),
    ("kernels", matrix.cmd_kernels, "build (or find in the cache) the kernels only"),
    ("cache-key", ci.cmd_cache_key, "the key of the kernels KERNELS and TARGETS select"),
    ("shell", shell.cmd_shell, "a shell in one guest (TARGET, KERNEL)"),
    ("check", checkrun.cmd_check, "the tests: make check's steps, timed (steps.py)"),
    ("check-arm", checkrun.cmd_check_arm, "the ARM side of the tests (steps.py)"),
    ("check-all", checkrun.cmd_check_all, "CI's schedule, job by job (steps.SCHEDULE); "
     "--next: the job whose turn it is, if CI's time allows"),
    ("deps", deps.cmd_deps, "install and download what DEPS_FOR's commands need"),
    ("repin", tree.cmd_repin, "pin the newest linux-source-6.1 the series applies to"),
    ("host-tests", selftest.cmd_host_tests, "the driver's unit tests"),
    ("guest-selftest", selftest.cmd_guest_selftest, "a panicking and a hanging guest fail"),
    ("bench", bench.cmd_bench, "the seed's performance claims, measured"),
    ("perf-gate", bench.cmd_perf_gate, "series against stock and mainline in exact "
     "instruction counts"),
    ("fuzz", suites.cmd_fuzz, "hostile lists against a model of the walk"),
    ("stress", suites.cmd_stress, "owners killed while others wait"),
    ("bisect-check", bisect.cmd_bisect_check, "the series one patch at a time"),
    ("mutate", mutate.cmd_mutate, "the mutant catalogue must turn the matrix red"),
    ("mutate-gen", mutate.cmd_mutate_gen, "the same for generated mutants"),
    ("coverage", coverage.cmd_coverage, "the suites' line and branch coverage of the series "
     "(gcov kernels)"),
    ("checkpatch", checkpatch.cmd_checkpatch, "checkpatch --strict, names, mutants apply"),
    ("upstream-check", upstream.cmd_upstream_check, "the mails of upstream/ on mainline "
     "(7.3): git am, checkpatch, builds, the matrix against mainline"),
    ("sparse", sparse.cmd_sparse, "sparse on the series' C files against stock"),
    ("ci-check", cilint.cmd_ci_check, "the CI files read by actionlint and gitlab-ci-local"),
    ("lava", lab.cmd_lava, "LAVA jobs for KERNELS x TARGETS in RFM_OUT/lava"),
    ("lava-run", lab.cmd_lava_run, "run make lava's jobs here with lava-run (offline)"),
    ("lava-import", lab.cmd_lava_import, "LAVA job logs (LAVA_LOGS) into the matrix"),
    ("lava-check", lab.cmd_lava_check, "the LAVA round trip, offline, with lava-run"),
    ("abi", abi.cmd_abi, "the ABI gate against headers, pahole, tables"),
    ("knobs", knobs.cmd_knobs, "the knob table; --check COMMAND checks its knobs"),
)


def parser():
    """The command line: each command of COMMANDS, and its options."""
    ap = argparse.ArgumentParser(prog="rfm")
    sub = ap.add_subparsers(dest="cmd", required=True)
    cmd = {}
    for name, fn, about in COMMANDS:
        cmd[name] = sub.add_parser(name, help=about)
        cmd[name].set_defaults(fn=fn)
    cmd["cache-key"].add_argument("--list", action="store_true",
                                  help="each kernel's key instead")
    cmd["cache-key"].add_argument("--prune", action="store_true",
                                  help="remove every other kernel from $RFM_CACHE/kernels")
    cmd["abi"].add_argument("--expected", type=Path,
                            help="expected ABI file (abi/expected.abi)")
    cmd["abi"].add_argument("--system-only", action="store_true",
                            help="only /usr/include (no kernel tree)")
    cmd["deps"].add_argument("--list", action="store_true",
                             help="print what DEPS_FOR's commands need, install nothing")
    for name in ("check", "check-arm"):
        cmd[name].add_argument("--step", metavar="NAME", help="only this step")
    cmd["check-all"].add_argument("--next", action="store_true",
                                  help="only the job whose turn it is (what .ci/run runs)")
    cmd["check-all"].add_argument("--list", action="store_true",
                                  help="the jobs, as docs/schedule.md shows them")
    cmd["knobs"].add_argument("--check", metavar="COMMAND")
    cmd["knobs"].add_argument("--markdown", action="store_true",
                              help="as docs/knobs.md shows it")
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
    except subprocess.CalledProcessError as e:
        # A tool that should not fail did: one line, never a traceback.
        print("error: %s exited with %d%s" % (
            " ".join(str(c) for c in e.cmd[:4]), e.returncode,
            ": " + one_line(e.stderr if isinstance(e.stderr, str) else "")[-300:]
            if e.stderr else ""), file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as e:
        print("error: %s took more than %d s" % (" ".join(str(c) for c in e.cmd[:4]),
                                                 e.timeout), file=sys.stderr)
        return 1
    except OSError as e:
        # A program that is not installed, a cache we may not write.
        print("error: %s%s" % (e.strerror or e, ": %s" % e.filename if e.filename else ""),
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: children stopped; the next run repairs the cache",
              file=sys.stderr)
        return 130
    finally:
        procs.end_run()
