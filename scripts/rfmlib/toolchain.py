"""Debian's cross gcc, for the targets clang does not build for us.

Debian 12's gcc-multilib (the x86 ABIs' -m32 and -mx32) conflicts with
every gcc-<triple> cross compiler, so the ARM targets use clang. MIPS
and s390 need gcc: the kernel is built with it (clang builds neither
Malta nor s390 kernels of 6.1 cleanly) and Debian's multilib layouts
(lib32, libn32 beside lib) are gcc's. So the two packages that conflict,
gcc-12-<triple> and cpp-12-<triple>, are downloaded by the project's
own apt and unpacked into the cache, never installed; everything they
use that does not conflict (binutils-<triple>, the cross libcs and
libgcc) is installed by make deps like any other package (deps.py).

The unpacked compiler finds its own cc1 beside it (gcc relocates its
prefix to where its driver is), libgcc in the host's
/usr/lib/gcc-cross (the prefix it was configured with), and the cross
libc through usr/<triple>, a link to the host's /usr/<triple>. A bin/
directory holds <triple>-gcc and links to the host's binutils, so that
with it on PATH CROSS_COMPILE=<triple>- serves a kernel build (and
ccache's wrapper of that gcc, before it on PATH, kbuild.py).
"""
import os
from pathlib import Path

from . import archive, atomic, config
from .log import Fatal, progress

GCC_VERSION = "12"
# What the unpacked compiler is made of (each for the triple).
PACKAGES = ("gcc-%s-%%s" % GCC_VERSION, "cpp-%s-%%s" % GCC_VERSION)
# The host's binutils-<triple> programs a kernel build calls by
# CROSS_COMPILE, linked into bin/.
BINUTILS = ("addr2line", "ar", "as", "ld", "ld.bfd", "nm", "objcopy", "objdump",
            "ranlib", "readelf", "size", "strings", "strip")


def packages(triple):
    return tuple(p % triple for p in PACKAGES)


def _root(triple):
    """The unpacked compiler of `triple`, in the cache, keyed by its
    packages' versions; downloaded and unpacked if it is not there."""
    found = [archive.newest(name, "amd64") for name in packages(triple)]
    key = "-".join(p.version.replace(":", "_") for p, _ in found[:1])
    root = config.cache_dir() / "toolchains" / ("gcc-%s-%s" % (triple, key))
    if (root / "bin" / ("%s-gcc" % triple)).exists():
        return root
    progress("toolchain", "%s-gcc-%s %s (unpacked into the cache)" % (
        triple, GCC_VERSION, found[0][0].version))
    with atomic.new_dir(root) as tmp:
        archive.unpack([deb for _, deb in found], tmp / "unpacked")
        usr = tmp / "unpacked" / "usr"
        # The cross libc the host has (libc6-dev-<arch>-cross), where the
        # relocated compiler looks for it.
        os.symlink("/usr/%s" % triple, usr / triple)
        (tmp / "bin").mkdir()
        os.symlink(Path("..") / "unpacked" / "usr" / "bin" / (
            "%s-gcc-%s" % (triple, GCC_VERSION)), tmp / "bin" / ("%s-gcc" % triple))
        os.symlink(Path("..") / "unpacked" / "usr" / "bin" / (
            "%s-cpp-%s" % (triple, GCC_VERSION)), tmp / "bin" / ("%s-cpp" % triple))
        for tool in BINUTILS:
            os.symlink("/usr/bin/%s-%s" % (triple, tool), tmp / "bin" / ("%s-%s" % (triple, tool)))
    return root


def _link_runtime(root, triple):
    """Link what the host's libgcc-12-dev-<arch>-cross packages (and their
    multilib ones) put in /usr/lib/gcc-cross/<triple>/12 (gcc's own
    headers, crt*.o, libgcc.a, the 32/ and n32/ directories) into the
    unpacked compiler's, where the relocated driver looks first; each
    time, since make deps may have installed more of them since."""
    host = Path("/usr/lib/gcc-cross") / triple / GCC_VERSION
    own = root / "unpacked" / "usr" / "lib" / "gcc-cross" / triple / GCC_VERSION
    for entry in sorted(host.iterdir()) if host.is_dir() else []:
        try:
            os.symlink(entry, own / entry.name)
        except FileExistsError:
            pass


def bin_dir(triple):
    root = _root(triple)
    _link_runtime(root, triple)
    path = root / "bin"
    missing = [t for t in ("as", "ld") if not (path / ("%s-%s" % (triple, t))).exists()]
    if missing:
        raise Fatal("%s: the host has no %s (binutils-%s: run `make deps` as root)" % (
            triple, ", ".join("%s-%s" % (triple, t) for t in missing), triple))
    return path


def gcc(triple):
    """The unpacked cross gcc of `triple`, as a path."""
    return str(bin_dir(triple) / ("%s-gcc" % triple))


def user_compiler(user):
    """The compiler command, as a list, for a userland's programs."""
    if user.gcc_triple:
        return [gcc(user.gcc_triple), user.cflag]
    return user.compiler()


def kernel_make_args(kconfig):
    """What make needs besides ARCH= to build a kernel of `kconfig`. A
    cross gcc's tools by name: kbuild.make_env() puts bin_dir() (and a
    ccache wrapper of its gcc) on make's PATH."""
    if kconfig.gcc_triple:
        return ["CROSS_COMPILE=%s-" % kconfig.gcc_triple]
    return kconfig.make_args()


def kernel_compiler(kconfig):
    """The compiler command, as a list, that builds a kernel of `kconfig`."""
    if kconfig.gcc_triple:
        return [gcc(kconfig.gcc_triple)]
    return kconfig.compiler()
