"""Shards and their merge: a matrix run split across machines, joined.

A run's output directory (RFM_OUT) is a shard: run.json says what ran and,
in meta["provenance"], what it was made of (the Debian tree, the patch
series, the key of every kernel booted, the initramfs per user-space ABI,
the project's commit). `merge` joins shards into a new output directory
holding the union of their guests, exactly as one run over that union
would have left it, so the one comparer and the one reporter render it
(cli.cmd_report) and give the same matrix and exit status.

Refused, with the reason: shards of different trees, series, kernels,
initramfs or commits (status 1: they are not one run), a cell (kernel,
target) present in two shards with different results (status 1), and
what is not a shard at all (status 2). A kernel or target missing from
the union is not refused: the matrix shows it "not run", which is
incomplete (exit 2), never a pass.
"""
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from . import config, tree
from .log import Fatal, progress
from .targets import KERNEL_VARIANTS, select_kernels, variant_tree

# The files of a cell (out/<kernel>/<target>/) that the matrix is read
# from; two copies of a cell are the same cell if these and its record in
# run.json are the same.
CELL_FILES = ("results.ktap", "console.log")


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_commit():
    """The project's git commit, "-dirty" if the work tree has changes;
    "" outside a git checkout."""
    def git(*args):
        r = subprocess.run(["git", "-C", str(config.REPO)] + list(args),
                           capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except OSError:    # no git
        return ""
    if not head:
        return ""
    return head + ("-dirty" if dirty else "")


def provenance(kernels, targets, images, unavailable, initrds, compiler):
    """What a run was made of, for run.json's meta: a later merge checks
    that shards agree on it. `compiler`: the compiler's identity, or
    {kernel config: identity} (kbuild.compiler_ident: a cross-built
    config names its cross compiler too), or {(kernel, config): identity}
    (a variant may cross-build with its own compiler). A kernel's key is the name of its directory
    in the cache: kbuild's key (tree, patch diffs, fragments, compiler)
    for a built one, the package and version for Debian's."""
    series = tree.read_series()
    return {
        "tree": tree.source().record(),
        # The variants built from another Debian tree (mainline's).
        "trees": {k: tree.source(package=variant_tree(k)).record() for k in kernels
                  if k not in unavailable and variant_tree(k)},
        "series": {"key": tree.patch_key(series),
                   "patches": [{"name": p.name, "sha256": _sha256(p)} for p in series]},
        "kernels": {k: {kc: {"key": images[(k, kc)].name,
                             "compiler": "" if KERNEL_VARIANTS[k].get("prebuilt")
                             else compiler.get((k, kc), compiler.get(kc, ""))
                             if isinstance(compiler, dict) else compiler}
                        for kc in sorted({t.kconfig for t in targets})}
                    for k in kernels if k not in unavailable},
        # What each built kernel applied, for KCIDB's patchset_hash.
        "patches": {k: [{"name": p.name, "sha256": _sha256(p)}
                        for p in tree.patches_for(KERNEL_VARIANTS[k]["patches"])]
                    for k in kernels
                    if k not in unavailable and not KERNEL_VARIANTS[k].get("prebuilt")},
        "initramfs": {u: Path(cpio).name for u, (cpio, _) in initrds.items()},
        "source": source_commit(),
    }


class Shard:
    """One output directory given to merge: its run.json and its path."""

    def __init__(self, path):
        self.path = Path(path)
        state_path = self.path / "run.json"
        if not self.path.is_dir():
            raise Fatal("RESULTS: %s is not a directory" % self.path, status=2)
        if not state_path.is_file():
            raise Fatal("RESULTS: %s holds no run.json: not the output of a run"
                        % self.path, status=2)
        try:
            self.state = json.loads(state_path.read_text())
            self.meta = self.state["meta"]
            self.guests = self.state["guests"]
        except (ValueError, KeyError, TypeError):
            raise Fatal("RESULTS: %s/run.json is not a run's record" % self.path,
                        status=2)
        self.provenance = self.meta.get("provenance")
        if not isinstance(self.provenance, dict):
            raise Fatal("RESULTS: %s was made by a version of rfm that did not record "
                        "what the run was made of; run it again" % self.path, status=2)

    def cell(self, kernel, target):
        """(record, {file: bytes}, {other file: bytes}) of one guest: two
        copies are the same cell if the first two are equal."""
        record = self.guests[kernel][target]
        d = self.path / kernel / target
        files = {f: (d / f).read_bytes() for f in CELL_FILES if (d / f).is_file()}
        if record.get("status") == "complete" and "results.ktap" not in files:
            # A complete guest always leaves its results: a partial copy.
            raise Fatal("RESULTS: %s/%s/%s/results.ktap is missing although the guest "
                        "completed: an incomplete copy of the shard?"
                        % (self.path, kernel, target), status=2)
        extra = {p.name: p.read_bytes() for p in sorted(d.iterdir())
                 if p.is_file() and p.name not in files} if d.is_dir() else {}
        return record, files, extra


def _refuse(what, a, b, va, vb):
    raise Fatal("cannot merge: the shards differ in %s: %s in %s, %s in %s"
                % (what, va, a.path, vb, b.path))


def check_same_run(shards):
    """Every shard must come from the same tree, series, commit, kernels
    and initramfs; the first difference found is named."""
    first = shards[0]
    p0 = first.provenance
    for s in shards[1:]:
        p = s.provenance
        if p.get("tree") != p0.get("tree"):
            _refuse("the Debian tree", first, s, _show_tree(p0), _show_tree(p))
        if p.get("series") != p0.get("series"):
            _refuse("the patch series", first, s, _show_series(p0), _show_series(p))
        if p0.get("source") and p.get("source") and p0["source"] != p["source"]:
            _refuse("the project's commit", first, s, p0["source"], p["source"])
    # Kernels and initramfs: the same name must mean the same thing in
    # every shard that has it (x86_64 and x86_64-ia32 share a kernel).
    for field, what in (("kernels", "the kernel built for %s"),
                        ("patches", "the patches of %s"),
                        ("initramfs", "the initramfs of %s")):
        seen = {}
        for s in shards:
            for name, value in _flatten(s.provenance.get(field, {})):
                if name in seen and seen[name][1] != value:
                    _refuse(what % name, seen[name][0], s,
                            _show(seen[name][1]), _show(value))
                seen.setdefault(name, (s, value))


def _show_tree(prov):
    tree_ = prov.get("tree") or {}
    return "%s %s" % (tree_.get("package"), tree_.get("version"))


def _show_series(prov):
    series = prov.get("series") or {}
    return "series %s (%d patches)" % (series.get("key"), len(series.get("patches", [])))


def _flatten(d):
    """[(a/b, leaf)] of {a: {b: {"key": ...}}} or [(a, leaf)] of {a: leaf}."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict) and "key" not in v:
            out += [("%s/%s" % (k, k2), v2) for k2, v2 in v.items()]
        else:
            out.append((k, v))
    return out


def _show(value):
    if isinstance(value, dict):
        return "key %s" % value["key"]
    if isinstance(value, list):
        return ", ".join(p["name"] for p in value) or "no patches"
    return value


def _union_described(parts):
    """Union of "; "-joined descriptions (Debian's kernels are described
    per config, and a shard only knows its own configs')."""
    seen = []
    for p in parts:
        for piece in p.split("; "):
            if piece and piece not in seen:
                seen.append(piece)
    return "; ".join(sorted(seen))


def merged_meta(shards):
    metas = [s.meta for s in shards]
    described = {}
    for m in metas:
        for k, text in m.get("kernels", {}).items():
            described.setdefault(k, []).append(text)
    prov = dict(shards[0].provenance)
    for field in ("kernels", "patches", "initramfs"):
        union = {}
        for s in shards:
            for name, value in s.provenance.get(field, {}).items():
                if isinstance(value, dict) and field == "kernels":
                    union.setdefault(name, {}).update(value)
                else:
                    union[name] = value
        prov[field] = union
    return {
        "tree": metas[0].get("tree", ""),
        "accel": "+".join(sorted({m.get("accel", "?") for m in metas})),
        "kernels": {k: _union_described(v) for k, v in described.items()},
        # The latest shard's: a merge of the same shards is the same run.
        "date": max(m.get("date", "") for m in metas),
        "extra": ", ".join(sorted({m.get("extra", "") for m in metas} - {""})),
        "provenance": prov,
    }


def join(paths, out, kernels_spec, targets):
    """Write out/ as one run over the union of the shards at `paths`.

    Targets: `targets` (TARGETS, by default what every command runs: a
    shard forgotten is then "not run"); kernels: KERNELS, else every
    kernel some shard ran.
    """
    if not paths:
        raise Fatal("RESULTS names no shard: make merge RESULTS=\"dir1 dir2 ...\" "
                    "(each the RFM_OUT of a run)", status=2)
    out = Path(out).resolve()
    shards = []
    for p in paths:
        if Path(p).resolve() == out:
            raise Fatal("RESULTS: %s is also the output directory (RFM_OUT): give "
                        "the merge another one" % p, status=2)
        shards.append(Shard(p))
    check_same_run(shards)

    known = [k for s in shards for k in s.state.get("kernels", [])]
    kernels = select_kernels(kernels_spec or ",".join(known), ())
    if not kernels:
        raise Fatal("the shards ran no kernel; name the ones expected with KERNELS=",
                    status=2)
    names = {t.name for t in targets}

    unavailable, cells, origin = {}, {}, {}
    for s in shards:
        for k, why in s.state.get("unavailable", {}).items():
            unavailable.setdefault(k, why)
        for k, by_target in s.guests.items():
            for t in by_target:
                if k not in kernels or t not in names:
                    progress("merge", "%s: %s/%s is not in KERNELS/TARGETS: left out"
                             % (s.path, k, t))
                    continue
                cell = s.cell(k, t)
                if (k, t) in cells:
                    if cell[:2] != cells[(k, t)][:2]:
                        raise Fatal("cannot merge: %s/%s is in both %s and %s, with "
                                    "different results" % (k, t, origin[(k, t)], s.path))
                    continue
                cells[(k, t)], origin[(k, t)] = cell, s.path
    for k in unavailable:
        ran = [t for (kk, t) in cells if kk == k]
        if ran:
            raise Fatal("cannot merge: kernel %s is unavailable in one shard (%s) and "
                        "ran on %s in another" % (k, unavailable[k], ", ".join(ran)))

    # Everything is read before anything is written: a shard may lie in out/.
    for k in kernels:
        shutil.rmtree(out / k, ignore_errors=True)
    guests = {}
    for (k, t), (record, files, extra) in cells.items():
        d = out / k / t
        d.mkdir(parents=True, exist_ok=True)
        for name, data in list(files.items()) + list(extra.items()):
            (d / name).write_bytes(data)
        guests.setdefault(k, {})[t] = record
    for f in ("matrix.txt", "matrix.json", "junit.xml", "kcidb.json"):
        (out / f).unlink(missing_ok=True)
    state = {"meta": merged_meta(shards), "kernels": list(kernels),
             "targets": [t.name for t in targets],
             "unavailable": {k: v for k, v in unavailable.items() if k in kernels},
             "guests": guests,
             "merged_from": [{"dir": str(s.path), "date": s.meta.get("date", ""),
                              "cells": sorted("%s/%s" % (k, t) for (k, t) in cells
                                              if origin[(k, t)] == s.path)}
                             for s in shards]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(json.dumps(state, indent=1))
    progress("merge", "%d shard(s), %d guest(s) -> %s" % (len(shards), len(cells), out))
    return state

