"""Guest user space: static test programs, init, busybox, the initramfs.

Per user-space ABI (targets.USERLANDS: lp64, ilp32, ...) one image: /init,
/bin/busybox and /tests/*, the project's own programs plus any EXTRA ones
of that ABI.
"""
import hashlib
import shutil
import struct
import subprocess
from pathlib import Path

from . import atomic, config
from .log import Fatal, checkpoint, progress

CFLAGS = ["-static", "-O2", "-g", "-Wall", "-Wextra", "-Werror"]


def sources_for(user, suite="tests"):
    """(name, path) of every program of a suite for a userland. "tests":
    the shared cases in tests/common plus the ABI's own ones in tests64/
    or tests32/; any other suite is its own directory (bench/, fuzz/)."""
    if suite != "tests":
        dirs = [config.REPO / suite]
    else:
        dirs = [config.REPO / "tests" / "common", config.REPO / user.tests_dir]
    found = {}
    for d in dirs:
        for src in sorted(d.glob("*.c")) if d.is_dir() else []:
            if src.stem in found:
                raise Fatal("test program %s is defined twice: %s and %s"
                            % (src.stem, found[src.stem], src))
            found[src.stem] = src
    return sorted(found.items())


def _hash_files(paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for p in sorted(paths):
        h.update(str(p).encode() + b"\0" + Path(p).read_bytes())
    return h.hexdigest()[:16]


def build_programs(user, suite="tests"):
    """Compile init and a suite's programs for a userland; cached by sources."""
    headers = sorted((config.REPO / "tests" / "include").glob("*.h"))
    init_src = config.REPO / "initramfs" / "init.c"
    tests = sources_for(user, suite)
    key = _hash_files([init_src] + headers + [p for _, p in tests],
                      " ".join(CFLAGS) + user.cflag + suite)
    out = config.cache_dir() / "user" / ("%s-%s-%s" % (suite, user.name, key))
    if (out / "done").exists():
        return out
    progress("userland", "%s: init and %d %s program(s)" % (user.name, len(tests), suite))
    if out.exists() and not (out / "done").exists():
        shutil.rmtree(out)   # half made by a version of this code before atomic.py
    with atomic.new_dir(out) as tmp:
        (tmp / "tests").mkdir()
        flags = CFLAGS + [user.cflag, "-I", str(config.REPO / "tests" / "include")]
        for name, src, dst in ([("init", init_src, tmp / "init")]
                               + [(n, s, tmp / "tests" / n) for n, s in tests]):
            r = subprocess.run(["gcc"] + flags + ["-o", str(dst), str(src), "-lpthread"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise Fatal("compiling %s (%s) failed:\n%s" % (src, user.cflag, r.stderr))
        (tmp / "done").write_text("")
    return out


def elf_kind(path):
    """(class, machine, static) of an ELF program, or None if not one."""
    data = Path(path).read_bytes()[:4096]
    if data[:4] != b"\x7fELF" or len(data) < 52:
        return None
    if struct.unpack_from("<H", data, 16)[0] not in (2, 3):   # ET_EXEC, ET_DYN
        return None
    cls = data[4]
    machine = struct.unpack_from("<H", data, 18)[0]
    if cls == 2:
        phoff, = struct.unpack_from("<Q", data, 32)
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
    else:
        phoff, = struct.unpack_from("<I", data, 28)
        phentsize, phnum = struct.unpack_from("<HH", data, 42)
    full = Path(path).read_bytes()
    interp = False
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", full, phoff + i * phentsize)
        interp |= p_type == 3  # PT_INTERP: dynamically linked
    return cls, machine, not interp


def extra_programs(extra_dir, user):
    """EXTRA=DIR: the static ELF programs in DIR of this userland's ABI."""
    if not extra_dir:
        return []
    d = Path(extra_dir)
    if not d.is_dir():
        raise Fatal("EXTRA=%s is not a directory" % extra_dir)
    chosen = []
    for path in sorted(d.iterdir()):
        if not path.is_file():
            continue
        kind = elf_kind(path)
        if kind is None:
            continue
        cls, machine, static = kind
        if not static:
            raise Fatal("EXTRA program %s is dynamically linked; the guest "
                        "has no libraries: build it with -static" % path)
        if (cls, machine) == user.elf:
            chosen.append(path)
    return chosen


def gen_init_cpio(tree):
    tool = config.cache_dir() / "tools" / "gen_init_cpio"
    src = tree / "usr" / "gen_init_cpio.c"
    if not tool.exists():
        with atomic.new_file(tool) as tmp:
            subprocess.run(["gcc", "-O2", "-o", str(tmp), str(src)], check=True)
    return tool


def busybox(user):
    """Debian's static busybox: the host's amd64 one, or the i386 package,
    downloaded (never installed) and unpacked."""
    if user.busybox_arch == "amd64":
        path = Path("/bin/busybox")
        if not path.exists():
            raise Fatal("/bin/busybox missing: apt-get install busybox-static")
        return path
    root = config.cache_dir() / "debs" / "busybox-static-i386"
    path = root / "bin" / "busybox"
    if path.exists():
        return path
    progress("userland", "fetching busybox-static:i386")
    if root.exists() and not path.exists():
        shutil.rmtree(root)   # half made by a version of this code before atomic.py
    with atomic.new_dir(root) as tmp:
        dl = tmp / "download"
        dl.mkdir()
        r = subprocess.run(["apt-get", "download", "busybox-static:i386"], cwd=dl,
                           capture_output=True, text=True)
        debs = list(dl.glob("busybox-static_*_i386.deb"))
        if r.returncode != 0 or not debs:
            raise Fatal("apt-get download busybox-static:i386 failed (is the i386 "
                        "architecture enabled? dpkg --add-architecture i386 && "
                        "apt-get update):\n%s" % r.stderr[-1000:])
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(tmp)], check=True)
        shutil.rmtree(dl)
    return path


def build_initramfs(tree, user, extra_dir=None, suite="tests"):
    """The cpio archive for a userland (built without root)."""
    programs = build_programs(user, suite)
    extras = extra_programs(extra_dir, user)
    bb = busybox(user)
    tests = sorted((programs / "tests").iterdir())
    names = {p.name for p in tests}
    for e in extras:
        if e.name in names:
            raise Fatal("EXTRA program %s has the name of a project test" % e)
    key = _hash_files([programs / "init", bb] + tests + extras, user.name + suite)
    cpio = config.cache_dir() / "initramfs" / ("%s-%s.cpio" % (user.name, key))
    if cpio.exists():
        return cpio, [p.name for p in tests], [e.name for e in extras]
    spec = ["dir /dev 0755 0 0", "nod /dev/console 0600 0 0 c 5 1",
            "dir /proc 0755 0 0", "dir /sys 0755 0 0", "dir /tmp 1777 0 0",
            "dir /bin 0755 0 0", "dir /tests 0755 0 0",
            "file /init %s 0755 0 0" % (programs / "init"),
            "file /bin/busybox %s 0755 0 0" % bb,
            "slink /bin/sh /bin/busybox 0777 0 0"]
    for p in tests + extras:
        spec.append("file /tests/%s %s 0755 0 0" % (p.name, p))
    spec_path = cpio.with_suffix(".list")
    atomic.write(spec_path, "\n".join(spec) + "\n")
    with atomic.new_file(cpio) as tmp, open(tmp, "wb") as f:
        subprocess.run([str(gen_init_cpio(tree)), str(spec_path)], stdout=f,
                       check=True)
        checkpoint("initramfs")
    progress("initramfs", "%s: %d %s program(s)%s" % (
        user.name, len(tests), suite, ", %d extra" % len(extras) if extras else ""))
    return cpio, [p.name for p in tests], [e.name for e in extras]
