"""What the x86 boot protocol header of a kernel image says: a file
format reader (like elf.py), used to check BZIMAGE and BZIMAGE32 before
anything is booted."""
import struct
from dataclasses import dataclass


@dataclass
class BzImage:
    protocol: str       # the boot protocol version, e.g. "2.15"
    bits: int           # 64 if the kernel has the 64-bit entry (XLF_KERNEL_64)
    version: str        # the kernel's version string, if it carries one


def read_bzimage(path):
    """What the x86 boot protocol header says about a kernel image
    (Documentation/x86/boot.rst), or ValueError saying why it is not an
    x86 bzImage a 6.1 guest can boot."""
    with open(path, "rb") as f:
        head = f.read(0x8000)
    if head[:4] == b"\x7fELF":
        raise ValueError("an ELF file (a vmlinux?), not a bzImage; want "
                         "arch/x86/boot/bzImage of the build")
    if len(head) < 0x240 or head[0x202:0x206] != b"HdrS":
        raise ValueError("not an x86 bzImage (no boot protocol header 'HdrS' at "
                         "0x202); want arch/x86/boot/bzImage of a kernel build")
    major, minor = head[0x207], head[0x206]
    protocol = "%d.%02d" % (major, minor)
    if not head[0x211] & 0x01:          # loadflags: LOADED_HIGH
        raise ValueError("a zImage (loaded low), not a bzImage")
    if (major, minor) < (2, 12):
        raise ValueError("boot protocol %s: older than 2.12 (Linux 3.8), it does "
                         "not say whether the kernel is 64-bit" % protocol)
    xloadflags, = struct.unpack_from("<H", head, 0x236)
    version = ""
    pointer, = struct.unpack_from("<H", head, 0x20E)
    if pointer and 0x200 + pointer < len(head):
        version = head[0x200 + pointer:].split(b"\0", 1)[0].decode("ascii", "replace")
    return BzImage(protocol, 64 if xloadflags & 0x1 else 32, version)
