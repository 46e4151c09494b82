"""Kernels built elsewhere, as kernel variants.

KERNELS=debian: Debian's own prebuilt kernels. The packages are downloaded
into the cache by the project's own apt (archive.py) and unpacked with
`dpkg-deb -x`; nothing is installed on this machine.

KERNELS=user (what BZIMAGE=path [BZIMAGE32=path] selects): a kernel the
user built. Its config comes from BZIMAGE_CONFIG if set, else the image
itself (CONFIG_IKCONFIG, read with the tree's scripts/extract-ikconfig),
else a `config` or `.config` file beside the image.

Either way the config is checked for what the guest needs built in (the
tests load no modules), and a missing symbol is named.
"""
import hashlib
import os
from pathlib import Path
import re
import shutil
import subprocess

from . import archive, atomic, config, kbuild, knobs, tree
from .log import Fatal, Usage, progress
from .targets import KERNEL_VARIANTS, kernel_config

# Kernel build (targets.KERNEL_CONFIGS name) -> Debian metapackage.
PACKAGES = {"x86_64": "linux-image-amd64", "i386": "linux-image-686:i386",
            "arm64": "linux-image-arm64:arm64", "arm": "linux-image-armmp:armhf"}

# Built in: the guest loads no modules, except those of MODULES below.
NEEDED = {
    "CONFIG_BLK_DEV_INITRD": "y", "CONFIG_BINFMT_ELF": "y",
    "CONFIG_DEVTMPFS": "y", "CONFIG_PROC_FS": "y", "CONFIG_SYSFS": "y",
    "CONFIG_TMPFS": "y", "CONFIG_FUTEX": "y", "CONFIG_FUTEX_PI": "y",
    "CONFIG_PID_NS": "y",
}
NEEDED_X86 = {"CONFIG_SERIAL_8250": "y", "CONFIG_SERIAL_8250_CONSOLE": "y"}
NEEDED_ARM = {"CONFIG_SERIAL_AMBA_PL011": "y", "CONFIG_SERIAL_AMBA_PL011_CONSOLE": "y",
              "CONFIG_VIRTIO": "y"}
NEEDED_BY_CONFIG = {
    "x86_64": dict(NEEDED_X86, CONFIG_IA32_EMULATION="y", CONFIG_X86_X32_ABI="y"),
    "i386": NEEDED_X86,
    "arm64": dict(NEEDED_ARM, CONFIG_COMPAT="y"),
    "arm": dict(NEEDED_ARM, CONFIG_VFPv3="y", CONFIG_NEON="y"),
}

# What the results port needs that Debian builds as a module: on ARM the
# virtio-mmio transport and the virtio console (hvc0). Their .ko files
# are taken from the package, in this (load) order, into modules/ beside
# the image; guest.initrd_for() appends them to the initramfs and init
# loads them before it opens the results port.
MODULES = {
    "arm64": (("CONFIG_VIRTIO_MMIO", "kernel/drivers/virtio/virtio_mmio.ko"),
              ("CONFIG_VIRTIO_CONSOLE", "kernel/drivers/char/virtio_console.ko")),
    "arm": (("CONFIG_VIRTIO_MMIO", "kernel/drivers/virtio/virtio_mmio.ko"),
            ("CONFIG_VIRTIO_CONSOLE", "kernel/drivers/char/virtio_console.ko")),
}


def needed(kconfig_name):
    return dict(NEEDED, **NEEDED_BY_CONFIG.get(kconfig_name, {}))


def copy_modules(kconfig_name, config_text, root, dest):
    """Copy the MODULES a kernel has as modules (=m) from its unpacked
    package `root` into dest/modules/, numbered in load order; a symbol
    neither built in nor a module is named."""
    have = {}
    for line in config_text.splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            k, v = line.split("=", 1)
            have[k] = v
    wanted = []
    for n, (symbol, rel) in enumerate(MODULES.get(kconfig_name, ()), 1):
        if have.get(symbol) == "y":
            continue
        if have.get(symbol) != "m":
            raise Fatal("the kernel has neither %s=y nor =m: no results port" % symbol)
        found = sorted(root.glob("lib/modules/*/" + rel))
        if len(found) != 1:
            raise Fatal("%s=m, but the package holds %d copies of %s"
                        % (symbol, len(found), rel))
        wanted.append((n, found[0]))
    if wanted:
        (dest / "modules").mkdir()
        for n, path in wanted:
            shutil.copy2(path, dest / "modules" / ("%02d-%s" % (n, path.name)))


def real_package(meta):
    """linux-image-amd64 -> (linux-image-6.1.0-57-amd64, amd64): the kernel
    package the metapackage depends on, in Debian's archive as the
    project's own apt reads it."""
    name, _, arch = meta.partition(":")
    arch = arch or "amd64"
    state = archive.State("bookworm", arch)
    state.ensure_lists()
    stanzas = state.stanzas(name)
    m = re.search(r"(linux-image-[\w.+-]+)", stanzas[0].get("Depends", "")) if stanzas else None
    if not m:
        raise Fatal("cannot resolve %s to a kernel package in Debian's archive%s"
                    % (meta, state.missing_note()))
    return m.group(1), arch


def fetch(kconfig_name, meta=None):
    """Directory with bzImage and config of Debian's kernel for a build
    (PACKAGES', or the metapackage `meta`)."""
    package, arch = real_package(meta or PACKAGES[kconfig_name])
    pkg, deb = archive.newest(package, arch)
    name = "%s_%s_%s" % (package, arch, pkg.version)
    done = config.cache_dir() / "debian-kernels" / name
    if not (done / "bzImage").exists():
        # Unpacked in a directory of this run's own; the kernel appears
        # only when whole (another run may do the same).
        with atomic.scratch_dir(done.with_name(name + ".unpack")) as dl:
            root = archive.unpack(deb, dl / "root")
            images = sorted((root / "boot").glob("vmlinuz-*"))
            configs = sorted((root / "boot").glob("config-*"))
            if not images or not configs:
                raise Fatal("%s holds no /boot/vmlinuz-* and config-*" % deb.name)
            with atomic.new_dir(done) as tmp:
                shutil.copy2(images[0], tmp / "bzImage")
                shutil.copy2(configs[0], tmp / "config")
                copy_modules(kconfig_name, configs[0].read_text(), root, tmp)
                (tmp / "release").write_text(images[0].name[len("vmlinuz-"):] + "\n")
                (tmp / "package").write_text("%s:%s %s\n" % (package, arch, pkg.version))
    missing = kbuild.missing_symbols((done / "config").read_text(), needed(kconfig_name))
    if missing:
        raise Fatal("Debian's %s lacks what the guest needs built in:\n    %s"
                    % (package, "\n    ".join(missing)))
    progress("kernel", "debian/%s: %s" % (kconfig_name, (done / "package").read_text().strip()))
    return done


def without_modules(config_text):
    """A config with every module (=m) left out: with CONFIG_MODULES off,
    Kconfig would build each of them in instead, thousands of drivers no
    guest loads."""
    return re.sub(r"^(CONFIG_\w+)=m$", r"# \1 is not set", config_text, flags=re.M)


def base_config(variant, kconfig_name):
    """The config a kernel variant starts from instead of tinyconfig:
    Debian's own, without its modules, for "base": "debian"
    (KERNELS=distro), else None."""
    if variant.get("base") != "debian":
        return None
    debian = fetch(kconfig_name, variant.get("base_package", {}).get(kconfig_name))
    path = debian / "config-without-modules"
    if not path.exists():
        atomic.write(path, without_modules((debian / "config").read_text()))
    return path


# Kernel build -> the variable naming the user's image for it.
USER_IMAGES = {"x86_64": "BZIMAGE", "i386": "BZIMAGE32"}


def user_config(image, tree):
    """The config of a user's kernel image, and where it came from."""
    explicit = os.environ.get("BZIMAGE_CONFIG")
    if explicit:    # what the user says wins
        if not Path(explicit).is_file():
            raise Fatal("BZIMAGE_CONFIG=%s: no such file" % explicit)
        return Path(explicit).read_text(), explicit
    r = subprocess.run(["sh", str(tree / "scripts" / "extract-ikconfig"), str(image)],
                       capture_output=True, text=True)
    if r.returncode == 0 and "CONFIG_" in r.stdout:
        return r.stdout, "the image (CONFIG_IKCONFIG)"
    for c in (image.parent / "config", image.parent / ".config"):
        if c.is_file():
            return c.read_text(), str(c)
    return None, None


def user_kernel(kconfig_name, tree, x32=False):
    """Directory with bzImage (and config) of the user's own kernel; `x32`:
    it must serve the x86_64-x32 target too. Refused (exit 2) if its
    config lacks what the guest needs."""
    if kconfig_name not in USER_IMAGES:
        raise Usage("KERNELS=user takes x86 kernels only (BZIMAGE, BZIMAGE32); "
                    "not for the %s targets" % kconfig_name)
    var = USER_IMAGES[kconfig_name]
    if not os.environ.get(var):
        raise Usage("KERNELS=user needs %s=path to a %s bzImage for these targets"
                    % (var, kconfig_name))
    image = Path(os.environ[var]).resolve()
    if not image.is_file():
        raise Usage("%s=%s: no such file" % (var, image))
    text, source = user_config(image, tree)
    # Keyed by what it holds: two runs with different images never share
    # a directory, and it appears whole.
    h = hashlib.sha256(image.read_bytes() + b"\0" + str(image).encode()
                       + b"\0" + (text or "").encode() + (source or "").encode())
    done = config.cache_dir() / "user-kernels" / ("%s-%s" % (kconfig_name, h.hexdigest()[:16]))
    if not (done / "bzImage").exists():
        with atomic.new_dir(done) as tmp:
            shutil.copy2(image, tmp / "bzImage")
            (tmp / "package").write_text("%s=%s\n" % (var, image))
            (tmp / "release").write_text("config from %s\n" % (source or "nowhere"))
            if text is not None:
                (tmp / "config").write_text(text)
    if text is None:
        progress("kernel", "user/%s: %s, config unknown: cannot check it (build with "
                 "CONFIG_IKCONFIG, or set BZIMAGE_CONFIG)" % (kconfig_name, image))
        return done
    want = needed(kconfig_name)
    if not x32:
        want.pop("CONFIG_X86_X32_ABI", None)   # only the x32 target needs it
    missing = kbuild.missing_symbols(text, want)
    if missing:
        raise Usage("%s=%s (config from %s) lacks what the guest needs built in: %s"
                    % (var, image, source, ", ".join(missing)))
    progress("kernel", "user/%s: %s (config from %s: ok)" % (kconfig_name, image, source))
    return done


def describe(image_dir):
    return "%s (%s)" % ((image_dir / "package").read_text().strip(),
                        (image_dir / "release").read_text().strip())


def build_inputs(kernel, kconfig):
    """(patches, extra fragments, base config, KernelConfig) of a built
    variant for one config, with the PREEMPT= model: what its build and
    its cache key (ci.kernel_keys) are made of. None for the patches of a
    variant that cannot exist yet (baseline without a series)."""
    variant = KERNEL_VARIANTS[kernel]
    extra = variant.get("fragments", {})
    return (tree.patches_for(variant["patches"]),
            [config.KCONFIG / f for f in extra.get(kconfig, ())],
            base_config(variant, kconfig),
            kernel_config(kconfig, kernel, knobs.get("PREEMPT")))
