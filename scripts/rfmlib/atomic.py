"""Cache entries appear whole or not at all.

Whatever the cache keeps is written under a name of its own to this
process (`.<name>.tmp-<pid>-<random>`) and then renamed into place, so a
run killed half way leaves only a temporary that nobody reads, and two
runs making the same entry at once never write into one file. The first
to finish publishes; the other drops its copy (the key says they hold
the same thing). Temporaries of runs that are no longer alive are swept.
"""
import contextlib
import os
import re
import shutil
import uuid
from pathlib import Path

_TMP = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)-[0-9a-f]{8}$")


def tmp_path(final):
    final = Path(final)
    return final.with_name(".%s.tmp-%d-%s" % (final.name, os.getpid(), uuid.uuid4().hex[:8]))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def sweep(final):
    """Remove temporaries for `final` left by runs that have ended."""
    final = Path(final)
    if not final.parent.is_dir():
        return
    for p in final.parent.iterdir():
        m = _TMP.match(p.name)
        if m and m.group("name") == final.name and not _alive(int(m.group("pid"))):
            _remove(p)


def _remove(p):
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def write(path, data):
    """Write bytes or text to path atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path(path)
    if isinstance(data, str):
        tmp.write_text(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def publish(tmp, final):
    """Rename tmp to final; if another run got there first, keep theirs.
    Returns True if ours was published."""
    try:
        os.rename(tmp, final)
        return True
    except OSError:
        if not Path(final).exists():
            raise
        _remove(Path(tmp))
        return False


@contextlib.contextmanager
def new_dir(final):
    """Yield an empty private directory that becomes `final` when the block
    ends without error (and is removed when it does not)."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep(final)
    tmp = tmp_path(final)
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    publish(tmp, final)


@contextlib.contextmanager
def new_file(final):
    """Yield a private path that becomes `final` when the block ends
    without error."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep(final)
    tmp = tmp_path(final)
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, final)


@contextlib.contextmanager
def scratch_dir(near):
    """Yield an empty private directory named after `near`, removed when
    the block ends, however it ends."""
    near = Path(near)
    near.parent.mkdir(parents=True, exist_ok=True)
    sweep(near)
    tmp = tmp_path(near)
    tmp.mkdir()
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
