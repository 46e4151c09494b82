"""make sparse: the kernel's semantic checker on what the series touches.

sparse (make C=2) runs on every .c file the series changes or adds, in the
series kernel and in stock, for x86_64 and i386; a warning the series'
files have that stock's do not fails. Line numbers are left out of the
comparison: they move when a patch adds lines above a warning that was
there all along.
"""
import re

from . import config, deps, kbuild, tables, tree

SPARSE_CONFIGS = ("x86_64", "i386")
FINDING_RE = re.compile(r"\b(?:warning|error):")
LOCATION_RE = re.compile(r":\d+(?::\d+)?:")
# sparse names files by the tree's absolute path, which differs between
# the series' tree slot and the pristine tree stock is built from.
TREE_PREFIX_RE = re.compile(r"\S*/%s/" % re.escape(config.LINUX_TOPDIR))


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
    for kc in configs:
        mine = findings(kbuild.sparse_check("series", series, kc, sources))
        stock = findings(kbuild.sparse_check("stock", [], kc, sources))
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
    """sparse on the series' C files, x86_64 and i386, against stock."""
    deps.ensure()
    text, new = run()
    print(text, end="")
    return 1 if any(new.values()) else 0
