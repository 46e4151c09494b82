"""Shared libraries for dynamically linked guest programs.

For each program: its interpreter (PT_INTERP) and, transitively, every
library it needs (DT_NEEDED), found on the host for the program's ABI as
its loader would find them: DT_RPATH (when there is no DT_RUNPATH), then
DT_RUNPATH, then the ABI's directories (targets.Userland.lib_dirs). Each
system library keeps its host path in the initramfs, and every symbolic
link on the way (/lib32 -> usr/lib32 on a merged-/usr host,
/lib/ld-linux.so.2 -> /lib32/ld-linux.so.2) is copied as a link, so the
loader sees the same tree. A library found through RPATH or RUNPATH (the
user's own, often beside the program, where $ORIGIN means nothing in the
guest, or under /tmp, which the guest mounts over) goes to USER_LIB_DIR
instead. The guest has no ld.so.cache: the directories the libraries are
in become the programs' LD_LIBRARY_PATH (init reads /etc/rfm-library-path).

A library that cannot be found stops the run with the Debian package
that provides it: from the table below for glibc and the gcc runtime,
else apt-file when installed, else the package of another ABI's copy
(dpkg -S), named for this ABI's architecture.
"""
import os
import re
import shutil
import subprocess
from pathlib import PurePosixPath

from . import elf as elfreader
from .log import Fatal
from .targets import USERLANDS

# The sonames of glibc: in each ABI's glibc package (Userland.libc_package).
GLIBC_SONAMES = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                 "librt.so.1", "libresolv.so.2", "libutil.so.1", "libanl.so.1",
                 "libBrokenLocale.so.1", "libnss_files.so.2", "libnss_dns.so.2",
                 "libmvec.so.1", "libc_malloc_debug.so.0", "libthread_db.so.1",
                 "ld-linux-x86-64.so.2", "ld-linux.so.2", "ld-linux-x32.so.2")
# The gcc runtime: Userland.runtime_prefix + this ("lib32" + "gcc-s1").
GCC_RUNTIME = {"libgcc_s.so.1": "gcc-s1", "libstdc++.so.6": "stdc++6",
               "libatomic.so.1": "atomic1", "libgomp.so.1": "gomp1",
               "libquadmath.so.0": "quadmath0", "libitm.so.1": "itm1",
               "libasan.so.8": "asan8", "libubsan.so.1": "ubsan1"}
# glibc loads libgcc_s at run time (pthread_exit, pthread_cancel unwind
# with it): not in DT_NEEDED, so it is added to a closure holding libc.
LIBC_DLOPENS = ("libgcc_s.so.1",)
USER_LIB_DIR = "/usr/local/lib/rfm"


class MissingLibrary(Fatal):
    pass


def _expand(directory, origin):
    for token in ("${ORIGIN}", "$ORIGIN"):
        directory = directory.replace(token, origin)
    return directory


def find_library(soname, user, rpath=(), runpath=(), origin="/"):
    """The host path of `soname` for `user`'s ABI, as its loader finds it
    (without the host's ld.so.cache), or None."""
    dirs = ([] if runpath else list(rpath)) + list(runpath)
    dirs = [_expand(d, origin) for d in dirs] + list(user.lib_dirs)
    for d in dirs:
        path = os.path.join(d, soname)
        if os.path.isfile(path):
            found = elfreader.read(path)
            if found is not None and found.kind == user.elf:
                return path
    return None


class Closure:
    """What dynamically linked programs of one ABI need in the initramfs:
    directories, symbolic links and files, each at its host path."""

    def __init__(self, user):
        self.user = user
        self.dirs, self.links, self.files = set(), {}, set()
        self.user_libs = {}        # {path in the image: host path}
        self.library_path = []     # directories libraries were found in
        self.libc = None           # the host path of libc.so.6, if needed

    def add_program(self, path, label):
        """Add what the program at `path` needs; `label` names it in errors."""
        program = elfreader.read(path)
        if program is None or not program.dynamic:
            return
        host = program.interp if os.path.isfile(program.interp) else None
        if host is None and not self.user.x86:
            # A cross ABI's loader is not at its path on this host but in
            # the ABI's own directories (/usr/<triple>/lib): it goes to its
            # path in the image from there.
            host = find_library(os.path.basename(program.interp), self.user)
        loader = elfreader.read(host) if host else None
        if loader is None or loader.kind != self.user.elf:
            raise MissingLibrary(self._missing(os.path.basename(program.interp),
                                               label, program.interp))
        if host == program.interp:
            self._add_path(program.interp)
        else:
            self._add_image_file(program.interp, host, label)
        self._add_needed(program, os.path.dirname(os.path.abspath(path)), label)

    def _add_needed(self, obj, origin, label, seen=None):
        seen = set() if seen is None else seen
        needed = list(obj.needed)
        if "libc.so.6" in needed:
            needed += [s for s in LIBC_DLOPENS
                       if find_library(s, self.user) is not None]
        for soname in needed:
            if soname in seen:
                continue
            seen.add(soname)
            path = (soname if "/" in soname else
                    find_library(soname, self.user, obj.rpath, obj.runpath, origin))
            if path is None:
                raise MissingLibrary(self._missing(soname, label))
            directory = os.path.dirname(path)
            if "/" not in soname and directory not in self.user.lib_dirs:
                self._add_user_lib(path, label)
                directory = USER_LIB_DIR
            else:
                self._add_path(path)
            if "/" not in soname and directory not in self.library_path:
                self.library_path.append(directory)
            if soname == "libc.so.6" and self.libc is None:
                self.libc = path
            lib = elfreader.read(path)
            self._add_needed(lib, os.path.dirname(path), label, seen)

    def _add_user_lib(self, path, label):
        self._add_image_file(os.path.join(USER_LIB_DIR, os.path.basename(path)), path, label)

    def _add_image_file(self, image, path, label):
        """The host file `path` at `image` in the initramfs."""
        real = os.path.realpath(path)
        if self.user_libs.setdefault(image, real) != real:
            raise Fatal("%s: two different libraries would be %s: %s and %s" % (
                label, image, self.user_libs[image], real))
        parts = PurePosixPath(image).parent.parts[1:]
        self.dirs.update("/" + "/".join(parts[:i + 1]) for i in range(len(parts)))

    def _add_path(self, path):
        """Record `path` with every symbolic link met on the way."""
        parts = PurePosixPath(os.path.normpath(path)).parts[1:]
        current = "/"
        for i, part in enumerate(parts):
            here = os.path.join(current, part)
            if os.path.islink(here):
                target = os.readlink(here)
                self.links[here] = target
                resolved = os.path.normpath(os.path.join(current, target))
                return self._add_path(os.path.join(resolved, *parts[i + 1:]))
            if i < len(parts) - 1:
                self.dirs.add(here)
            else:
                self.files.add(here)
            current = here
        return current

    def _missing(self, soname, label, path=None):
        where = path or ", ".join(self.user.lib_dirs)
        package, how = package_for(soname, self.user)
        if package:
            return ("%s needs %s (%s ABI), not found in %s: install the "
                    "package %s (%s): apt-get install %s" % (
                        label, soname, self.user.name, where, package, how, package))
        return ("%s needs %s (%s ABI), not found in %s, and no package is "
                "known for it (apt-get install apt-file && apt-file update "
                "&& apt-file search %s)" % (label, soname, self.user.name, where, soname))

    def cpio_spec(self):
        """gen_init_cpio lines: directories (parents first), links, files."""
        lines = ["dir %s 0755 0 0" % d for d in sorted(self.dirs)]
        lines += ["slink %s %s 0777 0 0" % (l, t) for l, t in sorted(self.links.items())]
        files = sorted([(f, f) for f in self.files] + list(self.user_libs.items()))
        lines += ["file %s %s %o 0 0" % (image, host, os.stat(host).st_mode & 0o777)
                  for image, host in files]
        return lines

    def host_files(self):
        return sorted(self.files | set(self.user_libs.values()))


def package_for(soname, user):
    """(Debian package, how it was found) for a library of `user`'s ABI,
    or (None, None)."""
    if soname in GLIBC_SONAMES:
        return user.libc_package, "glibc for %s" % user.name
    if soname in GCC_RUNTIME:
        return user.runtime_prefix + GCC_RUNTIME[soname], "gcc runtime for %s" % user.name
    if shutil.which("apt-file"):
        dirs = "|".join(re.escape(d) for d in user.lib_dirs)
        r = subprocess.run(["apt-file", "search", "--regexp",
                            "^(%s)/%s$" % (dirs, re.escape(soname))],
                           capture_output=True, text=True)
        packages = sorted({line.split(":", 1)[0] for line in r.stdout.splitlines()
                           if ":" in line})
        if packages:
            return " or ".join(packages), "apt-file"
    for other in USERLANDS.values():
        if other.elf == user.elf:
            continue
        path = find_library(soname, other)
        owner = dpkg_owner(path) if path else None
        if owner:
            name = owner.split(":")[0]
            return "%s:%s" % (name, user.deb_arch), "the %s copy, %s, comes from %s" % (
                other.name, path, owner)
    return None, None


def dpkg_owner(path):
    """The package that installed `path` (dpkg -S), trying the names a
    merged-/usr host gives it ("/lib32/x" and "/usr/lib32/x"), or None."""
    real = os.path.realpath(path)
    names = [path, real]
    for name in (path, real):
        if name.startswith("/usr/"):
            names.append(name[len("/usr"):])
        else:
            names.append("/usr" + name)
    for name in dict.fromkeys(names):
        r = subprocess.run(["dpkg-query", "-S", name], capture_output=True, text=True)
        if r.returncode == 0 and ": " in r.stdout:
            return r.stdout.splitlines()[0].split(": ", 1)[0].split(", ")[0]
    return None


def package_version(package):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""
