"""Kernels built elsewhere, as kernel variants.

KERNELS=debian: Debian's own prebuilt kernels. The packages are downloaded
with `apt-get download` into the cache and unpacked with `dpkg-deb -x`;
nothing is installed on this machine.

KERNELS=user (what BZIMAGE=path [BZIMAGE32=path] selects): a kernel the
user built. Its config comes from BZIMAGE_CONFIG if set, else the image
itself (CONFIG_IKCONFIG, read with the tree's scripts/extract-ikconfig),
else a `config` or `.config` file beside the image.

Either way the config is checked for what the guest needs built in (the
tests load no modules), and a missing symbol is named.
"""
import os
from pathlib import Path
import re
import shutil
import subprocess

from . import config, kbuild
from .log import Fatal, progress

# Kernel build (targets.KERNEL_CONFIGS name) -> Debian metapackage.
PACKAGES = {"x86_64": "linux-image-amd64", "i386": "linux-image-686:i386"}

# Built in, not modules: the guest has no modules to load.
NEEDED = {
    "CONFIG_SERIAL_8250": "y", "CONFIG_SERIAL_8250_CONSOLE": "y",
    "CONFIG_BLK_DEV_INITRD": "y", "CONFIG_BINFMT_ELF": "y",
    "CONFIG_DEVTMPFS": "y", "CONFIG_PROC_FS": "y", "CONFIG_SYSFS": "y",
    "CONFIG_TMPFS": "y", "CONFIG_FUTEX": "y", "CONFIG_FUTEX_PI": "y",
    "CONFIG_PID_NS": "y",
}
NEEDED_X86_64 = {"CONFIG_IA32_EMULATION": "y", "CONFIG_X86_X32_ABI": "y"}


def _run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Fatal("%s failed:\n%s" % (" ".join(cmd), (r.stdout + r.stderr)[-1500:]))
    return r.stdout


def real_package(meta):
    """linux-image-amd64 -> linux-image-6.1.0-57-amd64 (same arch suffix)."""
    out = _run(["apt-cache", "depends", meta])
    m = re.search(r"Depends: (linux-image-[\w.+-]+)", out)
    if not m:
        raise Fatal("cannot resolve %s to a kernel package (apt-get update?)" % meta)
    arch = meta.split(":", 1)[1] if ":" in meta else None
    return m.group(1) + (":" + arch if arch else "")


def fetch(kconfig_name):
    """Directory with bzImage and config of Debian's kernel for a build."""
    meta = PACKAGES[kconfig_name]
    package = real_package(meta)
    version = _run(["apt-cache", "policy", package])
    m = re.search(r"Candidate: (\S+)", version)
    version = m.group(1) if m else "?"
    name = "%s_%s" % (package.replace(":", "_"), version)
    done = config.cache_dir() / "debian-kernels" / name
    if not (done / "bzImage").exists():
        progress("debian", "apt-get download %s (%s)" % (package, version))
        dl = done.with_name(name + ".download")
        shutil.rmtree(dl, ignore_errors=True)
        dl.mkdir(parents=True)
        _run(["apt-get", "download", package], cwd=dl)
        debs = list(dl.glob("*.deb"))
        if len(debs) != 1:
            raise Fatal("apt-get download %s left %d packages" % (package, len(debs)))
        root = dl / "root"
        _run(["dpkg-deb", "-x", str(debs[0]), str(root)])
        images = sorted((root / "boot").glob("vmlinuz-*"))
        configs = sorted((root / "boot").glob("config-*"))
        if not images or not configs:
            raise Fatal("%s holds no /boot/vmlinuz-* and config-*" % debs[0].name)
        tmp = done.with_name(name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        shutil.copy2(images[0], tmp / "bzImage")
        shutil.copy2(configs[0], tmp / "config")
        (tmp / "release").write_text(images[0].name[len("vmlinuz-"):] + "\n")
        (tmp / "package").write_text("%s %s\n" % (package, version))
        shutil.rmtree(done, ignore_errors=True)
        tmp.rename(done)
        shutil.rmtree(dl, ignore_errors=True)
    needed = dict(NEEDED, **(NEEDED_X86_64 if kconfig_name == "x86_64" else {}))
    missing = kbuild.missing_symbols((done / "config").read_text(), needed)
    if missing:
        raise Fatal("Debian's %s lacks what the guest needs built in:\n    %s"
                    % (package, "\n    ".join(missing)))
    progress("kernel", "debian/%s: %s" % (kconfig_name, (done / "package").read_text().strip()))
    return done


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


def user_kernel(kconfig_name, tree):
    """Directory with bzImage (and config) of the user's own kernel."""
    var = USER_IMAGES[kconfig_name]
    if not os.environ.get(var):
        raise Fatal("KERNELS=user needs %s=path to a %s bzImage for these targets"
                    % (var, kconfig_name))
    image = Path(os.environ[var]).resolve()
    if not image.is_file():
        raise Fatal("%s=%s: no such file" % (var, image))
    text, source = user_config(image, tree)
    done = config.cache_dir() / "user-kernels" / kconfig_name
    shutil.rmtree(done, ignore_errors=True)
    done.mkdir(parents=True)
    shutil.copy2(image, done / "bzImage")
    (done / "package").write_text("%s=%s\n" % (var, image))
    (done / "release").write_text("config from %s\n" % (source or "nowhere"))
    if text is None:
        progress("kernel", "user/%s: %s, config unknown: cannot check it (build with "
                 "CONFIG_IKCONFIG, or set BZIMAGE_CONFIG)" % (kconfig_name, image))
        return done
    (done / "config").write_text(text)
    needed = dict(NEEDED, **(NEEDED_X86_64 if kconfig_name == "x86_64" else {}))
    needed.pop("CONFIG_X86_X32_ABI", None)   # only the x32 target needs it
    missing = kbuild.missing_symbols(text, needed)
    if missing:
        raise Fatal("%s=%s (config from %s) lacks what the guest needs built in:\n    %s"
                    % (var, image, source, "\n    ".join(missing)))
    progress("kernel", "user/%s: %s (config from %s: ok)" % (kconfig_name, image, source))
    return done


def describe(image_dir):
    return "%s (%s)" % ((image_dir / "package").read_text().strip(),
                        (image_dir / "release").read_text().strip())
