"""Child processes that end with the run that started them.

Every long child (tar, patch, make, qemu) is started through here, so that:
- it gets a parent-death signal (setpriv --pdeathsig): a driver killed
  with SIGKILL does not leave make or QEMU running on the cache;
- it can inherit lock files: a lock held on a directory stays held until
  the last process that may write there (make's own children included)
  has exited, so a later run waits instead of building beside an orphan;
- on an interruption (Ctrl-C, SIGTERM, SIGHUP) the driver stops every
  child it started, with its whole process group (make's compilers too),
  first with SIGTERM (make then deletes the targets it was writing) and
  then with SIGKILL, and starts no new one.

A child that is killed with the driver (SIGKILL: nothing of the driver
runs) gets the death signal alone: make and QEMU end at once, a compiler
make had started finishes its file first; the lock they inherited keeps
the next run waiting until then.
"""
import concurrent.futures
import contextlib
import os
import shutil
import signal
import subprocess
import threading

from .log import checkpoint

# Seconds a child gets to end after SIGTERM before SIGKILL.
GRACE = 10

_children = set()
_guard = threading.Lock()
_stopping = threading.Event()
_SETPRIV = shutil.which("setpriv")


class Interrupted(Exception):
    """The run is being stopped: no new child is started."""


def _wrapped(cmd, death_signal):
    if _SETPRIV and death_signal:
        return [_SETPRIV, "--pdeathsig", death_signal, "--"] + [str(c) for c in cmd]
    return list(cmd)


def popen(cmd, hold=(), death_signal="TERM", group=True, **kwargs):
    """subprocess.Popen(cmd) that dies with the driver and can inherit the
    locks in `hold` (open files): the child keeps them held while it runs.
    `group`: the child leads a process group of its own, which stop()
    signals whole (not for a child that reads the terminal: make shell).
    Note: the death signal follows the thread that starts the child; the
    worker threads of parallel() outlive their children."""
    with _guard:
        if _stopping.is_set():
            raise Interrupted("the run is being stopped")
        proc = subprocess.Popen(_wrapped(cmd, death_signal),
                                pass_fds=tuple(f.fileno() for f in hold),
                                process_group=0 if group else None, **kwargs)
        proc.rfm_group = group
        _children.add(proc)
    return proc


def _forget(proc):
    with _guard:
        _children.discard(proc)


def _signal(proc, sig):
    """sig to the child's process group (or the child alone)."""
    try:
        if getattr(proc, "rfm_group", False):
            os.killpg(proc.pid, sig)
        elif proc.poll() is None:
            proc.send_signal(sig)
    except ProcessLookupError:
        pass


def stop(proc):
    """SIGTERM to its group, a grace period, then SIGKILL."""
    _signal(proc, signal.SIGTERM)
    try:
        proc.wait(GRACE)
    except subprocess.TimeoutExpired:
        _signal(proc, signal.SIGKILL)
        proc.wait()
    _forget(proc)


def wait(proc, timeout=None):
    """proc.wait(), stopping the child if the driver is interrupted."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        raise
    except BaseException:
        stop(proc)
        raise
    finally:
        if proc.returncode is not None:
            _forget(proc)


def run(cmd, hold=(), death_signal="TERM", check=False, input=None,
        capture_output=False, pause=None, timeout=None, **kwargs):
    """subprocess.run() through popen(): stopped cleanly on interruption,
    and (subprocess.TimeoutExpired) after `timeout` seconds.
    `pause` names a checkpoint held while the child runs, so that the
    interruption check's signal lands inside the stage on any machine."""
    if capture_output:
        kwargs.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    proc = popen(cmd, hold=hold, death_signal=death_signal, **kwargs)
    try:
        if pause:
            checkpoint(pause)
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:
        stop(proc)
        raise
    _forget(proc)
    if check and proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def stop_all():
    """Stop every child and refuse new ones (the run is ending)."""
    _stopping.set()
    with _guard:
        live = list(_children)
    for proc in live:
        _signal(proc, signal.SIGTERM)
    for proc in live:
        try:
            proc.wait(GRACE)
        except subprocess.TimeoutExpired:
            _signal(proc, signal.SIGKILL)
            proc.wait()
        _forget(proc)


def stopping():
    return _stopping.is_set()


def end_run():
    """At the end of main(): no child outlives the run. (Every thread has
    been joined by then, so a later main() in the same process, as in the
    host tests, may start children again.)"""
    stop_all()
    _stopping.clear()


def parallel(fn, items, jobs):
    """[fn(item) for item in items], up to `jobs` at a time, in order.
    On an interruption or an error the children are stopped and items not
    yet started are dropped, instead of waiting for every one to run."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futures = [ex.submit(fn, item) for item in items]
        try:
            concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            for f in futures:                   # the first failure, not the first job
                if f.done() and f.exception() is not None:
                    raise f.exception()
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            stop_all()
            raise


class Slots:
    """`total` slots (host threads) shared by workers that take several
    at once, handed out in turn order (0, 1, 2, ...) so that a worker
    wanting many is not passed over for ever by workers wanting few."""

    def __init__(self, total):
        self.free, self.turn = total, 0
        self._cond = threading.Condition()

    @contextlib.contextmanager
    def taken(self, turn, count):
        """Hold `count` slots, once every earlier turn has taken its own."""
        with self._cond:
            while not (self.turn == turn and self.free >= count):
                if _stopping.is_set():
                    raise Interrupted("the run is being stopped")
                self._cond.wait(0.5)
            self.free -= count
            self.turn += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self.free += count
                self._cond.notify_all()


def _interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def handle_termination():
    """SIGTERM and SIGHUP end the run like Ctrl-C: children stopped,
    cache left as after an interruption (main thread only)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
