"""Host packages: check what is missing; install it as root, or say how."""
import os
import shutil
import subprocess

from . import config
from .log import Fatal, progress

# Debian package -> why the matrix needs it.
PACKAGES = {
    "make": "the build",
    "gcc": "kernels and test programs",
    "libc6-dev": "static 64-bit test programs",
    "gcc-multilib": "static 32-bit test programs (-m32)",
    "flex": "kernel build (kconfig)",
    "bison": "kernel build (kconfig)",
    "bc": "kernel build",
    "libelf-dev": "kernel build (objtool on x86_64)",
    "xz-utils": "extracting linux-source",
    "perl": "kernel build scripts",
    "python3": "the driver, parser and comparer",
    "qemu-system-x86": "booting the guests",
    "qemu-system-arm": "booting the ARM guests (qemu-system-aarch64, -arm)",
    # Not gcc-aarch64-linux-gnu nor gcc-arm-linux-gnueabihf: Debian 12's
    # gcc-multilib conflicts with them (see targets.CROSS_CC).
    "clang": "cross-building the ARM kernels and programs",
    "binutils-aarch64-linux-gnu": "linking arm64 kernels and programs",
    "binutils-arm-linux-gnueabihf": "linking armhf kernels and programs",
    "libc6-dev-arm64-cross": "static arm64 test programs",
    "libc6-dev-armhf-cross": "static armhf test programs",
    "libgcc-12-dev-arm64-cross": "static arm64 test programs (libgcc)",
    "libgcc-12-dev-armhf-cross": "static armhf test programs (libgcc)",
    "busybox-static": "the guest shell (64-bit)",
    "libc6-dev-x32": "the x32 ABI (-mx32) in the ABI gate",
    "dwarves": "pahole, for the ABI layout report",
    "ccache": "kernel builds: a regenerated header a file does not use costs a cache hit",
    "lava-dispatcher": "make lava-check: LAVA's lava-run and job schema, offline",
    "sparse": "make sparse: the kernel's semantic checker on what the series touches",
    "python3-ply": "make checkpatch: the SPDX check of new files (scripts/spdxcheck.py)",
    "python3-git": "make checkpatch: the SPDX check of new files (scripts/spdxcheck.py)",
    "rsync": "make headers_install (the ABI gate)",
    "python3-yaml": "host tests: the CI files are read as CI reads them",
    "python3-jsonschema": "host tests: kcidb.json against KCIDB's schema",
    config.LINUX_SOURCE_PACKAGE: "the kernel tree",
}


def installed_version(package):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}",
                        package], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.startswith("install ok installed"):
        return None
    return r.stdout.split("\t", 1)[1]


def _wanted_spec(package):
    if package == config.LINUX_SOURCE_PACKAGE:
        return "%s=%s" % (package, config.LINUX_SOURCE_DEB_VERSION)
    return package


def missing_packages(extra=()):
    missing = []
    for package in list(PACKAGES) + list(extra):
        version = installed_version(package)
        if version is None:
            missing.append(_wanted_spec(package))
        elif (package == config.LINUX_SOURCE_PACKAGE
              and version != config.LINUX_SOURCE_DEB_VERSION):
            missing.append(_wanted_spec(package))
    return missing


# Installed without their recommends: lava-dispatcher's would bring a
# server's worth of packages that a job run offline does not use.
WITHOUT_RECOMMENDS = ("lava-dispatcher",)


def apt_install(specs):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "--allow-downgrades"]
    lean = [s for s in specs if s in WITHOUT_RECOMMENDS]
    plain = [s for s in specs if s not in lean]
    for cmd in ([["apt-get", "update", "-q"]]
                + ([install + plain] if plain else [])
                + ([install + ["--no-install-recommends"] + lean] if lean else [])):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        pinned = _wanted_spec(config.LINUX_SOURCE_PACKAGE)
        if r.returncode != 0 and pinned in specs and "was not found" in r.stderr:
            raise Fatal("%s is no longer in Debian's archive: the series is pinned to "
                        "that tree (LINUX_SOURCE_DEB_VERSION in scripts/rfmlib/config.py)"
                        % pinned)
        if r.returncode != 0:
            raise Fatal("%s failed:\n%s" % (" ".join(cmd),
                                             r.stdout[-2000:] + r.stderr[-2000:]))


# Foreign Debian architectures whose packages are downloaded (busybox for
# the i386 and ARM guests, Debian's own 686 kernel), not installed.
FOREIGN_ARCHS = ("i386", "arm64", "armhf")


def missing_foreign_archs():
    r = subprocess.run(["dpkg", "--print-foreign-architectures"],
                       capture_output=True, text=True)
    have = r.stdout.split()
    return [a for a in FOREIGN_ARCHS if a not in have]


def ensure_foreign_archs():
    """busybox for the i386 and ARM guests comes from Debian's archives of
    those architectures. Returns what is still missing."""
    missing = missing_foreign_archs()
    if not missing or os.geteuid() != 0:
        return missing
    for arch in missing:
        subprocess.run(["dpkg", "--add-architecture", arch], check=True)
    subprocess.run(["apt-get", "update", "-q"], check=True,
                   capture_output=True)
    return missing_foreign_archs()


def ensure(extra=()):
    """Install what is missing (as root), or print the apt-get line.
    `extra`: packages only some commands need (gnuplot for make bench)."""
    missing = missing_packages(extra)
    archs = ensure_foreign_archs()
    if not missing and not archs:
        return
    line = "apt-get update && apt-get install -y %s" % " ".join(missing)
    if os.geteuid() != 0:
        raise Fatal("missing packages; as root run:\n    %s%s" % (
            "".join("dpkg --add-architecture %s && " % a for a in archs),
            line))
    progress("deps", "installing: %s" % " ".join(missing))
    apt_install(missing)
    still = missing_packages(extra)
    if still:
        raise Fatal("still missing after apt-get: %s" % " ".join(still))


def require_commands(*names):
    gone = [n for n in names if shutil.which(n) is None]
    if gone:
        raise Fatal("command(s) not found: %s (run `make deps` as root)"
                    % ", ".join(gone))


def cmd_deps(_args):
    ensure()
    print("all packages present")
    return 0
