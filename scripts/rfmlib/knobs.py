"""The knobs: every environment variable the driver reads, in one table.

Each row says what the knob means, its default, how its value is read and
which commands read it. main() checks every knob of a command before the
command does anything, so a bad value is one line, the same for every
command, and exit 2:

    error: JOBS=0: not a whole number greater than 0

A new knob is one row in KNOBS (and, if no reader below fits, a reader
function), read with knobs.get(NAME): its default is in the row, nowhere
else. docs/knobs.md holds the table as `make knobs` prints it (a host
test checks that). Make passes variables
given on its command line to the driver's environment, and an empty value
means the default (the Makefile exports some knobs empty when unset).
"""
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from . import bzimage as _bzimage
from . import steps as _steps
from . import tables
from . import targets as _targets
from .log import Usage, warn

# Commands by what they read (rfm command names; "check" is `make check`,
# checked once before its steps run).
BOOTS = ("run", "matrix-check", "check", "shell", "guest-selftest", "bench", "fuzz", "stress",
         "mutate", "mutate-gen", "perf-gate", "bisect-check", "lava-check", "lava-run",
         "coverage", "upstream-check")
MATRIX = ("run", "matrix-check", "check")
BUILDS = BOOTS + ("kernels", "abi", "sparse", "lava")
ALL = BUILDS + ("report", "checkpatch", "deps", "host-tests", "merge", "cache-key",
                "lava-import", "ci-check", "check-arm", "repin", "check-all")
# Those that read Debian's archive (the kernel tree, busybox, Debian's
# kernels and lava-server come through the project's own apt).
DOWNLOADS = BUILDS + ("deps", "checkpatch", "host-tests", "repin", "check-arm", "check-all")


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


def command_list(text):
    """DEPS_FOR: rfm commands, or tables of steps (check, check-arm, a job
    of CI's schedule)."""
    names = [w for w in text.replace(",", " ").split() if w]
    unknown = [w for w in names if w not in ALL and w not in _steps.TABLES]
    if not names or unknown:
        raise BadValue("%s; known: %s; or a job of the schedule (make check-all)" % (
            "unknown command(s) %s" % ", ".join(unknown) if unknown else "names no command",
            ", ".join(sorted(set(ALL)))))
    return tuple(names)


def job_list(text):
    """JOB: jobs of CI's schedule (steps.SCHEDULE), comma separated."""
    names = [w for w in text.replace(",", " ").split() if w]
    known = [j.name for j in _steps.SCHEDULE]
    unknown = [w for w in names if w not in known]
    if not names or unknown:
        raise BadValue("%s; the jobs: %s" % ("no job %s" % ", ".join(unknown) if unknown
                                              else "names no job", ", ".join(known)))
    return tuple(names)


def shard(text):
    """MUTANT_SHARD: K/N, the K-th of N parts."""
    k, slash, n = text.partition("/")
    if not (slash and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise BadValue("want K/N with 1 <= K <= N (the K-th of N parts)")
    return int(k), int(n)


def mirror(text):
    if not re.match(r"^(https?|file):/", text):
        raise BadValue("not an http://, https:// or file:/ URL of a Debian mirror")
    return text


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
    """One variable. Its default is text read like a given value (or a
    function giving that text, for what depends on the machine), with
    `per_command` overriding it for some commands; None: unset means
    "not given" (`shown` says what the command does then)."""
    name: str
    read: object        # text -> value; raises BadValue
    default: object     # text, a function returning text, or None
    about: str
    commands: tuple     # the rfm commands that read it
    per_command: tuple = ()   # ((command, default text), ...)
    shown: str = None   # the default as the table shows it, when not text


def _cpus():
    return str(os.cpu_count() or 1)


def _cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "robust-futex-matrix")


# The checkout: the defaults that are paths in it are read from here.
REPO = Path(__file__).resolve().parents[2]

KNOBS = (
    Knob("KERNELS", kernel_list, "series",
         "kernel variants, comma separated (docs/kernels.md); unset, with BZIMAGE or "
         "BZIMAGE32: user; merge's default: the kernels its shards ran",
         MATRIX + ("kernels", "bench", "fuzz", "stress", "merge", "cache-key", "lava",
                   "lava-check", "perf-gate"),
         per_command=(("matrix-check", "series,stock,baseline"),
                      ("perf-gate", "bench-exit,bench-exit-stock,bench-exit-mainline"),
                      ("lava", "series,stock,baseline"),
                      ("lava-check", "series,stock,baseline"),
                      ("bench", "series,stock,bench-1m"),
                      ("fuzz", "debug"), ("stress", "debug"), ("merge", None))),
    Knob("TARGETS", target_list, "x86",
         "targets, comma separated: " + ", ".join(t.name for t in _targets.TARGETS)
         + "; or a group: " + ", ".join(_targets.TARGET_GROUPS),
         MATRIX + ("kernels", "guest-selftest", "bench", "fuzz", "stress", "mutate",
                   "mutate-gen", "perf-gate", "merge", "cache-key", "bisect-check", "lava",
                   "lava-check", "abi", "deps", "check-arm", "sparse", "coverage",
                   "upstream-check"),
         per_command=(("bisect-check", "all"), ("lava", "all"), ("upstream-check", "all"))),
    Knob("TARGET", one_target, "x86_64", "the target of make shell", ("shell",)),
    Knob("KERNEL", one_kernel, "series", "the kernel variant of make shell", ("shell",)),
    Knob("EXTRA", extra_dir, None, "a directory of your own static test programs",
         MATRIX + ("shell",)),
    Knob("V", flag, "0", "1: the full build output", BUILDS),
    Knob("ACCEL", one_of("tcg", "kvm"), None, "QEMU's accelerator", BOOTS,
         per_command=(("shell", "tcg"), ("bisect-check", "tcg")),
         shown="KVM if a short probe boots under it, else tcg"),
    Knob("JOBS", positive, _cpus, "parallel builds and boots (a boot of CPUS vCPUs counts "
         "CPUS)", BUILDS,
         shown="the number of CPUs"),
    Knob("RFM_CACHE", dir_to_make, _cache, "the build cache", ALL,
         shown="$XDG_CACHE_HOME/robust-futex-matrix, else ~/.cache/robust-futex-matrix"),
    Knob("RFM_OUT", dir_to_make, lambda: str(REPO / "out"), "where results are written", ALL,
         shown="out"),
    Knob("BOOT_TIMEOUT", seconds, "60", "seconds from boot to the first result",
         BOOTS),
    Knob("RUN_TIMEOUT", seconds, "900", "seconds for a whole guest (make mutate: at "
         "most 240; fuzz and stress: their budget plus a margin)", BOOTS + ("lava",),
         per_command=(("bench", "1800"), ("perf-gate", "1800"))),
    Knob("GUEST_MEM", memory, "512M", "guest memory", BOOTS + ("lava",)),
    Knob("CPUS", positive, "1",
         "vCPUs of each guest (QEMU -smp, multi-threaded TCG; every kernel is SMP); "
         "-icount boots (bench, perf-gate) keep one: instruction counts are exact only "
         "on one vCPU", BOOTS + ("lava",), per_command=(("coverage", "2"),)),
    Knob("PREEMPT", one_of(*_targets.PREEMPT_MODELS), None,
         "the kernels' preemption model: " + ", ".join(_targets.PREEMPT_MODELS)
         + " (kconfig/preempt-MODEL.config; preempt= on Debian's PREEMPT_DYNAMIC kernels)",
         BUILDS + ("cache-key",),
         shown="each tree's own: none on 6.1, lazy on 7.3, Debian's dynamic voluntary"),
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
    Knob("BISECT_FROM", positive, "1", "make bisect-check: the first step built; the patches "
         "before it are applied, not checked (a series that grew at its end)", ("bisect-check",)),
    Knob("SELFTESTS", one_of("auto", "yes", "robust", "no"), "auto",
         "mainline's futex selftests (tools/testing/selftests/futex of the mainline "
         "variant's Debian tree, with the selftests upstream/'s mails add) in the guests, on "
         "every kernel: auto: all of them when KERNELS has a kernel of that tree (mainline, "
         "mainline-fix); robust: robust_list and futex_lock_pi_exiting only (and the mails' "
         "own)",
         MATRIX + ("upstream-check", "mutate")),
    Knob("LIBC", one_of("static", "shared"), "static",
         "how the project's robust-mutex programs link: static, or against the "
         "installed shared glibc of each ABI", MATRIX + ("shell", "upstream-check")),
    Knob("PROGRAM_TIMEOUT", seconds, "300", "seconds per guest program",
         MATRIX + ("upstream-check",)),
    Knob("UPSTREAM_MATRIX", directory, None,
         "make upstream-check: judge the matrix already in this directory (a run with "
         "mainline and mainline-fix on TARGETS) instead of booting its own",
         ("upstream-check",), shown="boot mainline and mainline-fix"),
    Knob("MUTANTS", a_dir, lambda: str(REPO / "tests" / "mutants"),
         "make mutate: the mutant catalogue", ("mutate", "check"), shown="tests/mutants"),
    Knob("MUTANT", text_value, None, "make mutate: only these mutants, comma separated",
         ("mutate", "mutate-gen", "check"), shown="all"),
    Knob("MUTANT_SHARD", shard, None,
         "make mutate, mutate-gen: K/N runs the K-th of N equal parts of the catalogue "
         "(every N-th mutant in build order, from the K-th), for jobs that must fit a time",
         ("mutate", "mutate-gen"), shown="the whole catalogue"),
    Knob("JOB", job_list, None, "make check-all: only these jobs of CI's schedule; make "
         "check-next: this job, not the one whose turn it is", ("check-all",),
         shown="every job (check-next: the one whose turn it is)"),
    Knob("CI_STARTED", whole(0), lambda: str(int(time.time())),
         "make check-next: when CI's run began (seconds since the epoch; .ci/run sets it)",
         ("check-all",), shown="now"),
    Knob("CI_MINUTES", positive, "90", "make check-next: CI's limit for the whole run",
         ("check-all",)),
    Knob("SAMPLE", positive, None,
         "make mutate-gen: a fixed sample of N generated mutants",
         ("mutate-gen", "check"), shown="all"),
    Knob("RESULTS", text_value, None, "make merge: the shard output directories",
         ("merge",)),
    Knob("LAVA_URL_BASE", text_value, None,
         "make lava: where the lab fetches out/lava/artifacts/ from (a URL ending "
         "before /artifacts)", ("lava",), shown="file://<RFM_OUT>/lava"),
    Knob("LAVA_LOGS", directory, None, "make lava-import: the directory of the jobs' "
         "logs, NAME.log for job NAME.yaml", ("lava-import",), shown="<RFM_OUT>/lava/logs"),
    Knob("DEPS_FOR", command_list, "check",
         "make deps: the commands whose packages it installs and downloads (rfm command "
         "names, or check, check-arm, a job of CI's schedule)", ("deps",)),
    Knob("DEBIAN_MIRROR", mirror, "http://deb.debian.org/debian",
         "the Debian mirror the project's own apt downloads from (bookworm, "
         "bookworm-updates)", DOWNLOADS),
    Knob("DEBIAN_SECURITY_MIRROR", mirror, "http://deb.debian.org/debian-security",
         "the mirror of bookworm-security", DOWNLOADS),
    Knob("KCIDB_ORIGIN", text_value, "robust_futex_matrix",
         "the origin of the objects in kcidb.json", MATRIX + ("merge", "upstream-check")),
)

BY_NAME = {k.name: k for k in KNOBS}

# A knob meant for another command, easily given by mistake.
NEAR_MISSES = {"TARGET": "TARGETS", "TARGETS": "TARGET",
               "KERNEL": "KERNELS", "KERNELS": "KERNEL"}


def raw(name):
    """The knob's text, or None when unset or empty (make exports unset
    variables empty)."""
    return os.environ.get(name) or None


# The command this run serves (cli.main sets it): per-command defaults.
_command = None


def serve(command):
    """Defaults from now on are `command`'s."""
    global _command
    _command = command


def serving():
    """The command this run serves (None outside cli.main)."""
    return _command


def default_text(knob, command=None):
    """The knob's default for `command` (else the current one), as text, or None."""
    by_command = dict(knob.per_command)
    d = by_command.get(command or _command, knob.default)
    return d() if callable(d) else d


def get(name):
    """The knob's value, read and checked; its default (from KNOBS) when
    unset, None when it has none."""
    knob = BY_NAME[name]
    text = raw(name)
    given = text is not None
    if not given:
        text = default_text(knob)
        if text is None:
            return None
    try:
        return knob.read(text)
    except BadValue as e:
        raise Usage("%s=%s%s: %s" % (name, text, "" if given else " (the default)", e))


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
          ("every command that boots", BOOTS),
          ("every command that reads Debian's archive", DOWNLOADS))


def readers(knob):
    for words, group in GROUPS:
        if set(knob.commands) == set(group):
            return words
    return " ".join(knob.commands)


def shown_default(knob):
    """The default column: the default, then each command's own."""
    base = knob.shown or (knob.default if isinstance(knob.default, str) else None) or "-"
    others = {}
    for command, d in knob.per_command:
        others.setdefault(d or "-", []).append(command)
    return base + "".join(" (%s: %s)" % (", ".join(cs), d) for d, cs in others.items())


def table(markdown=False):
    """The knob table as text (make knobs), or as Markdown (docs/knobs.md)."""
    rows = [[k.name, shown_default(k), readers(k), k.about] for k in KNOBS]
    if not markdown:
        return tables.format_table(["knob", "default", "read by", "what"], rows)
    return "".join("| %s |\n" % " | ".join(r) for r in
                   [["knob", "default", "read by", "what"], ["---"] * 4]
                   + [["`%s`" % r[0]] + r[1:] for r in rows])


def cmd_knobs(args):
    """The knob table (--markdown: as docs/knobs.md shows it), or (--check
    COMMAND) a check of COMMAND's knobs."""
    if args.check:
        check(args.check)
        return 0
    print(table(markdown=args.markdown), end="" if args.markdown else "\n")
    return 0
