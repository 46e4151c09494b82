"""The project's tests of itself: host-tests (the unit tests of this
driver) and guest-selftest (its failure paths, on a real guest)."""
import dataclasses
import os
import subprocess
import sys

from . import compare, config, deps, knobs
from .log import progress
from .pipeline import Pipeline, boot_all


def cmd_host_tests(_args):
    r = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s",
                        str(config.REPO / "tests" / "host"), "-t",
                        str(config.REPO), "-v"],
                       cwd=config.REPO,
                       env=dict(os.environ, PYTHONPATH=str(config.REPO / "scripts")))
    return r.returncode


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
