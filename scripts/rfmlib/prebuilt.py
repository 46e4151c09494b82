"""Debian's own prebuilt kernels as a kernel variant (KERNELS=debian).

The packages are downloaded with `apt-get download` into the cache and
unpacked with `dpkg-deb -x`; nothing is installed on this machine. Their
config is checked for what the guest needs built in (the tests load no
modules), and a missing symbol is named.
"""
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


def describe(image_dir):
    return "%s (%s)" % ((image_dir / "package").read_text().strip(),
                        (image_dir / "release").read_text().strip())
