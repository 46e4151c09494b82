"""Progress lines with elapsed time, and errors that stop the run."""
import sys
import time

_START = time.monotonic()


class Fatal(Exception):
    """A clear, user-facing error: printed without a traceback, exit 1."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def elapsed():
    return time.monotonic() - _START


def progress(step, message):
    print("[%7.1fs] %-9s %s" % (elapsed(), step, message), flush=True)


def warn(message):
    print("warning: %s" % message, file=sys.stderr, flush=True)
