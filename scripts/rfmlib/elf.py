"""A small ELF reader: what the initramfs builder needs to know of a program.

Its kind (class, machine: which user-space ABI runs it), its interpreter
(PT_INTERP: dynamically linked), and from the dynamic section the
libraries it needs (DT_NEEDED) and where it says to look (DT_RPATH,
DT_RUNPATH). Either byte order (big-endian MIPS).
"""
import struct
from dataclasses import dataclass, field
from pathlib import Path

ET_EXEC, ET_DYN = 2, 3
BIG_ENDIAN = "big-endian"     # a big-endian program's kind ends with it
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 14, 15, 29


@dataclass
class Elf:
    cls: int                  # EI_CLASS: 1 ELFCLASS32, 2 ELFCLASS64
    machine: int              # e_machine: 3 EM_386, 62 EM_X86_64
    type: int                 # e_type: ET_EXEC, ET_DYN (programs, libraries)
    big_endian: bool = False  # EI_DATA: ELFDATA2MSB
    interp: str = None        # PT_INTERP, None if statically linked
    needed: list = field(default_factory=list)    # DT_NEEDED, in order
    rpath: list = field(default_factory=list)     # DT_RPATH directories
    runpath: list = field(default_factory=list)   # DT_RUNPATH directories
    soname: str = None

    @property
    def kind(self):
        """(EI_CLASS, e_machine), and "big-endian" after them for such a
        program: what targets.Userland.elf holds."""
        return (self.cls, self.machine) + ((BIG_ENDIAN,) if self.big_endian else ())

    @property
    def dynamic(self):
        return self.interp is not None


class BadElf(ValueError):
    """An ELF file whose headers point outside it."""


def _cstring(data, offset):
    if not 0 <= offset < len(data):
        raise BadElf("string at %d is outside the file" % offset)
    end = data.find(b"\0", offset)
    return data[offset:end if end >= 0 else len(data)].decode(errors="replace")


def read(path):
    """The Elf of an executable or shared object, or None if the file is
    not one (a script, a relocatable object, a core file)."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 52 or data[5] not in (1, 2):
        return None
    cls, order = data[4], "<" if data[5] == 1 else ">"
    etype, machine = struct.unpack_from(order + "HH", data, 16)
    if etype not in (ET_EXEC, ET_DYN) or cls not in (1, 2):
        return None
    wide = cls == 2
    if wide:
        if len(data) < 64:
            return None
        phoff, = struct.unpack_from(order + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 54)
        ph_fmt, dyn_fmt = order + "IIQQQQQQ", order + "qQ"
    else:
        phoff, = struct.unpack_from(order + "I", data, 28)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 42)
        ph_fmt, dyn_fmt = order + "IIIIIIII", order + "iI"
    elf = Elf(cls, machine, etype, big_endian=order == ">")
    loads, dynamic = [], None
    for i in range(phnum):
        at = phoff + i * phentsize
        if at + struct.calcsize(ph_fmt) > len(data):
            raise BadElf("%s: program header %d is outside the file" % (path, i))
        fields = struct.unpack_from(ph_fmt, data, at)
        if wide:
            p_type, _, p_offset, p_vaddr, _, p_filesz = fields[:6]
        else:
            p_type, p_offset, p_vaddr, _, p_filesz = fields[:5]
        if p_type == PT_INTERP:
            elf.interp = _cstring(data, p_offset)
        elif p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic:
        _read_dynamic(elf, data, dynamic, loads, dyn_fmt, path)
    return elf


def _read_dynamic(elf, data, dynamic, loads, dyn_fmt, path):
    entries = []
    offset, size = dynamic
    step = struct.calcsize(dyn_fmt)
    for at in range(offset, min(offset + size, len(data)) - step + 1, step):
        tag, value = struct.unpack_from(dyn_fmt, data, at)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    strtab = next((v for t, v in entries if t == DT_STRTAB), None)
    if strtab is None:
        return
    # DT_STRTAB is an address: the PT_LOAD segment holding it gives the offset.
    base = next((off + strtab - vaddr for vaddr, off, filesz in loads
                 if vaddr <= strtab < vaddr + filesz), None)
    if base is None:
        raise BadElf("%s: DT_STRTAB is in no loaded segment" % path)
    for tag, value in entries:
        if tag == DT_NEEDED:
            elf.needed.append(_cstring(data, base + value))
        elif tag == DT_SONAME:
            elf.soname = _cstring(data, base + value)
        elif tag in (DT_RPATH, DT_RUNPATH):
            dirs = [d for d in _cstring(data, base + value).split(":") if d]
            (elf.rpath if tag == DT_RPATH else elf.runpath).extend(dirs)
