"""The knobs: every environment variable the driver reads, in one table.

Each row says what the knob means, its default, how its value is read and
which commands read it. main() checks every knob of a command before the
command does anything, so a bad value is one line, the same for every
command, and exit 2:

    error: JOBS=0: not a whole number greater than 0

A new knob is one row in KNOBS (and, if no reader below fits, a reader
function), read with knobs.get(NAME, default), plus its row in the
README's knob table (a host test checks that). Make passes variables
given on its command line to the driver's environment, and an empty value
means the default (the Makefile exports some knobs empty when unset).
"""
import os
from dataclasses import dataclass
from pathlib import Path

from . import bzimage as _bzimage
from . import tables
from . import targets as _targets
from .log import Usage, warn

# Commands by what they read (rfm command names; "check" is `make check`,
# checked once before its steps run).
BOOTS = ("run", "matrix-check", "check", "shell", "guest-selftest", "bench", "fuzz", "stress",
         "mutate", "mutate-gen", "perf-gate", "bisect-check")
MATRIX = ("run", "matrix-check", "check")
BUILDS = BOOTS + ("kernels", "abi", "sparse")
ALL = BUILDS + ("report", "checkpatch", "deps", "host-tests", "merge", "cache-key")


class BadValue(ValueError):
    """What is wrong with a value, said after `NAME=value: `."""


# ---- readers: text -> value, or BadValue ----

def whole(minimum, what="a whole number"):
    def read(text):
        try:
            n = int(text, 0)
        except ValueError:
            n = None
        if n is None or n < minimum:
            raise BadValue("not %s %s" % (what, "greater than 0" if minimum == 1
                                          else "of %d or more" % minimum))
        return n
    return read


positive = whole(1)
seconds = whole(1, "a whole number of seconds")


def one_of(*choices):
    def read(text):
        if text not in choices:
            raise BadValue("not one of %s" % ", ".join(choices))
        return text
    return read


def text_value(text):
    return text


def a_dir(text):
    path = Path(text).expanduser()
    if not path.is_dir():
        raise BadValue("not a directory")
    return path


def memory(text):
    digits = text[:-1] if text[-1:] in ("M", "G") else text
    if not digits.isdigit() or int(digits) == 0:
        raise BadValue("not a memory size such as 512M or 1G")
    return text


def target_list(text):
    try:
        return _targets.select_targets(text)
    except ValueError as e:
        raise BadValue(str(e))


def one_target(text):
    chosen = target_list(text)
    if len(chosen) != 1:
        raise BadValue("names %d targets; want one" % len(chosen))
    return chosen[0]


def kernel_list(text):
    try:
        return _targets.select_kernels(text, ())
    except ValueError as e:
        raise BadValue(str(e))


def one_kernel(text):
    chosen = kernel_list(text)
    if len(chosen) != 1:
        raise BadValue("names %d kernels; want one" % len(chosen))
    return chosen[0]


def directory(text):
    p = Path(text).expanduser()
    if not p.is_dir():
        raise BadValue("no such directory" if not p.exists() else "not a directory")
    return p.resolve()


def dir_to_make(text):
    """A directory that may not exist yet (it is created)."""
    p = Path(text).expanduser()
    if p.exists() and not p.is_dir():
        raise BadValue("exists and is not a directory")
    return p.resolve()


def a_file(text):
    p = Path(text).expanduser()
    if not p.is_file():
        raise BadValue("no such file" if not p.exists() else "not a regular file")
    return p.resolve()


def extra_dir(text):
    d = directory(text)
    if not any(p.is_file() and p.read_bytes()[:4] == b"\x7fELF" for p in d.iterdir()):
        raise BadValue("holds no ELF program (want static programs: x86_64, "
                       "i386, x32, arm64 or armhf)")
    return d


def kernel_tree(text):
    d = directory(text)
    if not (d / "include/uapi/linux/futex.h").is_file():
        raise BadValue("not a kernel tree (no include/uapi/linux/futex.h)")
    return d


def bzimage(bits):
    def read(text):
        path = a_file(text)
        try:
            info = _bzimage.read_bzimage(path)
        except ValueError as e:
            raise BadValue(str(e))
        if info.bits != bits:
            raise BadValue(
                "a %d-bit kernel%s; want a %d-bit one (%s) for %s%s" % (
                    info.bits, " (xloadflags XLF_KERNEL_64)" if info.bits == 64
                    else " (no XLF_KERNEL_64 in xloadflags)", bits,
                    "ARCH=x86_64" if bits == 64 else "ARCH=i386",
                    ", ".join(t.name for t in _targets.TARGETS
                              if t.kconfig == ("x86_64" if bits == 64 else "i386")),
                    "; a 32-bit kernel goes in BZIMAGE32" if bits == 64 else
                    "; a 64-bit kernel goes in BZIMAGE"))
        return path
    return read


def flag(text):
    if text not in ("0", "1"):
        raise BadValue("not 0 or 1")
    return text == "1"


@dataclass(frozen=True)
class Knob:
    name: str
    read: object        # text -> value; raises BadValue
    default: str        # as shown; None: unset means "not given"
    about: str
    commands: tuple     # the rfm commands that read it


KNOBS = (
    Knob("KERNELS", kernel_list, "per command",
         "kernel variants, comma separated (see the README's variant table)",
         MATRIX + ("kernels", "bench", "fuzz", "stress", "merge", "cache-key")),
    Knob("TARGETS", target_list, _targets.DEFAULT_TARGET_GROUP + " (bisect-check: all)",
         "targets, comma separated: " + ", ".join(t.name for t in _targets.TARGETS)
         + "; or a group: " + ", ".join(_targets.TARGET_GROUPS),
         MATRIX + ("kernels", "guest-selftest", "bench", "fuzz", "stress", "mutate",
                   "mutate-gen", "perf-gate", "merge", "cache-key", "bisect-check")),
    Knob("TARGET", one_target, "x86_64", "the target of make shell", ("shell",)),
    Knob("KERNEL", one_kernel, "series", "the kernel variant of make shell", ("shell",)),
    Knob("EXTRA", extra_dir, None, "a directory of your own static test programs",
         MATRIX + ("shell",)),
    Knob("V", flag, "0", "1: the full build output", BUILDS),
    Knob("ACCEL", one_of("tcg", "kvm"), "probe (run, check, bench), else tcg",
         "QEMU's accelerator", BOOTS),
    Knob("JOBS", positive, "the number of CPUs", "parallel builds and boots", BUILDS),
    Knob("RFM_CACHE", dir_to_make, "~/.cache/robust-futex-matrix",
         "the build cache", ALL),
    Knob("RFM_OUT", dir_to_make, "out", "where results are written", ALL),
    Knob("BOOT_TIMEOUT", seconds, "60", "seconds from boot to the first result",
         BOOTS),
    Knob("RUN_TIMEOUT", seconds, "900 (bench: 1800)", "seconds for a whole guest",
         MATRIX + ("bench",)),
    Knob("GUEST_MEM", memory, "512M", "guest memory", BOOTS),
    Knob("KSRC", kernel_tree, None, "make abi: another kernel tree", ("abi", "check")),
    Knob("BZIMAGE", bzimage(64), None,
         "your own 64-bit kernel (x86_64, x86_64-ia32, x86_64-x32)",
         MATRIX + ("kernels", "shell", "bench", "fuzz", "stress")),
    Knob("BZIMAGE32", bzimage(32), None, "your own 32-bit kernel (i386)",
         MATRIX + ("kernels", "shell", "bench", "fuzz", "stress")),
    Knob("BZIMAGE_CONFIG", a_file, None, "the config of BZIMAGE/BZIMAGE32",
         MATRIX + ("kernels", "shell", "bench", "fuzz", "stress")),
    Knob("FUZZ_ITERATIONS", positive, "20000", "fuzz iterations per target", ("fuzz",)),
    Knob("FUZZ_SECONDS", seconds, "180", "fuzz time budget per target", ("fuzz",)),
    Knob("FUZZ_SEED", whole(0), "1", "the fuzzer's first seed", ("fuzz",)),
    Knob("STRESS_SECONDS", seconds, "20", "stress time per case and target", ("stress",)),
    Knob("LIBC", one_of("static", "shared"), "static",
         "how the project's robust-mutex programs link: static, or against the "
         "installed shared glibc of each ABI", MATRIX + ("shell",)),
    Knob("PROGRAM_TIMEOUT", seconds, "300", "seconds per guest program", MATRIX),
    Knob("MUTANTS", a_dir, "tests/mutants", "make mutate: the mutant catalogue",
         ("mutate", "check")),
    Knob("MUTANT", text_value, None, "make mutate: only these mutants, comma separated",
         ("mutate", "mutate-gen", "check")),
    Knob("SAMPLE", positive, None,
         "make mutate-gen: a fixed sample of N generated mutants (all when unset)",
         ("mutate-gen", "check")),
    Knob("RESULTS", text_value, None, "make merge: the shard output directories",
         ("merge",)),
    Knob("KCIDB_ORIGIN", text_value, "robust_futex_matrix",
         "the origin of the objects in kcidb.json", MATRIX + ("merge",)),
)

BY_NAME = {k.name: k for k in KNOBS}

# A knob meant for another command, easily given by mistake.
NEAR_MISSES = {"TARGET": "TARGETS", "TARGETS": "TARGET",
               "KERNEL": "KERNELS", "KERNELS": "KERNEL"}


def raw(name):
    """The knob's text, or None when unset or empty (make exports unset
    variables empty)."""
    return os.environ.get(name) or None


def get(name, default=None):
    """The knob's value, read and checked; `default` when unset."""
    knob = BY_NAME[name]
    text = raw(name)
    if text is None:
        return default
    try:
        return knob.read(text)
    except BadValue as e:
        raise Usage("%s=%s: %s" % (name, text, e))


def problems(command):
    """One line per knob of `command` whose value is bad."""
    found = []
    for knob in KNOBS:
        if command in knob.commands and raw(knob.name) is not None:
            try:
                knob.read(raw(knob.name))
            except BadValue as e:
                found.append("%s=%s: %s" % (knob.name, raw(knob.name), e))
    return found


def check(command):
    """Check every knob `command` reads; Usage (exit 2) if one is bad."""
    bad = problems(command)
    if bad:
        raise Usage("\nerror: ".join(bad))
    for name, other in NEAR_MISSES.items():
        if (raw(name) is not None and command not in BY_NAME[name].commands
                and command in BY_NAME[other].commands and raw(other) is None):
            warn("%s=%s is ignored by %s, which reads %s" % (name, raw(name), command, other))


def user_images(kernels, targets):
    """KERNELS=user needs an image of the right kind for every target."""
    if "user" not in kernels:
        for name in ("BZIMAGE", "BZIMAGE32"):
            if raw(name) is not None:
                warn("%s is set but the kernels are %s, not user: ignored"
                     % (name, ",".join(kernels)))
        return
    for t in targets:
        if not t.x86:
            raise Usage("KERNELS=user boots x86 kernels only (BZIMAGE, BZIMAGE32); "
                        "leave target %s out (TARGETS=x86)" % t.name)
        var = "BZIMAGE" if t.kconfig == "x86_64" else "BZIMAGE32"
        if raw(var) is None:
            raise Usage("target %s with the user kernel needs %s=<a %s bzImage>" % (
                t.name, var, "64-bit" if var == "BZIMAGE" else "32-bit"))
        get(var)


GROUPS = (("every command", ALL), ("every command that builds", BUILDS),
          ("every command that boots", BOOTS))


def readers(knob):
    for words, group in GROUPS:
        if set(knob.commands) == set(group):
            return words
    return " ".join(knob.commands)


def table():
    """The knob table as text (make knobs)."""
    return tables.format_table(["knob", "default", "read by", "what"], [
        [k.name, k.default or "-", readers(k), k.about] for k in KNOBS])


def cmd_knobs(args):
    """The knob table, or (--check COMMAND) a check of COMMAND's knobs."""
    if args.check:
        check(args.check)
        return 0
    print(table())
    return 0
