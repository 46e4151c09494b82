"""Paths and the pinned kernel tree: where things live, in one place."""
import contextlib
import fcntl

from . import knobs
from .log import progress

REPO = knobs.REPO

# The Debian tree the series was made for: its version and SHA-256 are
# pinned in patches/trees.json (make repin moves the pin), and the tree is
# downloaded into the cache (archive.kernel_source), never installed.
LINUX_SOURCE_PACKAGE = "linux-source-6.1"
LINUX_TOPDIR = LINUX_SOURCE_PACKAGE     # the tarball's top directory

PATCHES = REPO / "patches"
# The mails for mainline (7.3): git format-patch output, a cover letter first.
UPSTREAM = REPO / "upstream"
TREE_PINS = PATCHES / "trees.json"
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
