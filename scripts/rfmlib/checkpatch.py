"""make checkpatch: the tree's scripts/checkpatch.pl --strict on every
patch, the series' names against mainline's, every kernel variant's
patch stack and every mutant of the catalogue applying exactly. (make
sparse is sparse.py's.)"""
import os
import re
import subprocess

from . import compare, config, deps, names, tables, tree
from .log import Fatal
from .mutate import CATALOGUES, stale_mutants


def checkpatch(patch, tree_dir, allowed=None):
    """`tree_dir`'s scripts/checkpatch.pl --strict on `patch`: (its total
    line, the findings allowed, the findings refused, its output). Errors
    are refused; warnings and checks unless `allowed` names their type."""
    # checkpatch runs scripts/spdxcheck.py on new files with `python3`:
    # Debian's, which has the python3-ply and python3-git make deps
    # installs, not whatever python3 comes first in PATH.
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    r = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", "--show-types", str(patch)],
                       cwd=tree_dir, capture_output=True, text=True, env=env)
    if "Traceback" in r.stderr:
        raise Fatal("checkpatch's SPDX check could not run on %s:\n%s"
                    % (patch.name, r.stderr[-1500:]))
    found = re.findall(r"^(ERROR|WARNING|CHECK):(\w+):", r.stdout, re.M)
    refused = [f for f in found if f[0] == "ERROR" or f[1] not in (allowed or {})]
    summary = [line for line in r.stdout.splitlines() if line.startswith("total:")]
    return (summary[0] if summary else "checkpatch failed",
            [t for k, t in found if (k, t) not in refused], refused if summary else [("", "")],
            r.stdout)


def cmd_checkpatch(_args):
    """Errors fail; warnings and checks fail unless
    patches/checkpatch-allowed.txt names their type with a reason."""
    deps.ensure()
    pristine = tree.pristine_tree()
    allowed = dict(compare.load_rules(config.PATCHES / "checkpatch-allowed.txt"))
    rows, bad = [], 0
    for p in tree.read_series():
        total, justified, refused, output = checkpatch(p, pristine, allowed)
        rows.append([p.name, total, ", ".join("%s (allowed)" % t for t in justified) or "-"])
        if refused:
            bad += 1
            print(output)
    print(tables.format_table(["patch", "checkpatch --strict", "justified"], rows))
    print("checkpatch: %s" % ("%d patch(es) with unjustified findings" % bad if bad
                              else "clean"))
    clashes = names.check(tree.read_series())
    for line in clashes:
        print("names: %s" % line)
    print("names: %s" % ("%d clash(es) with mainline" % len(clashes) if clashes else
                         "no name of the series means something else in mainline"))
    misfits, variants = tree.variant_misfits(pristine, other_trees=True)
    for name, patch, why in misfits:
        print("variants: %s of kernel %s does not apply exactly:\n%s" % (patch.name, name, why))
    print("variants: %s" % ("%d kernel variant(s) whose patches no longer apply" % len(misfits)
                            if misfits else "the patches of every kernel variant (%s) apply "
                            "exactly" % ", ".join(variants)))
    stale = stale_mutants()
    for name, why in stale:
        print("mutants: %s does not apply exactly to its kernel:\n%s" % (name, why))
    print("mutants: %s" % ("%d of the catalogue no longer apply" % len(stale) if stale else
                           "every mutant of %s applies exactly" % " and ".join(CATALOGUES)))
    return 1 if bad or clashes or misfits or stale else 0
