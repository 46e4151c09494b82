"""The project's tests of itself: host-tests (the unit tests of this
driver) and guest-selftest (its failure paths, on a real guest)."""
import concurrent.futures
import dataclasses
import os
import re
import subprocess
import sys
import time

from . import compare, config, deps, knobs
from .log import progress
from .pipeline import Pipeline, boot_all


# unittest's summary of one module's run.
_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)


def _host_test_module(module):
    """One module of tests/host in a process of its own: (module, exit
    status, tests run, output)."""
    r = subprocess.run([sys.executable, "-m", "unittest", "-v", "tests.host." + module],
                       cwd=config.REPO, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(config.REPO / "scripts")))
    ran = _RAN.search(r.stderr)
    return module, r.returncode, int(ran.group(1)) if ran else 0, r.stderr + r.stdout


def cmd_host_tests(_args):
    """The unit tests, a module per process, JOBS at a time (they are
    independent; one process took a minute of make check's time while
    the other core idled). A module that fails or runs no test fails
    the whole; its output is printed whole, the others' in a line."""
    modules = sorted(p.stem for p in (config.REPO / "tests" / "host").glob("test_*.py"))
    if not modules:
        progress("host-test", "no test module in tests/host")
        return 1
    start = time.monotonic()
    failed, total = [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=config.jobs()) as pool:
        for module, status, ran, output in pool.map(_host_test_module, modules):
            total += ran
            if status != 0 or ran == 0:
                failed.append(module)
                sys.stdout.write(output)
                progress("host-test", "FAIL %s: exit %d, %d test(s) run" % (module, status, ran))
            else:
                progress("host-test", "ok   %s: %d test(s)" % (module, ran))
    progress("host-test", "%d test(s) in %d module(s), %d at a time, %.0f s: %s" % (
        total, len(modules), config.jobs(), time.monotonic() - start,
        "failed: " + ", ".join(failed) if failed else "all ok"))
    return 1 if failed else 0


def cmd_guest_selftest(_args):
    """Prove the failure paths on a real guest: a kernel that panics must
    give exit 1, a guest that hangs exit 2; neither may ever give 0."""
    t = knobs.get("TARGETS")[0]
    deps.ensure()
    kernel = "stock"
    p = Pipeline((kernel,), (t,)).build()
    backend = p.backend()
    failed = 0
    for mode, want in (("crash", 1), ("hang", 2)):
        g = dataclasses.replace(p.guest(kernel, t, config.out_dir()),
                                out=config.out_dir() / "selftest" / mode,
                                mode=mode, boot_timeout=30, run_timeout=10)
        run = boot_all(backend, [g], stage="selftest")[kernel][t.name]
        got = compare.build_matrix({kernel: {t.name: run}}, (t,), (kernel,))
        status = got["summary"]["exit_status"]
        ok = status == want
        failed += not ok
        progress("selftest", "%s %s: guest %s, console %s -> exit %d (want %d)" % (
            "ok  " if ok else "FAIL", mode, run.boot_status,
            run.console[0][1] if run.console else "clean", status, want))
    return 1 if failed else 0
