"""make sparse: the kernel's semantic checker on what the series touches.

sparse (make C=2) runs on every .c file the series changes or adds, in the
series kernel and in stock, for the x86 kernel configs of TARGETS (x86_64
and i386 by default); a warning the series' files have that stock's do
not fails. Line numbers are left out of the
comparison: they move when a patch adds lines above a warning that was
there all along. A function the series renames keeps its findings:
patches/sparse-renamed.txt maps stock's name to the series' before the
comparison.
"""
import re

from . import config, deps, kbuild, knobs, tables, tree
from .log import Usage

SPARSE_CONFIGS = ("x86_64", "i386")
FINDING_RE = re.compile(r"\b(?:warning|error):")
LOCATION_RE = re.compile(r":\d+(?::\d+)?:")
# sparse names files by the tree's absolute path, which differs between
# the series' tree slot and the pristine tree stock is built from.
TREE_PREFIX_RE = re.compile(r"\S*/%s/" % re.escape(config.LINUX_TOPDIR))
RENAMED = config.PATCHES / "sparse-renamed.txt"


def load_renames(text):
    """[(stock name, series name)] from sparse-renamed.txt."""
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            old, new = line.split("\t")[:2]
            pairs.append((old, new))
    return pairs


def renamed(found, renames):
    """Stock's findings under the series' names: sparse quotes a function
    as 'name'."""
    out = set()
    for f in found:
        for old, new in renames:
            f = f.replace("'%s'" % old, "'%s'" % new)
        out.add(f)
    return out


def series_sources(patches):
    """The .c files the patches change or add."""
    return sorted({f for p in patches for f in tree.touched_files(p) if f.endswith(".c")})


def findings(log_text):
    """sparse's warnings and errors in a make C=2 log, tree-relative and
    without line numbers."""
    return {LOCATION_RE.sub(":", TREE_PREFIX_RE.sub("", line.strip()))
            for line in log_text.splitlines()
            if FINDING_RE.search(line) and not line.startswith("$ ")}


def run(configs=SPARSE_CONFIGS):
    """(text, new findings per config) of the series against stock."""
    series = tree.patches_for("all")
    sources = series_sources(series)
    rows, new = [], {}
    renames = load_renames(RENAMED.read_text()) if RENAMED.exists() else []
    for kc in configs:
        mine = findings(kbuild.sparse_check("series", series, kc, sources))
        stock = renamed(findings(kbuild.sparse_check("stock", [], kc, sources)), renames)
        new[kc] = sorted(mine - stock)
        rows.append([kc, str(len(mine)), str(len(stock)), str(len(new[kc]))])
    lines = ["sparse (make C=2) on %s" % " ".join(sources), "",
             tables.format_table(["config", "series", "stock", "new in the series"], rows)]
    for kc, found in new.items():
        lines += ["%s: %s" % (kc, f) for f in found]
    bad = sum(len(f) for f in new.values())
    lines.append("sparse: %s" % ("%d finding(s) stock's build lacks" % bad if bad else
                                 "no finding stock's build lacks"))
    return "\n".join(lines) + "\n", new


def cmd_sparse(_args):
    """sparse on the series' C files, against stock, for the x86 kernel
    configs of TARGETS."""
    deps.ensure()
    configs = [kc for kc in SPARSE_CONFIGS if any(t.kconfig == kc for t in knobs.get("TARGETS"))]
    if not configs:
        raise Usage("make sparse checks the x86 kernels: TARGETS names none (%s)"
                    % ",".join(t.name for t in knobs.get("TARGETS")))
    text, new = run(configs)
    print(text, end="")
    return 1 if any(new.values()) else 0
