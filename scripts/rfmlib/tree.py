"""The kernel tree: extract Debian's tarball once, then patched variants.

A variant tree ("series", "baseline", "bisect") is a hard-linked copy of
the pristine tree in which only the files a patch touches are real copies.
When the patch set changes, only the files touched by the old or the new
set are restored and re-patched, so their mtimes move and the variant's
reused build directory rebuilds exactly what changed.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import config, deps
from .log import Fatal, progress


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
    """Resolve a variant's "all"/"first"/"none" to patch files, or None
    when the variant cannot exist yet (baseline without a series)."""
    series = read_series()
    if variant_patches == "none":
        return []
    if variant_patches == "all":
        return series
    if variant_patches == "first":
        return series[:1] if series else None
    if variant_patches == "all+bench":
        bench = sorted((config.PATCHES / "bench").glob("*.patch"))
        return series + bench if series else None
    raise ValueError(variant_patches)


def patch_body(patch):
    """What a patch does to the tree: its text from the first file header
    on. The changelog, the subject's [PATCH n/m] and the file name are
    left out, so rewording or renumbering a patch does not rebuild
    kernels; the index lines still tie the key to the file contents."""
    text = patch.read_bytes()
    m = re.search(rb"^(?:diff --git |--- )", text, re.M)
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


def tree_root():
    return config.cache_dir() / "src" / config.LINUX_SOURCE_DEB_VERSION


def tree_version(tree):
    fields = {}
    for line in (tree / "Makefile").read_text().splitlines()[:8]:
        m = re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)",
                     line)
        if m:
            fields[m.group(1)] = m.group(2)
    return "%s.%s.%s%s" % (fields.get("VERSION"), fields.get("PATCHLEVEL"),
                           fields.get("SUBLEVEL"), fields.get("EXTRAVERSION", ""))


def check_installed_source():
    version = deps.installed_version(config.LINUX_SOURCE_PACKAGE)
    if version != config.LINUX_SOURCE_DEB_VERSION:
        raise Fatal(
            "the series was made for %s %s, but the installed version is %s.\n"
            "    apt-get install %s=%s" % (
                config.LINUX_SOURCE_PACKAGE, config.LINUX_SOURCE_DEB_VERSION,
                version or "none", config.LINUX_SOURCE_PACKAGE,
                config.LINUX_SOURCE_DEB_VERSION))
    if not config.LINUX_TARBALL.exists():
        raise Fatal("%s is missing (reinstall %s)" % (
            config.LINUX_TARBALL, config.LINUX_SOURCE_PACKAGE))


def pristine_tree():
    """Extract the tarball into the cache once; verify its version."""
    check_installed_source()
    root = tree_root()
    tree = root / "pristine" / config.LINUX_TOPDIR
    stamp = root / "pristine.stamp"
    st = config.LINUX_TARBALL.stat()
    ident = "%s %d %d" % (config.LINUX_TARBALL, st.st_size, int(st.st_mtime))
    if not (stamp.exists() and stamp.read_text() == ident and tree.is_dir()):
        progress("extract", "%s -> %s" % (config.LINUX_TARBALL, tree.parent))
        shutil.rmtree(root / "pristine", ignore_errors=True)
        stamp.unlink(missing_ok=True)
        (root / "pristine").mkdir(parents=True)
        subprocess.run(["tar", "-xf", str(config.LINUX_TARBALL),
                        "-C", str(root / "pristine")], check=True)
        stamp.write_text(ident)
    found = tree_version(tree)
    if found != config.LINUX_VERSION:
        raise Fatal("%s is Linux %s, the series was made for %s" % (
            tree, found, config.LINUX_VERSION))
    return tree


def apply_patch(tree, patch):
    """Apply with no fuzz and no offset, or fail naming the patch."""
    cmd = ["patch", "-p1", "--fuzz=0", "--forward", "--no-backup-if-mismatch",
           "-d", str(tree), "-i", str(patch)]
    dry = subprocess.run(cmd + ["--dry-run"], capture_output=True, text=True)
    inexact = [line for line in dry.stdout.splitlines()
               if "offset" in line or "fuzz" in line]
    if dry.returncode != 0 or inexact:
        raise Fatal("%s does not apply exactly to %s %s:\n%s" % (
            patch.name, config.LINUX_SOURCE_PACKAGE,
            config.LINUX_SOURCE_DEB_VERSION, (dry.stdout + dry.stderr)[-3000:]))
    subprocess.run(cmd, check=True, capture_output=True)


def _restore(pristine, tree, rel):
    """Make tree/rel a fresh, real (unlinked) copy of pristine/rel."""
    dst = tree / rel
    if dst.exists() or dst.is_symlink():
        dst.unlink()
    src = pristine / rel
    if src.exists():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        os.utime(dst)  # newer than any object built from the old content


def variant_tree(slot, patches):
    """The pristine tree (no patches) or tree slot `slot` with `patches`."""
    pristine = pristine_tree()
    if not patches:
        return pristine, "pristine"
    tree = tree_root() / slot / config.LINUX_TOPDIR
    stamp_path = tree_root() / ("%s.stamp" % slot)
    key = patch_key(patches)
    want_touched = set().union(*(touched_files(p) for p in patches))

    state = None
    if stamp_path.exists() and tree.is_dir():
        state = json.loads(stamp_path.read_text())
        if state.get("key") == key:
            return tree, key
    if state is None:
        progress("tree", "%s: linking a copy of the pristine tree" % slot)
        shutil.rmtree(tree.parent, ignore_errors=True)
        tree.parent.mkdir(parents=True)
        subprocess.run(["cp", "-al", str(pristine), str(tree)], check=True)
        old_touched = set()
    else:
        old_touched = set(state.get("touched", []))

    stamp_path.unlink(missing_ok=True)  # the tree is in flux until stamped
    for rel in sorted(old_touched | want_touched):
        _restore(pristine, tree, rel)
    progress("patch", "%s: applying %d patch(es)" % (slot, len(patches)))
    for patch in patches:
        apply_patch(tree, patch)
    stamp_path.write_text(json.dumps({
        "key": key, "patches": [p.name for p in patches],
        "touched": sorted(want_touched)}, indent=1))
    return tree, key
