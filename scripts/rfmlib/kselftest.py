"""Mainline's own futex selftests, built for every ABI from a Debian tree.

tools/testing/selftests/futex/functional of the tree the `mainline`
variant builds (linux-source-7.3, downloaded into the cache, never
committed) is compiled here as its Makefile compiles it (the same flags,
dynamically linked: robust_list's vdso_unlock fixture finds the vDSO with
dlopen()), against that tree's exported UAPI headers, once per ABI. The
programs go into the guests as EXTRA programs do: `ksft-NAME.m64`,
`.m32`, `.mx32`, `.aarch64`, `.armhf` are one program `ksft-NAME`, so
each of its cases is a row with a cell on every target, compared across
targets and kernels as the project's own cases are.

The mails of upstream/ that add to these selftests are applied to a
copy of them first (selftest_source): every kernel runs the same
programs, the new tests too.

They are another suite's tests, with their own timing: init runs one
that fails a second time (the file RERUN_LIST names them), and each case
that fails again alone, up to three more times; the comparer reports a
case that passed on one run and failed on another as flaky, with all its
results (ktap.py, compare.py).
"""
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from . import atomic, config, knobs, toolchain, tree
from .guest import compiler_key
from .log import Fatal, progress
from .targets import KERNEL_VARIANTS, UPSTREAM

SELFTESTS = tree.SELFTESTS
SUITE_DIR = SELFTESTS + "/futex/functional"
# The rows' program names start so: they are mainline's, not the project's.
PREFIX = "ksft-"
# The Makefile's CFLAGS and LDLIBS, less what its checks add: LIBNUMA_VER_NO
# (no libnuma in the guests; futex_numa_mpol then leaves out what needs it).
CFLAGS = ["-g", "-O2", "-Wall", "-pthread", "-D_FILE_OFFSET_BITS=64", "-D_TIME_BITS=64",
          "-DLIBNUMA_VER_NO=1"]
LDLIBS = ["-lpthread", "-lrt"]
# The variant whose tree the selftests come from.
VARIANT = "mainline"
# Programs left out, with the reason: none run on a 6.1 kernel what the
# series does not claim to be (features newer than 6.1, outside robust
# futexes). A program listed here that the tree no longer has is an error.
EXCLUDED = {}
# Programs a compiler the project uses cannot build, with the reason: for
# such an ABI the program is a stub that reports one SKIP case, "(not
# built)", naming it, so the gap is a row of the matrix, never a silence.
# Any other build failure stops the run.
BUILD_GAPS = {}     # none since upstream/'s second mail: robust_list.c built with
                    # clang (Debian 12's gcc cross compilers conflict with
                    # gcc-multilib: targets.py, CROSS_CC)
STUB = r"""#include <stdio.h>
int main(void)
{
	puts("1..1");
	puts("ok 1 (not built) # SKIP %s");
	return 0;
}
"""


# SELFTESTS=robust: the programs about robust futexes and the exit of a
# PI owner, what the series touches (make check's set: the others, the
# generic wait, requeue, waitv, NUMA and private-hash tests, take most
# of the half minute the suite adds to a guest).
ROBUST = ("robust_list", "futex_lock_pi_exiting")


def wanted(kernels):
    """Which of the selftests the guests of a matrix of `kernels` run
    (SELFTESTS): "all", "robust", or None."""
    choice = knobs.get("SELFTESTS")
    if choice == "auto":
        return "all" if any(KERNEL_VARIANTS.get(k, {}).get("tree") == tree_package()
                            for k in kernels) else None
    return {"yes": "all", "robust": "robust"}.get(choice)


def tree_package():
    return KERNEL_VARIANTS[VARIANT]["tree"]


def programs(src):
    """The Makefile's TEST_GEN_PROGS, in its order."""
    text = (src / SUITE_DIR / "Makefile").read_text()
    m = re.search(r"^TEST_GEN_PROGS\s*:?=((?:.*\\\n)*.*)$", text, re.M)
    if not m:
        raise Fatal("%s/Makefile: no TEST_GEN_PROGS" % SUITE_DIR)
    names = m.group(1).replace("\\", " ").split()
    gone = sorted(set(EXCLUDED) - set(names))
    if gone:
        raise Fatal("kselftest.EXCLUDED names %s, which %s/Makefile no longer builds"
                    % (", ".join(gone), SUITE_DIR))
    return [n for n in names if n not in EXCLUDED]


def uapi_headers(src, version, arch):
    """The tree's UAPI headers for kernel ARCH `arch` (make
    headers_install), in the cache: the selftests' KHDR_INCLUDES."""
    out = config.cache_dir() / "kselftest" / version / ("headers-%s" % arch)
    if (out / "usr" / "include" / "linux" / "futex.h").is_file():
        return out / "usr" / "include"
    with config.cache_lock("kselftest-headers"):
        if (out / "usr" / "include" / "linux" / "futex.h").is_file():
            return out / "usr" / "include"
        progress("kselftest", "%s: make ARCH=%s headers_install" % (version, arch))
        with atomic.new_dir(out) as tmp:
            r = subprocess.run(["make", "-s", "-C", str(src), "O=%s" % tmp, "ARCH=%s" % arch,
                                "headers_install", "INSTALL_HDR_PATH=%s/usr" % tmp],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise Fatal("%s: make ARCH=%s headers_install failed:\n%s" % (
                    src, arch, (r.stdout + r.stderr)[-2000:]))
            # Only the headers are kept: the rest is make's scratch.
            for p in tmp.iterdir():
                if p.name != "usr":
                    subprocess.run(["rm", "-rf", str(p)], check=True)
    return out / "usr" / "include"


def selftest_mails():
    """The mails of upstream/ that add to the selftests: they touch
    nothing else (a mail that mixes the two is refused: its selftest could
    not be built apart from its kernel change)."""
    mails = []
    for mail in tree.extra_patches(UPSTREAM):
        files = tree.touched_files(mail)
        mine = {f for f in files if f.startswith(SELFTESTS + "/")}
        if mine and mine != files:
            raise Fatal("upstream/%s changes the selftests and %s: split it, the selftests "
                        "are built from the 7.3 tree with only the selftest mails applied"
                        % (mail.name, ", ".join(sorted(files - mine))))
        if mine:
            mails.append(mail)
    return mails


def selftest_source(src, version, package):
    """tools/testing/selftests (the futex suite and the harness) of the 7.3
    tree `src`, with the selftest mails of upstream/ applied: a copy in
    the cache, keyed by those mails. Every kernel of a matrix runs the
    same programs, so a new test fails on mainline where it passes on
    mainline-fix."""
    mails = selftest_mails()
    out = config.cache_dir() / "kselftest" / version / ("src-%s" % tree.patch_key(mails))
    if (out / "done").exists():
        return out
    with config.cache_lock("kselftest-src"):
        if (out / "done").exists():
            return out
        with atomic.new_dir(out) as tmp:
            dst = tmp / SELFTESTS
            dst.mkdir(parents=True)
            for suite in ("futex", "x86"):
                shutil.copytree(src / SELFTESTS / suite, dst / suite)
            for header in (src / SELFTESTS).glob("*.h"):
                shutil.copy2(header, dst / header.name)
            for mail in mails:
                progress("kselftest", "%s: applying upstream/%s" % (version, mail.name))
                tree.apply_patch(tmp, mail, package)
            (tmp / "done").write_text("")
    return out


# The x86 selftests the mails add (tools/testing/selftests/x86), built as
# that directory's Makefile builds them: its flags, its -m32/-m64 lists,
# the extra sources it names for a binary (thunks_32.S).
X86_DIR = SELFTESTS + "/x86"
X86_CFLAGS = ["-O2", "-g", "-std=gnu99", "-pthread", "-Wall", "-no-pie"]
X86_LDLIBS = ["-lrt", "-ldl", "-lm"]
X86_BITS = {"-m32": "32", "-m64": "64"}


def make_list(makefile, variable):
    """The words a Makefile assigns and appends to `variable`."""
    words = []
    for m in re.finditer(r"^%s\s*[:+]?=((?:.*\\\n)*.*)$" % re.escape(variable), makefile, re.M):
        words += m.group(1).replace("\\", " ").split()
    return words


def x86_programs(tests, user):
    """[(name, [sources])] of the x86 selftests the mails add that the x86
    Makefile builds for `user`'s bitness (none for x32 and ARM)."""
    bits = X86_BITS.get(user.cflag) if user.x86 else None
    added = sorted({Path(f).stem for m in selftest_mails() for f in tree.touched_files(m)
                    if f.startswith(X86_DIR + "/") and f.endswith(".c")})
    if not bits or not added:
        return []
    makefile = (tests / X86_DIR / "Makefile").read_text()
    built = set(make_list(makefile, "TARGETS_C_BOTHBITS")) | set(
        make_list(makefile, "TARGETS_C_%sBIT_ONLY" % bits))
    extra = dict(re.findall(r"\$\(eval \$\(call extra-files,([^,)]+),([^)]+)\)\)", makefile))
    x86 = tests / X86_DIR
    return [(name, [x86 / ("%s.c" % name)] + [x86 / f for f in extra.get(
        "%s_%s" % (name, bits), "").split()]) for name in added if name in built]


def build(user, which="all"):
    """The directory of mainline's futex selftests (`which`: "all", or
    "robust": ROBUST), with upstream/'s selftest mails and the x86 tests
    they add, built for `user`'s ABI: files PREFIX + NAME + "." +
    user.suffix."""
    package = tree_package()
    src = tree.pristine_tree(package)
    version = tree.source(package=package).version
    tests = selftest_source(src, version, package)
    suite = tests / SUITE_DIR
    include = ["-I", str(suite.parent / "include"), "-I", str(suite.parent.parent)]
    # (name, sources, flags, libraries) of each program
    builds = [(n, [suite / ("%s.c" % n)], CFLAGS + include, LDLIBS + list(user.ldlibs))
              for n in programs(tests) if which == "all" or n in ROBUST]
    builds += [(n, files, X86_CFLAGS + ["-I", str(suite.parent.parent)], X86_LDLIBS)
               for n, files in x86_programs(tests, user)]
    sources = sorted(suite.glob("*.c")) + sorted((suite.parent / "include").glob("*.h")) \
        + [suite.parent.parent / "kselftest_harness.h", suite.parent.parent / "kselftest.h"] \
        + [f for _, files, _, _ in builds for f in files]
    h = hashlib.sha256(("%s|%s|%s|%s" % (version, user.cflag, compiler_key(user), "|".join(
        "%s %s %s" % (n, " ".join(flags), " ".join(libs))
        for n, _, flags, libs in builds))).encode())
    for path in sources:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    out = config.cache_dir() / "kselftest" / version / ("%s-%s" % (user.name, h.hexdigest()[:16]))
    if (out / "done").exists():
        return out
    headers = uapi_headers(src, version, user.uapi_arch)
    progress("kselftest", "%s: %d selftest(s) of %s" % (user.name, len(builds), version))
    with atomic.new_dir(out) as tmp:
        for name, files, flags, libs in builds:
            dst = tmp / ("%s%s.%s" % (PREFIX, name, user.suffix))
            cmd = toolchain.user_compiler(user) + flags + ["-isystem", str(headers)] + [
                str(f) for f in files] + ["-o", str(dst)] + libs
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=files[0].parent)
            gap = BUILD_GAPS.get((name, user.cc))
            if r.returncode != 0 and gap:
                progress("kselftest", "%s: %s not built (%s): a SKIP row says so" % (
                    user.name, name, user.cc))
                stub = tmp / ("%s.stub.c" % name)
                stub.write_text(STUB % gap.replace('"', "'"))
                r = subprocess.run(toolchain.user_compiler(user) + [str(stub), "-o", str(dst)],
                                   capture_output=True, text=True)
                stub.unlink()
            if r.returncode != 0:
                raise Fatal("mainline's selftest %s (%s, %s) does not build:\n%s" % (
                    name, version, user.cflag, r.stderr[-3000:]))
        (tmp / "done").write_text("")
    return out
