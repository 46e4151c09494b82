"""Configure and build a kernel, cached by what went into it.

A finished kernel lives in cache/kernels/<key>/, where the key covers the
tree version, the applied patches, the config fragments and the compiler.
If that directory exists nothing is built. Otherwise the build runs in a
build directory kept per (tree slot, config), so a changed patch rebuilds
only the objects it affects.
"""
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from . import atomic, config, knobs, procs, toolchain
from . import tree
from .log import Fatal, progress
from .targets import KERNEL_CONFIGS


def fragment_paths(kconfig, base_config=None):
    """The kconfig/ fragments of a build: on a distribution's config
    (`base_config`), without the tinyconfig-only ones."""
    names = kconfig.fragments + (() if base_config else kconfig.tiny_fragments)
    return [config.KCONFIG / f for f in names]


def requested_symbols(paths):
    """{CONFIG_X: value} from fragments; "n" for `# CONFIG_X is not set`."""
    want = {}
    for path in paths:
        for line in path.read_text().splitlines():
            m = re.match(r"^(CONFIG_\w+)=(.*)$", line.strip())
            if m:
                want[m.group(1)] = m.group(2)
                continue
            m = re.match(r"^# (CONFIG_\w+) is not set$", line.strip())
            if m:
                want[m.group(1)] = "n"
    return want


def missing_symbols(dotconfig_text, want):
    have = {}
    for line in dotconfig_text.splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            have[m.group(1)] = m.group(2)
    missing = []
    for sym, value in want.items():
        got = have.get(sym, "n")
        if got != value:
            missing.append("%s=%s (got %s)" % (sym, value, got))
    return missing


def _compiler_ident(cmd=("gcc",)):
    r = subprocess.run(list(cmd) + ["--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.stdout else "%s?" % cmd[0]


def compiler_ident(kconfig):
    """The compilers a kernel of this config is built with: the host's gcc
    (for host tools), and the cross compiler of an ARM config."""
    ident = _compiler_ident()
    if kconfig.cross:
        ident += "|" + _compiler_ident(toolchain.kernel_compiler(kconfig))
    return ident


# Bumped when the way kernels are built changes what an image can hold:
# every kernel cached before is built again. 2: assembler sources bypass
# ccache (see ccache_wrappers()); an image cached under 1 may hold an
# older kernel than its sources.
BUILD_RECIPE = 2


def kernel_key(kconfig, tree_key, extra_fragments=(), base_config=None, salt="",
               package=None):
    """`salt` keys a kernel apart from the same sources' usual one (make
    mutate's pinned reference); `package`: the Debian tree, when not the
    series' (its version is in the key either way)."""
    h = hashlib.sha256()
    h.update(("%s|%s|%s|%s\n" % (tree.source(package=package).version, tree_key,
                                 kconfig.arch, compiler_ident(kconfig))).encode())
    h.update(b"recipe\0%d" % BUILD_RECIPE)
    if salt:            # keyed as before when there is none
        h.update(b"salt\0" + salt.encode())
    if base_config:     # keyed as before when there is none
        h.update(b"base\0" + Path(base_config).read_bytes())
    for path in fragment_paths(kconfig, base_config) + list(extra_fragments):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


# What a kernel embeds about its build (uname -v, /proc/version), pinned:
# the same sources give the same image, so make mutate can tell a mutant
# whose image is the series' own without booting it.
REPRODUCIBLE = {"KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 2026",
                "KBUILD_BUILD_USER": "rfm", "KBUILD_BUILD_HOST": "rfm",
                "KBUILD_BUILD_VERSION": "1"}
# Debian's ccache: compiler names that run the compiler through the cache.
CCACHE_BIN = Path("/usr/lib/ccache")


# The commands whose builds ccache's preprocessor mode pays for.
PREPROCESSOR_MODE = ("mutate", "mutate-gen")


# What ccache's wrappers run for an assembler source: the compiler itself.
# ccache cannot see a file that `.incbin` takes in, and the boot image's
# arch/*/boot/compressed/piggy.S takes the compressed kernel that way; its
# text names only the kernel's sizes. In depend mode such a compile is
# cached, and a later kernel of the same compressed size got the earlier
# one's piggy.o: a mutant's bzImage was the series', byte for byte
# (2026-12-05). Assembler files are few and quick to build.
# (A C file may use .incbin too: kernel/configs.c and kernel/kheaders.c,
# which no config here builds.)
CCACHE_WRAPPER = """#!/bin/sh
# robust-futex-matrix: ccache, except for assembler sources (kbuild.py)
for arg; do
	case "$arg" in *.S|*.s) exec %(real)s "$@" ;; esac
done
exec %(ccache)s %(real)s "$@"
"""


def ccache_wrappers(cross_gcc=None):
    """A directory of wrappers, one per compiler Debian's ccache links
    (gcc, the cross gccs, clang), and `cross_gcc` (the path of a cross
    gcc unpacked into the cache, toolchain.py), each named as its
    compiler and running it through ccache, except for assembler
    sources. None without ccache."""
    ccache = shutil.which("ccache")
    if not CCACHE_BIN.is_dir() or not ccache:
        return None
    d = config.cache_dir() / "tools" / ("ccache-wrappers-%d" % BUILD_RECIPE)
    skip = {CCACHE_BIN.resolve(), d.resolve()}
    plain = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                            if p and Path(p).resolve() not in skip)
    d.mkdir(parents=True, exist_ok=True)
    made = set()
    compilers = [(link.name, shutil.which(link.name, path=plain))
                 for link in sorted(CCACHE_BIN.iterdir())]
    for name, real in compilers + ([(Path(cross_gcc).name, cross_gcc)] if cross_gcc else []):
        # Another ccache link further on PATH is no compiler: it would
        # run the wrapper again, for ever.
        if not real or Path(real).resolve() == Path(ccache).resolve():
            continue
        text = CCACHE_WRAPPER % {"real": shlex.quote(real), "ccache": shlex.quote(ccache)}
        w = d / name
        made.add(w.name)
        if not w.exists() or w.read_text() != text or not os.access(w, os.X_OK):
            tmp = atomic.tmp_path(w)
            tmp.write_text(text)
            tmp.chmod(0o755)        # before it is in place: a make may run it
            os.replace(tmp, w)
    toolchains = str(config.cache_dir() / "toolchains")
    for gone in d.iterdir():        # a compiler since removed
        if gone.name in made or gone.name.startswith("."):
            continue
        try:
            # Another build's cross gcc stays: a build running now finds
            # it first on its PATH (and the compiler itself after it).
            if toolchains in gone.read_text():
                continue
        except (OSError, UnicodeDecodeError):
            pass        # another build's cleanup took it first
        gone.unlink(missing_ok=True)
    return d


def make_env(kconfig=None):
    """make's environment: the pinned build identity, and ccache in front
    of gcc and clang (by PATH, so the compiler's name, hence every
    object's command line and the kernel's key, stay as they were; not
    for assembler sources, CCACHE_WRAPPER says why). A config built with
    a cross gcc unpacked into the cache (MIPS, PowerPC, s390) gets that
    toolchain's bin/ on PATH, behind the wrappers, which wrap its gcc too:
    its CROSS_COMPILE names the tools without a directory.

    For make mutate, ccache's preprocessor mode: a file that includes a
    regenerated header whose changed lines it does not use is a cache
    hit, and a syscall-table mutant regenerates headers most of the
    kernel includes. Every other build uses its depend mode: a miss costs
    no second preprocessor run, which made a cold tinyconfig kernel about
    40% slower here (42 objects of kernel/, 2026-12-05: 44 s of CPU
    without ccache, 64 s in preprocessor mode, 51 s in depend mode, 18 s
    warm); an unchanged file is a hit either way."""
    env = dict(os.environ, **REPRODUCIBLE)
    triple = kconfig.gcc_triple if kconfig else None
    if triple:
        env["PATH"] = "%s:%s" % (toolchain.bin_dir(triple), env.get("PATH", ""))
    wrappers = ccache_wrappers(toolchain.gcc(triple) if triple else None)
    if wrappers:
        env.update(PATH="%s:%s" % (wrappers, env.get("PATH", "")),
                   CCACHE_DIR=str(config.cache_dir() / "ccache"), CCACHE_MAXSIZE="8G")
        if knobs.serving() not in PREPROCESSOR_MODE:
            env["CCACHE_DEPEND"] = "1"
    return env


def _make(tree, build_dir, kconfig, args, log_path, label, hold=(), pause=None):
    """make in build_dir; `hold`: locks make and its children keep held;
    `pause`: procs.run()'s checkpoint, held while make runs."""
    cmd = (["make", "-C", str(tree), "O=%s" % build_dir, "ARCH=%s" % kconfig.arch]
           + toolchain.kernel_make_args(kconfig) + ["-j%d" % config.jobs()] + args)
    with open(log_path, "a") as log:
        log.write("$ %s\n" % " ".join(cmd))
        log.flush()
        if config.verbose():
            proc = procs.popen(cmd, hold=hold, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=make_env(kconfig))
            for line in proc.stdout:
                log.write(line)
                print(line, end="")
            rc = procs.wait(proc)
        else:
            rc = procs.run(cmd, hold=hold, stdout=log, stderr=subprocess.STDOUT,
                           pause=pause, env=make_env(kconfig)).returncode
    if rc != 0:
        tail = "".join(open(log_path).readlines()[-30:])
        raise Fatal("%s: `make %s` failed (log: %s):\n%s" % (
            label, " ".join(args), log_path, tail))


def configure(tree, build_dir, kconfig, extra_fragments, log_path, label, hold=(),
              base_config=None):
    """tinyconfig, or `base_config` (a distribution's config), then the
    fragments, then olddefconfig; every symbol they ask for must hold."""
    frags = fragment_paths(kconfig, base_config) + list(extra_fragments)
    if base_config:
        shutil.copyfile(base_config, build_dir / ".config")
    else:
        _make(tree, build_dir, kconfig, ["tinyconfig"], log_path, label, hold)
    merge = [str(tree / "scripts/kconfig/merge_config.sh"), "-m", "-O",
             str(build_dir), str(build_dir / ".config")] + [str(f) for f in frags]
    with open(log_path, "a") as log:
        r = procs.run(merge, hold=hold, cwd=tree, stdout=log, stderr=subprocess.STDOUT,
                      env=dict(os.environ, ARCH=kconfig.arch))
    if r.returncode != 0:
        raise Fatal("%s: merge_config.sh failed (log: %s)" % (label, log_path))
    _make(tree, build_dir, kconfig, ["olddefconfig"], log_path, label, hold)
    missing = missing_symbols((build_dir / ".config").read_text(),
                              requested_symbols(frags))
    if missing:
        raise Fatal("%s: the config lacks symbols the fragments ask for "
                    "(a dependency is missing?):\n    %s"
                    % (label, "\n    ".join(missing)))


def cached(kconfig_name, patches, extra_fragments=(), base_config=None, salt="",
           package=None, kconfig=None):
    """(key, directory) of the finished kernel for pristine + patches; the
    directory holds bzImage only if it was built. `kconfig`: the
    KernelConfig, when not KERNEL_CONFIGS[kconfig_name] (another cross
    compiler: targets.kernel_config())."""
    tree_key = tree.patch_key(patches) if patches else "pristine"
    key = kernel_key(kconfig or KERNEL_CONFIGS[kconfig_name], tree_key, extra_fragments,
                     base_config, salt, package)
    return key, config.cache_dir() / "kernels" / key


def build(tree_slot, patches, kconfig_name, extra_fragments=(),
          label=None, targets=None, base_config=None, salt="", package=None,
          kconfig=None):
    """Return the directory holding the built kernel (bzImage, .config).
    `package`: the Debian tree to build from, when not the series';
    `kconfig`: as for cached().

    The tree slot is only patched when the kernel is not in the cache, so
    a run whose kernels are all built never waits for another run's tree."""
    kconfig = kconfig or KERNEL_CONFIGS[kconfig_name]
    targets = targets or (Path(kconfig.image).name,)    # bzImage, Image, zImage
    label = label or "%s/%s" % (tree_slot, kconfig_name)
    key, done = cached(kconfig_name, patches, extra_fragments, base_config, salt, package,
                       kconfig)
    if (done / "bzImage").exists():
        progress("kernel", "%s: cached (%s)" % (label, key))
        return done
    src, _ = tree.variant_tree(tree_slot, patches, package)
    try:
        return build_in(src, tree_slot, kconfig, key, done, extra_fragments, label, targets,
                        base_config, package)
    finally:
        tree.release(tree_slot)   # built: other runs may re-patch the slot


def build_dir_of(tree_slot, kconfig, package=None):
    """The build directory kept for a tree slot and a kernel config."""
    return (config.cache_dir() / "build" / tree.source(package=package).version
            / tree_slot / kconfig.build_name)


def build_in(src, tree_slot, kconfig, key, done, extra_fragments, label, targets,
             base_config=None, package=None):
    """Build kernel `key` from the tree at `src` in the slot's build dir."""
    build_dir = build_dir_of(tree_slot, kconfig, package)
    build_dir.mkdir(parents=True, exist_ok=True)
    # One make at a time per build directory, across concurrent runs. make
    # and its children inherit the lock: if this run is killed, the next
    # one waits until the last of them has gone, then repairs the dir.
    with open(build_dir / ".rfm-lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress("build", "%s: waiting for another run using %s" % (label, build_dir))
            fcntl.flock(lock, fcntl.LOCK_EX)
        if (done / "bzImage").exists():
            progress("kernel", "%s: built by another run (%s)" % (label, key))
            return done
        prepare_build_dir(build_dir, src, label)
        done = _build_locked(src, build_dir, kconfig, key, done, extra_fragments,
                             label, targets, hold=[lock], base_config=base_config)
        (build_dir / BUILDING).unlink()
        return done


# In a build directory: the tree generation it was made from, and a marker
# present while make runs (left behind by a build that was killed).
GENERATION = "rfm-tree-generation"
BUILDING = "rfm-building"


def prepare_build_dir(build_dir, src_tree, label):
    """Make a kept build directory safe to build in again.

    A directory made from another generation of the tree (the tree was
    extracted or linked anew) is emptied: the tree's mtimes say nothing
    about its objects. After a build that was killed (the marker is still
    there), every file written since that build started is removed, since
    any of them may be half written yet newer than its sources; make
    builds them again."""
    gen = tree.generation(src_tree)
    gen_file, marker = build_dir / GENERATION, build_dir / BUILDING
    had = gen_file.read_text().strip() if gen_file.exists() else None
    if had is not None and had != gen:
        progress("build", "%s: the tree was made anew; starting %s over" % (label, build_dir))
        # Until it is empty the directory belongs to no generation: a run
        # killed while emptying it leaves it to be emptied again.
        atomic.write(gen_file, "(emptying)\n")
        _empty(build_dir, keep=(".rfm-lock", GENERATION))
    elif marker.exists():
        since = marker.stat().st_mtime
        stale = [p for p in _files(build_dir)
                 if p.name not in (".rfm-lock", BUILDING, GENERATION)
                 and p.lstat().st_mtime >= since]
        progress("build", "%s: an earlier build was interrupted; removing the %d file(s) "
                 "it wrote" % (label, len(stale)))
        for p in stale:
            p.unlink()
    marker.write_text("%s\n" % time.time())
    atomic.write(gen_file, gen + "\n")


def _files(top):
    for dirpath, _, names in os.walk(top):
        for n in names:
            yield Path(dirpath) / n


def _empty(build_dir, keep=(".rfm-lock",)):
    for p in build_dir.iterdir():
        if p.name in keep:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def config_inputs(src, kconfig, extra_fragments, base_config=None):
    """What the .config of a build depends on: the fragments, the compiler,
    the tree (its generation) and the Kconfig files its patches changed.
    When these are the same as last time, the kept .config is reused and
    configuration (tinyconfig, merge, olddefconfig: tens of seconds) is
    skipped."""
    h = hashlib.sha256(("%s|%s|%s\n" % (kconfig.arch, compiler_ident(kconfig),
                                         tree.generation(src))).encode())
    if base_config:
        h.update(b"base\0" + Path(base_config).read_bytes())
    for path in fragment_paths(kconfig, base_config) + list(extra_fragments):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    for rel in tree.touched(src):
        if Path(rel).name.startswith("Kconfig"):
            h.update(rel.encode() + b"\0" + (src / rel).read_bytes())
    return h.hexdigest()


def _build_locked(tree, build_dir, kconfig, key, done, extra_fragments, label,
                  targets, hold=(), base_config=None):
    log_path = build_dir / "rfm-build.log"
    # Every kernel's log starts with its configuration's (kconfig's
    # warnings), also when an incremental build reuses the .config: the
    # warnings a later build is compared with must not depend on which
    # variant of a shared build directory was built first.
    config_log = build_dir / "rfm-config.log"
    log_path.write_text("")
    start = time.monotonic()
    inputs = config_inputs(tree, kconfig, extra_fragments, base_config)
    stamp = build_dir / "rfm-config-inputs"
    if (build_dir / ".config").exists() and stamp.exists() and stamp.read_text() == inputs:
        progress("config", "%s: unchanged" % label)
        if config_log.exists():
            shutil.copyfile(config_log, log_path)
    else:
        progress("config", "%s: %s + %s" % (
            label, base_config or "tinyconfig",
            " + ".join(f.name for f in fragment_paths(kconfig, base_config)
                       + list(extra_fragments))))
        stamp.unlink(missing_ok=True)
        configure(tree, build_dir, kconfig, extra_fragments, log_path, label, hold,
                  base_config)
        shutil.copyfile(log_path, config_log)
        stamp.write_text(inputs)
    progress("build", "%s: make %s (log: %s)" % (label, " ".join(targets), log_path))
    _make(tree, build_dir, kconfig, list(targets), log_path, label, hold, pause="build")

    # The same kernel may be built in another slot's directory at the same
    # time (bisect-check's last step is the series): the first one wins.
    with atomic.new_dir(done) as tmp:
        shutil.copy2(build_dir / kconfig.image, tmp / "bzImage")
        shutil.copy2(build_dir / ".config", tmp / "config")
        shutil.copy2(log_path, tmp / "build.log")
        (tmp / "build-dir").write_text(str(build_dir) + "\n")
        keep_gcov_notes(build_dir, tmp / GCOV_NOTES)
    progress("build", "%s: done in %.0fs (%s)" % (label, time.monotonic() - start, key))
    return done


# Beside a cached coverage kernel: the .gcno files of its build, in their
# places in the build tree. The build directory is shared with later
# builds of the slot; the guest's counters must meet these notes.
GCOV_NOTES = "gcno"


def profiled(note):
    """Is the object of this .gcno built with gcov now? A build directory
    shared by the coverage variant and the series keeps the notes of
    objects the series has since rebuilt without it."""
    cmd = note.parent / (".%s.cmd" % note.with_suffix(".o").name)
    return cmd.exists() and "-ftest-coverage" in cmd.read_text(errors="replace")


def keep_gcov_notes(build_dir, dest):
    """Copy the gcov notes (*.gcno) of the objects a build profiled, if
    any (a coverage variant's kernel), under `dest`."""
    for note in build_dir.rglob("*.gcno"):
        if not profiled(note):
            continue
        target = dest / note.relative_to(build_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)


def sparse_check(tree_slot, patches, kconfig_name, sources):
    """Run sparse (make C=2) on those of `sources` (tree-relative .c files)
    that the kernel of `patches` builds, in the slot's build directory
    (brought up to date first). The log is kept beside the cached kernel,
    so a second run with nothing changed only reads it. Returns its text."""
    kconfig = KERNEL_CONFIGS[kconfig_name]
    done = build(tree_slot, patches, kconfig_name)
    log_path = done / "sparse.log"
    if log_path.exists():
        return log_path.read_text(errors="replace")
    build_dir = build_dir_of(tree_slot, kconfig)
    build_dir.mkdir(parents=True, exist_ok=True)
    label = "%s/%s" % (tree_slot, kconfig_name)
    src, _ = tree.variant_tree(tree_slot, patches)
    try:
        with open(build_dir / ".rfm-lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            prepare_build_dir(build_dir, src, label)
            tmp_log = build_dir / "rfm-sparse.log"
            tmp_log.write_text("")
            inputs = config_inputs(src, kconfig, ())
            stamp = build_dir / "rfm-config-inputs"
            if not ((build_dir / ".config").exists() and stamp.exists()
                    and stamp.read_text() == inputs):
                stamp.unlink(missing_ok=True)
                configure(src, build_dir, kconfig, (), tmp_log, label, [lock])
                stamp.write_text(inputs)
            _make(src, build_dir, kconfig, [Path(kconfig.image).name], tmp_log, label, [lock])
            # Only the objects this config builds: the others may not even
            # compile here (robust_compat.c without CONFIG_COMPAT).
            objs = [s[:-2] + ".o" for s in sources if (build_dir / (s[:-2] + ".o")).exists()]
            if not objs:
                raise Fatal("%s: builds none of %s" % (label, " ".join(sources)))
            progress("sparse", "%s: make C=2 %s" % (label, " ".join(objs)))
            tmp_log.write_text("")
            _make(src, build_dir, kconfig, ["C=2", "CHECK=sparse"] + objs, tmp_log,
                  label, [lock])
            (build_dir / BUILDING).unlink()
            atomic.write(log_path, tmp_log.read_text(errors="replace"))
    finally:
        tree.release(tree_slot)
    return log_path.read_text(errors="replace")


WARNING_RE = re.compile(r"\bwarning:", re.I)
LOCATION_RE = re.compile(r":\d+(?::\d+)?:")


def build_warnings(log_text):
    """The warnings of a build log (compiler, objtool, checksyscalls,
    kconfig), each reduced to its file name and message: paths, line
    numbers and code offsets move when a patch adds lines above a warning
    that was there all along."""
    found = set()
    for line in log_text.splitlines():
        if not WARNING_RE.search(line) or line.startswith("$ "):
            continue
        line = LOCATION_RE.sub(":", line.strip())
        line = re.sub(r"\+0x[0-9a-f]+", "", line)     # objtool's offsets move too
        found.add(re.sub(r"(?:/[^\s:]*/)([^/\s:]+:)", r"\1", line))
    return found


def kernel_warnings(kernel_dir):
    """The warnings of the build that made a cached kernel, or None when
    its log was not kept (a kernel cached by an older version)."""
    log = kernel_dir / "build.log"
    return build_warnings(log.read_text(errors="replace")) if log.exists() else None
