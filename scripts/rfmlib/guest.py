"""Guest user space: test programs, init, busybox, the initramfs.

Per user-space ABI (targets.USERLANDS: lp64, ilp32, ...) one image: /init,
/bin/busybox and /tests/*, the project's own programs plus any EXTRA ones
of that ABI, and the shared libraries of the dynamically linked ones
(sharedlibs.py). init is always static; the project's programs are static
unless LIBC=shared, which links those that use libc's robust mutexes
against the host's shared glibc of each ABI.
"""
import hashlib
import shutil
import subprocess
from pathlib import Path

from . import archive, atomic, config, elf, knobs, sharedlibs, toolchain
from .log import Fatal, Usage, checkpoint, progress
from .targets import USERLANDS
from .tree import pristine_tree

CFLAGS = ["-static", "-O2", "-g", "-Wall", "-Wextra", "-Werror"]
LIBC_MODES = ("static", "shared")
# LIBC=shared: a program whose source calls this goes through libc's
# robust mutexes, so it is the one linked against the shared libc.
ROBUST_MUTEX_API = "pthread_mutexattr_setrobust"
LIBRARY_PATH_FILE = "/etc/rfm-library-path"   # read by init
# Programs of another suite (mainline's selftests) that init runs a second
# time when they fail: one name a line, read by init.
RERUN_FILE = "/etc/rfm-rerun"
# Programs the cases run, which init does not (a 64-bit tracer for ia32).
HELPERS_DIR = "/helpers"


# Programs of tests/common that a suite also runs, for as long as it
# asks: the unlock stress is in every matrix for a fixed number of rounds,
# and in make stress for STRESS_SECONDS.
SUITE_EXTRAS = {"stress": ("unlock_stress",)}


def sources_for(user, suite="tests"):
    """(name, path) of every program of a suite for a userland. "tests":
    the shared cases in tests/common plus the ABI's own ones (tests64/,
    tests32/, testsx32/); any other suite is its own directory (bench/,
    fuzz/) and its SUITE_EXTRAS."""
    common = config.REPO / "tests" / "common"
    if suite != "tests":
        dirs = [config.REPO / suite] + [common / (n + ".c") for n in SUITE_EXTRAS.get(suite, ())]
    else:
        dirs = [common] + [config.REPO / d for d in user.tests_dirs]
    found = {}
    for d in dirs:
        for src in [d] if d.suffix == ".c" else sorted(d.glob("*.c")) if d.is_dir() else []:
            if src.stem in found:
                raise Fatal("test program %s is defined twice: %s and %s"
                            % (src.stem, found[src.stem], src))
            found[src.stem] = src
    return sorted(found.items())


def helper_sources(user):
    """(name, path) of the 64-bit helpers a userland's cases run."""
    return sorted((src.stem, src) for d in user.helpers64
                  for src in (config.REPO / d).glob("*.c"))


def _hash_files(paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for p in sorted(paths):
        h.update(str(p).encode() + b"\0" + Path(p).read_bytes())
    return h.hexdigest()[:16]


def shared_programs(tests, libc):
    """The names of the programs LIBC= links against the shared libc."""
    if libc == "static":
        return set()
    return {name for name, src in tests
            if ROBUST_MUTEX_API in Path(src).read_text(errors="replace")}


def compiler_key(user):
    """The cross compiler's version is part of a cross ABI's key; the
    host's gcc, as before, is not."""
    if user.cc == "gcc" and not user.gcc_triple:
        return ""
    cc = toolchain.user_compiler(user)[0]
    r = subprocess.run([cc, "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.stdout else cc


def build_programs(user, suite="tests", libc="static"):
    """Compile init and a suite's programs for a userland; cached by sources."""
    headers = sorted((config.REPO / "tests" / "include").glob("*.h"))
    init_src = config.REPO / "initramfs" / "init.c"
    tests = sources_for(user, suite)
    helpers = helper_sources(user) if suite == "tests" else []
    shared = shared_programs(tests, libc)
    key = _hash_files([init_src] + headers + [p for _, p in tests + helpers],
                      " ".join(CFLAGS) + user.cflag + suite + " ".join(sorted(shared))
                      + compiler_key(user))
    out = config.cache_dir() / "user" / ("%s-%s-%s" % (suite, user.name, key))
    if (out / "done").exists():
        return out
    progress("userland", "%s: init and %d %s program(s)%s" % (
        user.name, len(tests), suite,
        ", shared libc: %s" % " ".join(sorted(shared)) if shared else ""))
    if out.exists() and not (out / "done").exists():
        shutil.rmtree(out)   # half made by a version of this code before atomic.py
    with atomic.new_dir(out) as tmp:
        (tmp / "tests").mkdir()
        (tmp / "helpers").mkdir()
        checkpoint("userland")
        flags = CFLAGS + ["-I", str(config.REPO / "tests" / "include")]
        compiler = toolchain.user_compiler(user)
        for name, src, dst, cc in ([("init", init_src, tmp / "init", compiler)]
                                   + [(n, s, tmp / "tests" / n, compiler) for n, s in tests]
                                   + [(n, s, tmp / "helpers" / n, [user.cc, "-m64"])
                                      for n, s in helpers]):
            link = [f for f in flags if f != "-static"] if name in shared else flags
            r = subprocess.run(cc + link + ["-o", str(dst), str(src), "-lpthread"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise Fatal("compiling %s (%s) failed:\n%s" % (src, cc[-1], r.stderr))
        (tmp / "done").write_text("")
    return out


def elf_kind(path):
    """(class, machine[, "big-endian"], static) of an ELF program (its
    Userland.elf, then whether it is static), or None if not one."""
    found = elf.read(path)
    if found is None:
        return None
    return found.kind + (not found.dynamic,)


def _describe_kind(kind):
    for user in USERLANDS.values():
        if user.elf == kind:
            return "%s (%s)" % (user.name, user.cflag)
    return "ELF class %d, machine %d%s" % (kind[0], kind[1], ", big-endian" * (len(kind) > 2))


def extra_programs(extra_dir, user):
    """EXTRA=DIR: [(name in /tests, path)] of the ELF programs in DIR of
    this userland's ABI. NAME.m64, NAME.m32 and NAME.mx32 (the suffix is
    the gcc flag) are builds of one program NAME, so they share its rows;
    each must be of the ABI its suffix names. Other files keep their name."""
    if not extra_dir:
        return []
    d = Path(extra_dir)
    if not d.is_dir():
        raise Fatal("EXTRA=%s is not a directory" % extra_dir)
    by_suffix = {u.suffix: u for u in USERLANDS.values()}
    chosen = {}
    for path in sorted(d.iterdir()):
        if not path.is_file():
            continue
        kind = elf_kind(path)
        meant = by_suffix.get(path.suffix[1:])
        if meant is not None:
            if kind is None:
                raise Fatal("EXTRA program %s is not an ELF program, yet its "
                            "suffix .%s names a build" % (path, meant.suffix))
            if kind[:-1] != meant.elf:
                raise Fatal("EXTRA program %s is %s, but its suffix .%s says %s: "
                            "rename it or rebuild it with %s" % (
                                path, _describe_kind(kind[:-1]), meant.suffix,
                                _describe_kind(meant.elf), meant.cflag))
        if kind is None or kind[:-1] != user.elf:
            continue
        name = path.stem if meant is not None else path.name
        if name in chosen:
            raise Fatal("EXTRA programs %s and %s would both be /tests/%s on %s"
                        % (chosen[name], path, name, user.name))
        chosen[name] = path
    return sorted(chosen.items())


def libc_used(user, libc):
    """Which libc the project's programs of `user`'s ABI use: static or
    shared, the file, its Debian package and version."""
    if libc == "shared":
        path = sharedlibs.find_library("libc.so.6", user)
        if path is None:
            raise sharedlibs.MissingLibrary(
                "LIBC=shared: no libc.so.6 for %s in %s: apt-get install %s" % (
                    user.name, ", ".join(user.lib_dirs), user.libc_package))
    else:
        r = subprocess.run(toolchain.user_compiler(user) + ["-print-file-name=libc.a"],
                           capture_output=True, text=True)
        path = str(Path(r.stdout.strip()).resolve())
    package = sharedlibs.dpkg_owner(path) or "?"
    return {"link": libc, "path": path, "package": package,
            "version": sharedlibs.package_version(package) if package != "?" else ""}


def gen_init_cpio(tree):
    tool = config.cache_dir() / "tools" / "gen_init_cpio"
    src = tree / "usr" / "gen_init_cpio.c"
    if not tool.exists():
        with atomic.new_file(tool) as tmp:
            subprocess.run(["gcc", "-O2", "-o", str(tmp), str(src)], check=True)
    return tool


def busybox(user):
    """Debian's static busybox of the ABI's architecture, downloaded by the
    project's own apt (never installed) and unpacked into the cache; None
    where Debian has no port (big-endian MIPS): only make shell needs it."""
    if not user.busybox_arch:
        return None
    package, deb = archive.newest("busybox-static", user.busybox_arch)
    root = config.cache_dir() / "debs" / ("busybox-static-%s-%s" % (
        user.busybox_arch, package.version.replace(":", "_")))
    path = root / "bin" / "busybox"
    if not path.exists():
        progress("userland", "busybox-static:%s %s" % (user.busybox_arch, package.version))
        archive.unpack(deb, root)
    return path


def initrd_for(kernel_dir, cpio):
    """The initramfs a kernel boots: `cpio` itself, or, for a prebuilt
    kernel with a modules/ directory (prebuilt.MODULES), `cpio` followed
    by a second archive holding them in /lib/modules/rfm (the kernel
    unpacks one archive after the other; init loads them)."""
    modules = Path(kernel_dir) / "modules"
    if not modules.is_dir():
        return cpio
    files = sorted(modules.iterdir())
    key = _hash_files([cpio] + files)
    out = config.cache_dir() / "initramfs" / ("%s+modules-%s.cpio" % (Path(cpio).stem, key))
    if out.exists():
        return out
    tool = config.cache_dir() / "tools" / "gen_init_cpio"
    if not tool.exists():
        tool = gen_init_cpio(pristine_tree())
    spec = ["dir /lib 0755 0 0", "dir /lib/modules 0755 0 0",
            "dir /lib/modules/rfm 0755 0 0"]
    spec += ["file /lib/modules/rfm/%s %s 0644 0 0" % (f.name, f) for f in files]
    spec_path = out.with_suffix(".list")
    atomic.write(spec_path, "\n".join(spec) + "\n")
    with atomic.new_file(out) as tmp, open(tmp, "wb") as f:
        f.write(Path(cpio).read_bytes())
        f.flush()
        subprocess.run([str(tool), str(spec_path)], stdout=f, check=True)
    return out


def build_initramfs(tree, user, extra_dir=None, suite="tests", libc="static",
                    external_dir=None):
    """The cpio archive for a userland (built without root). `external_dir`:
    another suite's programs (mainline's selftests), as EXTRA's, which
    init runs again when they fail (RERUN_FILE lists them)."""
    programs = build_programs(user, suite, libc)
    extras = extra_programs(extra_dir, user)
    external = extra_programs(external_dir, user)
    bb = busybox(user)
    tests = [(p.name, p) for p in sorted((programs / "tests").iterdir())]
    helpers = [(p.name, p) for p in sorted((programs / "helpers").iterdir())] \
        if (programs / "helpers").is_dir() else []
    names = {name for name, _ in tests}
    for name, path in extras + external:
        if name in names:
            raise Fatal("EXTRA program %s has the name of a project test" % path)
        names.add(name)
    extras += external
    closure = sharedlibs.Closure(user)
    for name, path in tests + extras:
        closure.add_program(path, "%s (%s)" % (name, path))
    spec = ["dir /dev 0755 0 0", "nod /dev/console 0600 0 0 c 5 1",
            "dir /proc 0755 0 0", "dir /sys 0755 0 0", "dir /tmp 1777 0 0",
            "dir /bin 0755 0 0", "dir /tests 0755 0 0",
            "file /init %s 0755 0 0" % (programs / "init")]
    if bb:
        spec += ["file /bin/busybox %s 0755 0 0" % bb, "slink /bin/sh /bin/busybox 0777 0 0"]
    spec += [line for line in closure.cpio_spec() if line not in spec]
    for name, path in tests + extras:
        spec.append("file /tests/%s %s 0755 0 0" % (name, path))
    if helpers:
        spec.append("dir %s 0755 0 0" % HELPERS_DIR)
    for name, path in helpers:
        spec.append("file %s/%s %s 0755 0 0" % (HELPERS_DIR, name, path))
    library_path = ":".join(closure.library_path)
    rerun = "".join("%s\n" % name for name, _ in external)
    key = _hash_files([programs / "init"] + ([bb] if bb else [])
                      + [p for _, p in tests + extras + helpers]
                      + [Path(f) for f in closure.host_files()],
                      user.name + suite + "\n".join(spec) + library_path + rerun)
    cpio = config.cache_dir() / "initramfs" / ("%s-%s.cpio" % (user.name, key))
    result = cpio, [n for n, _ in tests], [n for n, _ in extras]
    if cpio.exists():
        return result
    cpio.parent.mkdir(parents=True, exist_ok=True)
    if library_path:
        path_file = cpio.with_suffix(".library-path")
        atomic.write(path_file, library_path + "\n")
        spec += ["dir /etc 0755 0 0",
                 "file %s %s 0644 0 0" % (LIBRARY_PATH_FILE, path_file)]
    if rerun:
        rerun_file = cpio.with_suffix(".rerun")
        atomic.write(rerun_file, rerun)
        if "dir /etc 0755 0 0" not in spec:
            spec.append("dir /etc 0755 0 0")
        spec.append("file %s %s 0644 0 0" % (RERUN_FILE, rerun_file))
    spec_path = cpio.with_suffix(".list")
    atomic.write(spec_path, "\n".join(spec) + "\n")
    with atomic.new_file(cpio) as tmp, open(tmp, "wb") as f:
        subprocess.run([str(gen_init_cpio(tree)), str(spec_path)], stdout=f,
                       check=True)
        checkpoint("initramfs")
    progress("initramfs", "%s: %d %s program(s)%s%s%s" % (
        user.name, len(tests), suite, ", %d extra" % (len(extras) - len(external))
        if len(extras) > len(external) else "",
        ", %d of another suite" % len(external) if external else "",
        ", %d shared librar(ies)" % len(closure.host_files()) if closure.host_files() else ""))
    return result


def extra_for(targets):
    """EXTRA must hold a program for at least one of the targets."""
    d = knobs.get("EXTRA")
    if d is None:
        return None
    found = 0
    for user in {t.userland: t.user for t in targets}.values():
        try:
            found += len(extra_programs(d, user))
        except Fatal as e:   # guest's own refusals (a dynamic program...)
            raise Usage("EXTRA=%s: %s" % (knobs.raw("EXTRA"), e))
    if not found:
        raise Usage("EXTRA=%s: no program for %s (x86_64 programs run on x86_64, "
                    "i386 ones on x86_64-ia32 and i386, x32 ones on x86_64-x32, "
                    "arm64 ones on arm64, armhf ones on arm64-aarch32 and armhf)"
                    % (knobs.raw("EXTRA"), ", ".join(t.name for t in targets)))
    return d
