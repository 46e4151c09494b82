"""Progress lines with elapsed time, and errors that stop the run."""
import os
import sys
import threading
import time

_START = time.monotonic()
# Guests boot in threads: one write per line, under a lock, so lines of
# guests that finish together never run into each other.
_WRITE = threading.Lock()


class Fatal(Exception):
    """A clear, user-facing error: printed without a traceback, exit 1."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


class Usage(Fatal):
    """Bad input from the user (a knob, a file it names): exit 2."""

    def __init__(self, message):
        super().__init__(message, status=2)


def elapsed():
    return time.monotonic() - _START


def one_line(text):
    """Text of any shape as one line: its non-empty lines joined by ' | '."""
    return " | ".join(l.strip() for l in str(text).splitlines() if l.strip())


def _emit(stream, line):
    with _WRITE:
        stream.write(line + "\n")
        stream.flush()


def progress(step, message):
    _emit(sys.stdout, "[%7.1fs] %-9s %s" % (elapsed(), step, one_line(message)))


def warn(message):
    _emit(sys.stderr, "warning: %s" % one_line(message))


def checkpoint(name):
    """A point where the interruption check (scripts/interrupt-check) can
    stop a run: with RFM_TEST_PAUSE=<name>:<seconds> the run says so and
    sleeps there. Not a knob for users."""
    want, _, seconds = (os.environ.get("RFM_TEST_PAUSE") or "").partition(":")
    if want == name:
        progress("pause", "%s (RFM_TEST_PAUSE)" % name)
        time.sleep(float(seconds or "60"))
