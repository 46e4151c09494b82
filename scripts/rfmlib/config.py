"""Paths and the pinned kernel tree: where things live, in one place."""
import contextlib
import fcntl
import os
from pathlib import Path

from . import knobs
from .log import progress

REPO = Path(__file__).resolve().parents[2]

# The tree the series was made for. The series is checked against it before
# patching; another version fails with a message naming both.
LINUX_SOURCE_PACKAGE = "linux-source-6.1"
LINUX_SOURCE_DEB_VERSION = "6.1.192-3"
LINUX_VERSION = "6.1.192"
LINUX_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
LINUX_TOPDIR = "linux-source-6.1"

PATCHES = REPO / "patches"
KCONFIG = REPO / "kconfig"


def cache_dir():
    """Build cache, outside the repo: $RFM_CACHE, else XDG, else ~/.cache."""
    if os.environ.get("RFM_CACHE"):
        return Path(os.environ["RFM_CACHE"]).resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "robust-futex-matrix"


def out_dir():
    return Path(os.environ.get("RFM_OUT") or REPO / "out").resolve()


def jobs():
    return knobs.get("JOBS", os.cpu_count() or 1)


def verbose():
    return knobs.get("V", False)


@contextlib.contextmanager
def cache_lock(name):
    """One run at a time in a part of the cache without finer locks; the
    others wait."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / ("%s.lock" % name), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(name, "waiting for another run using %s" % (cache_dir() / name))
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield
