"""The kernel tree: extract Debian's tarball once, then patched variants.

A variant tree (a "slot": "series", "baseline", "bisect") is a hard-linked
copy of the pristine tree in which only the files a patch touches are real
copies. When the patch set changes, the new contents are computed apart
and only files whose content differs are replaced (with a new mtime), so
the slot's kept build directory recompiles exactly what changed. A slot is
locked by the run using it; every step leaves a state that the next run
either trusts (a stamp written last) or repairs.

Locks (flock, one file per tree): a run that uses a tree holds its lock
shared; one that changes it (extracts, links, patches) holds it
exclusive, so it waits until no other run uses the tree, and the others
wait until it is done. Children that write a tree inherit the lock.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import uuid

from . import archive, atomic, config, procs
from .log import Fatal, checkpoint, progress
from .targets import KERNEL_VARIANTS, UPSTREAM


def read_series():
    """patches/series in quilt order (comments and blank lines ignored)."""
    series = config.PATCHES / "series"
    if not series.exists():
        return []
    names = []
    for line in series.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            path = config.PATCHES / line
            if not path.exists():
                raise Fatal("patches/series names %s, which does not exist"
                            % line)
            names.append(path)
    return names


def patches_for(variant_patches):
    """Resolve a variant's "all"/"first"/"none", optionally "+DIR" (or
    several, "+DIR+DIR2"), to patch files, or None when the variant cannot
    exist yet (baseline without a series). "+DIR" adds patches/DIR/*.patch
    after them, the test-only patches of a variant (bench, exec-window,
    bench-exit, bench-signal)."""
    base, *extra_names = variant_patches.split("+")
    series = read_series()
    if base == "none":
        patches = []
    elif base == "all":
        patches = series
    elif base == "first":
        patches = series[:1] if series else None
    else:
        raise ValueError(variant_patches)
    if not extra_names:
        return patches
    extra = []
    for name in extra_names:
        found = kernel_patches(name)
        if not found:
            raise Fatal("%s holds no patch" % extra_dir(name))
        extra += found
    # Test-only patches on a series that does not exist yet: no variant.
    if patches is None or (base == "all" and not series):
        return None
    return patches + extra


# Where a patch's diff starts (a cover letter has none).
DIFF_START = re.compile(rb"^(?:diff --git |--- )", re.M)


def extra_dir(name):
    """Where the patches a variant's "+NAME" adds are: patches/NAME, or
    upstream/ for UPSTREAM."""
    return config.UPSTREAM if name == UPSTREAM else config.PATCHES / name


def extra_patches(name):
    """The patches of extra_dir(name), in order; of upstream/, the mails
    without their cover letter."""
    return [p for p in sorted(extra_dir(name).glob("*.patch"))
            if DIFF_START.search(p.read_bytes())]


# The kernel tree's selftests: a mail that changes nothing else is no
# part of the kernel it builds (kselftest.py builds them).
SELFTESTS = "tools/testing/selftests"


def kernel_patches(name):
    """extra_patches(name) that change the kernel: for upstream/, the
    mails that touch more than the selftests (so that a selftest's change
    rebuilds no kernel)."""
    return [p for p in extra_patches(name) if name != UPSTREAM or any(
        not f.startswith(SELFTESTS + "/") for f in touched_files(p))]


def patch_body(patch):
    """What a patch does to the tree: its text from the first file header
    on. The changelog, the subject's [PATCH n/m] and the file name are
    left out, so rewording or renumbering a patch does not rebuild
    kernels; the index lines still tie the key to the file contents."""
    text = patch.read_bytes()
    m = DIFF_START.search(text)
    return text[m.start():] if m else text


def patch_key(patches):
    h = hashlib.sha256()
    for p in patches:
        h.update(patch_body(p) + b"\0")
    return h.hexdigest()[:16]


def touched_files(patch):
    """Paths a patch creates, changes or deletes (relative, -p1)."""
    files = set()
    for line in patch.read_text(errors="replace").splitlines():
        m = re.match(r"^(?:---|\+\+\+) (?:a|b)/(\S+)", line)
        if m:
            files.add(m.group(1))
    return files


_SOURCES = {}


def source(fetch=True, package=None):
    """The archive.KernelSource of Debian tree `package` (a key of
    patches/trees.json; default: the one the series builds on), pinned, or
    the newest Debian serves once the pin is gone, decided once per run.
    `fetch=False`: without downloading anything (the cache key)."""
    package = package or config.LINUX_SOURCE_PACKAGE
    if package not in _SOURCES:
        _SOURCES[package] = archive.kernel_source(package, fetch=fetch)
    return _SOURCES[package]


def topdir(package=None):
    """The top directory of a Debian tree's tarball: the package's name."""
    return package or config.LINUX_TOPDIR


def tree_root(package=None):
    return config.cache_dir() / "src" / source(package=package).version


def tree_version(tree):
    fields = {}
    for line in (tree / "Makefile").read_text().splitlines()[:8]:
        m = re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)",
                     line)
        if m:
            fields[m.group(1)] = m.group(2)
    return "%s.%s.%s%s" % (fields.get("VERSION"), fields.get("PATCHLEVEL"),
                           fields.get("SUBLEVEL"), fields.get("EXTRAVERSION", ""))


def pristine_tree(package=None):
    """Extract the tree's tarball (from its .deb, kept in the cache) once;
    verify its version. The tree is held shared until the run ends (it is
    never changed in place: only extracted anew, which waits for every
    run using it). `package`: another Debian tree than the series' (the
    mainline oracle's)."""
    src = source(package=package)
    root = tree_root(package)
    top = topdir(package)
    tree = root / "pristine" / top
    stamp = root / "pristine.stamp"
    ident = "%s %s" % (src.deb.name, src.package.sha256)

    def extracted():
        return stamp.exists() and stamp.read_text() == ident and tree.is_dir()

    _hold(root, "pristine", exclusive=False)
    if not extracted():
        lock = _hold(root, "pristine", exclusive=True)
        if not extracted():
            progress("extract", "%s -> %s" % (src.deb.name, tree.parent))
            stamp.unlink(missing_ok=True)
            # Build directories made from the old tree (stock's) start over.
            atomic.write(root / "pristine.generation", uuid.uuid4().hex + "\n")
            shutil.rmtree(root / "pristine", ignore_errors=True)
            (root / "pristine").mkdir(parents=True)
            with atomic.scratch_dir(root / "deb") as unpacked:
                procs.run(["dpkg-deb", "-x", str(src.deb), str(unpacked)], hold=[lock],
                          check=True, pause="extract")
                tarballs = sorted(unpacked.glob("usr/src/%s.tar.*" % top))
                if len(tarballs) != 1:
                    raise Fatal("%s holds no /usr/src/%s.tar.*" % (src.deb.name, top))
                procs.run(["tar", "-xf", str(tarballs[0]), "-C", str(root / "pristine")],
                          hold=[lock], check=True, pause="extract")
            atomic.write(stamp, ident)
        _hold(root, "pristine", exclusive=False)
    found = tree_version(tree)
    if found != src.linux:
        raise Fatal("%s is Linux %s, but its package says %s" % (tree, found, src.linux))
    return tree


def _patch_cmd(tree, patch):
    return ["patch", "-p1", "--fuzz=0", "--forward", "--no-backup-if-mismatch",
            "-d", str(tree), "-i", str(patch)]


def inexact(tree, patch):
    """Why `patch` does not apply to `tree` with no fuzz and no offset
    (patch's own words), or "" when it does. Nothing is changed."""
    dry = procs.run(_patch_cmd(tree, patch) + ["--dry-run"], capture_output=True, text=True)
    off = [line for line in dry.stdout.splitlines() if "offset" in line or "fuzz" in line]
    return (dry.stdout + dry.stderr)[-3000:] if dry.returncode != 0 or off else ""


def apply_patch(tree, patch, package=None):
    """Apply with no fuzz and no offset, or fail naming the patch."""
    why = inexact(tree, patch)
    if why:
        raise Fatal("%s does not apply exactly to %s:\n%s" % (
            patch.name, source(package=package).describe(), why))
    procs.run(_patch_cmd(tree, patch), check=True, capture_output=True)


def _write_fresh(dst, data):
    """Replace dst with a real file holding data, atomically, with a new
    mtime: newer than any object built from its old content."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(".%s.rfm-tmp" % dst.name)
    tmp.write_bytes(data)
    os.replace(tmp, dst)


def _content(path):
    return path.read_bytes() if path.is_file() else None


def _read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _hold(root, slot, exclusive):
    """Hold tree `slot`'s lock, shared or exclusive, until release() or the
    end of the run; waits (saying so) while another run has it the other
    way. Returns the lock file, for children to inherit. A lock is the
    tree's own: "pristine" of the 6.1 tree is not 7.3's."""
    lock = _SLOT_LOCKS.get((root, slot))
    if lock is None:
        root.mkdir(parents=True, exist_ok=True)
        lock = _SLOT_LOCKS[(root, slot)] = open(root / ("%s.lock" % slot), "w")
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        fcntl.flock(lock, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        progress("tree", "%s: waiting for another run %s this tree" % (
            slot, "using" if exclusive else "changing"))
        fcntl.flock(lock, mode)
    return lock


def release(slot):
    """Let other runs change tree `slot` (this run is done with it), in
    whichever trees this run holds it."""
    for key in [k for k in _SLOT_LOCKS if k[1] == slot]:
        _SLOT_LOCKS.pop(key).close()


_SLOT_LOCKS = {}


def update_tree(pristine, root, slot, patches, package=None):
    """Bring tree slot `slot` under `root` to pristine + `patches`.

    New contents are computed in a scratch copy first, so a patch that does
    not apply leaves the tree as it was. Then each file that differs is
    replaced (atomically, with a new mtime) and every other file is left
    alone, mtime included: a kept build directory recompiles only what
    really changed. A journal of every file the slot has ever had patched
    is written before the tree is touched, so a run killed half way is
    repaired by the next one from the journal, never taken as done.
    """
    tree = root / slot / topdir(package)
    stamp_path = root / ("%s.stamp" % slot)
    journal_path = root / ("%s.journal" % slot)
    key = patch_key(patches)

    def stamped():
        state = _read_json(stamp_path)
        return state, bool(state and state.get("key") == key and tree.is_dir())

    _hold(root, slot, exclusive=False)
    state, ok = stamped()
    if ok:
        return tree, key
    lock = _hold(root, slot, exclusive=True)
    state, ok = stamped()
    if ok:
        _hold(root, slot, exclusive=False)
        return tree, key

    want_touched = set().union(*(touched_files(p) for p in patches))
    scratch = root / ("%s.scratch" % slot)
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for rel in want_touched:
        if (pristine / rel).is_file():
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pristine / rel, scratch / rel)
    progress("patch", "%s: applying %d patch(es)" % (slot, len(patches)))
    for patch in patches:
        apply_patch(scratch, patch, package)

    if not tree.is_dir():
        progress("tree", "%s: linking a copy of the pristine tree" % slot)
        # A new tree: build directories made from an older one of this
        # slot no longer describe it (see generation()). Said before the
        # tree appears, so a run killed in between cannot leave a new tree
        # under the old generation.
        atomic.write(root / ("%s.generation" % slot), uuid.uuid4().hex + "\n")
        shutil.rmtree(tree.parent, ignore_errors=True)
        tmp = root / ("%s.linking" % slot)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        procs.run(["cp", "-al", str(pristine), str(tmp / topdir(package))],
                  hold=[lock], check=True)
        os.replace(tmp, tree.parent)
    journal = set((_read_json(journal_path) or {}).get("touched", []))
    journal |= set((state or {}).get("touched", [])) | want_touched
    stamp_path.unlink(missing_ok=True)      # in flux until stamped again
    atomic.write(journal_path, json.dumps({"touched": sorted(journal)}, indent=1))

    changed = 0
    for n, rel in enumerate(sorted(journal)):
        if n == len(journal) // 2:
            checkpoint("tree-update")
        want = _content(scratch / rel) if rel in want_touched else _content(pristine / rel)
        dst = tree / rel
        dst.with_name(".%s.rfm-tmp" % dst.name).unlink(missing_ok=True)  # a killed run's
        if want is None:
            if dst.exists() or dst.is_symlink():
                dst.unlink()
                changed += 1
        elif _content(dst) != want or dst.is_symlink():
            _write_fresh(dst, want)
            changed += 1
    shutil.rmtree(scratch, ignore_errors=True)
    atomic.write(stamp_path, json.dumps({
        "key": key, "patches": [p.name for p in patches],
        "touched": sorted(want_touched)}, indent=1))
    _hold(root, slot, exclusive=False)
    progress("tree", "%s: %d file(s) changed" % (slot, changed))
    return tree, key


def variant_tree(slot, patches, package=None):
    """Tree slot `slot` of Debian tree `package` (default: the series')
    with `patches` (none: a linked copy of the pristine tree, which a slot
    shared with test-only patches needs, as their build directory must
    see one tree), or the pristine tree itself for slot "pristine"."""
    pristine = pristine_tree(package)
    if slot == "pristine":
        return pristine, "pristine"
    return update_tree(pristine, tree_root(package), slot, patches, package)


def generation(tree):
    """An id that changes whenever the tree at this path is made anew
    (extracted, or linked from the pristine tree): a build directory made
    from another generation has objects the tree's mtimes say nothing
    about, and must start over."""
    root, slot = tree.parent.parent, tree.parent.name
    path = root / ("%s.generation" % slot)
    return path.read_text().strip() if path.exists() else "unknown"


def touched(tree):
    """The files the patches of the tree's slot changed (none for the
    pristine tree)."""
    root, slot = tree.parent.parent, tree.parent.name
    state = _read_json(root / ("%s.stamp" % slot)) if slot != "pristine" else None
    return (state or {}).get("touched", [])


def first_misfit(pristine, patches):
    """(patch, why) of the first of `patches` that does not apply exactly
    to the tree `pristine` after the ones before it, or None. Nothing in
    the tree is changed (a scratch copy of the files they touch)."""
    with atomic.scratch_dir(config.cache_dir() / "src" / "fit") as scratch:
        for rel in set().union(*(touched_files(p) for p in patches)):
            if (pristine / rel).is_file():
                (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(pristine / rel, scratch / rel)
        for patch in patches:
            why = inexact(scratch, patch)
            if why:
                return patch, why
            procs.run(_patch_cmd(scratch, patch), check=True, capture_output=True)
    return None


def cmd_repin(_args):
    """make repin: pin patches/trees.json to the newest linux-source-6.1
    Debian serves, once the series and the test-only patches apply to it
    with no fuzz and no offset."""
    src = archive.kernel_source(config.LINUX_SOURCE_PACKAGE, newest=True)
    if archive.compare_versions(src.version, src.pinned) < 0:
        raise Fatal("repin: the newest %s Debian serves is %s, older than the pinned %s: "
                    "refused" % (src.package.name, src.version, src.pinned))
    if src.is_pinned:
        print("repin: %s is already pinned, and the newest Debian serves" % src.describe())
        return 0
    _SOURCES[config.LINUX_SOURCE_PACKAGE] = src
    misfits, stacks = variant_misfits(pristine_tree())
    if misfits:
        raise Fatal("repin: " + "\n".join(
            "%s does not apply exactly to %s %s (kernel %s):\n%s" % (
                patch.name, src.package.name, src.version, name, why)
            for name, patch, why in misfits))
    archive.write_pin(config.LINUX_SOURCE_PACKAGE, src.package)
    print("repin: %s %s -> %s (SHA-256 %s); the patches of every kernel variant (%s) "
          "apply exactly. Every kernel rebuilds on the next run: run make checkpatch "
          "(the mutants must apply too) and make check, then commit patches/trees.json"
          % (src.package.name, src.pinned, src.version, src.package.sha256,
             ", ".join(stacks)))
    return 0


def variant_misfits(pristine, other_trees=False):
    """What each kernel variant builds (the series, its prefixes, the
    test-only patches on top, exactly as they are stacked), checked
    against its tree: `pristine` for the series' own; with other_trees,
    the variants of another Debian tree (`tree`: mainline's test-only
    patches) against that tree too. ([(variant, patch, why)] of the
    stacks with a patch that does not apply exactly, [variant names
    checked])."""
    stacks = {}
    for name, variant in KERNEL_VARIANTS.items():
        patches = patches_for(variant["patches"]) if variant.get("patches") else None
        if patches and (other_trees or not variant.get("tree")):
            stacks.setdefault((variant.get("tree"), tuple(patches)), name)
    misfits = []
    for (package, patches), name in stacks.items():
        misfit = first_misfit(pristine if package is None else pristine_tree(package),
                              list(patches))
        if misfit:
            misfits.append((name, misfit[0], misfit[1]))
    return misfits, sorted(stacks.values())
