"""Paths and the pinned kernel tree: where things live, in one place."""
import contextlib
import fcntl
from pathlib import Path

from . import knobs
from .log import progress

REPO = knobs.REPO

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
    """Build cache, outside the repo (RFM_CACHE)."""
    return knobs.get("RFM_CACHE")


def out_dir():
    """Where results are written (RFM_OUT)."""
    return knobs.get("RFM_OUT")


def jobs():
    return knobs.get("JOBS")


def verbose():
    return knobs.get("V")


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
