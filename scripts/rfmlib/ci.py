"""The kernel cache key CI systems save and restore kernels under.

`rfm cache-key` prints one line for the kernels KERNELS and TARGETS
select, from the keys kbuild finds them by (tree version, patch diffs,
config fragments, Debian's config for the distro variants, compiler): the
line changes exactly when one of those
kernels would be built anew.
"""
import hashlib
import os
import shutil
import sys

from . import config, deps, kbuild, knobs, prebuilt, tree
from .log import Fatal
from .targets import KERNEL_VARIANTS, variant_tree


def kernel_keys(kernels, targets):
    """[(kernel, kconfig, key)] of the kernels a run of `kernels` on
    `targets` builds. Debian's and the user's kernels are not built, and a
    variant that cannot exist yet (baseline without a series) has none."""
    keys = []
    for kernel in kernels:
        if KERNEL_VARIANTS[kernel].get("prebuilt"):
            continue
        for kc in sorted({t.kconfig for t in targets}):
            patches, extra, base, kconfig = prebuilt.build_inputs(kernel, kc)
            if patches is None:
                break
            key, _ = kbuild.cached(kc, patches, extra, base, package=variant_tree(kernel),
                                   kconfig=kconfig)
            keys.append((kernel, kc, key))
    return keys


def cache_key(keys):
    """One line for a list of kernel_keys(): the tree version, readable,
    then a hash of every kernel's key."""
    h = hashlib.sha256("".join("%s/%s %s\n" % k for k in keys).encode())
    return "rfm-%s-%s" % (tree.source().version, h.hexdigest()[:16])


def prune(keys):
    """Remove from $RFM_CACHE/kernels every kernel `keys` does not name
    (for a CI cache restored under a fixed name; see .gitlab-ci.yml).
    Only a cache named by RFM_CACHE: the shared default is never pruned."""
    if not os.environ.get("RFM_CACHE"):
        raise Fatal("--prune works only on a cache named by RFM_CACHE=", status=2)
    wanted = {key for _, _, key in keys}
    kernels = config.cache_dir() / "kernels"
    removed = []
    for d in sorted(kernels.iterdir()) if kernels.is_dir() else []:
        if d.name not in wanted:
            shutil.rmtree(d)
            removed.append(d.name)
    return removed


def cmd_cache_key(args):
    """The kernel cache key of KERNELS (default: series) on TARGETS."""
    deps.require_commands("gcc")    # the compiler is part of every key
    tree.source(fetch=False)        # the key is known before the tree is downloaded
    kernels = knobs.get("KERNELS")
    keys = kernel_keys(kernels, knobs.get("TARGETS"))
    if args.list:
        for kernel, kc, key in keys:
            print("%s/%s %s" % (kernel, kc, key))
    if args.prune:
        for key in prune(keys):
            print("removed %s" % key, file=sys.stderr)
    if not args.list:
        print(cache_key(keys))
    return 0
