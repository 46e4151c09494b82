"""No name of ours that mainline uses for something else.

The series defines functions, macros and types. A name that mainline
also defines must mean the same there (the series re-adds stock's code,
or backports mainline's interface with its contract), or a later
backport would bind to ours by name and get our semantics. The check:
every name the series defines that patches/mainline-names.tsv lists must
be named in patches/mainline-names-shared.txt with the reason the
meaning is the same; a name defined with another meaning gets a new one.
"""
import re

from . import config
from .log import Fatal

MAINLINE_NAMES = config.PATCHES / "mainline-names.tsv"
SHARED_NAMES = config.PATCHES / "mainline-names-shared.txt"

# What a definition looks like on an added line of C, at its start: the
# syscall macros define the syscalls' own names, which are the ABI.
DEFINITION_RES = (
    ("macro", re.compile(r"^#\s*define\s+([A-Za-z_]\w*)")),
    ("type", re.compile(r"^(?:struct|union|enum)\s+([A-Za-z_]\w*)\s*\{")),
    ("function", re.compile(r"^(?!(?:COMPAT_)?SYSCALL_DEFINE)"
                            r"[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\((?!.*;\s*$)")),
)


def defined_names(patch_texts):
    """{name: (kind, file, patch)} of what the added C lines define."""
    found = {}
    for patch, text in patch_texts:
        path = None
        for line in text.splitlines():
            m = re.match(r"^\+\+\+ (?:b/)?(\S+)", line)
            if m:
                path = m.group(1)
                continue
            if not path or not path.endswith((".c", ".h")) or not line.startswith("+"):
                continue
            for kind, rx in DEFINITION_RES:
                m = rx.match(line[1:])
                if m:
                    found.setdefault(m.group(1), (kind, path, patch))
                    break
    return found


def load_mainline(text):
    """{name: [meaning, ...]} from mainline-names.tsv (NAME KIND FILE MEANING)."""
    names = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        names.setdefault(fields[0], []).append(
            "%s in %s: %s" % tuple((fields + ["", "", ""])[1:4]))
    return names


def load_shared(text):
    """{name: why} from mainline-names-shared.txt (NAME<TAB>why)."""
    shared = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, _, why = line.partition("\t")
        if not why.strip():
            raise Fatal("%s:%d: %s has no reason" % (SHARED_NAMES.name, n, name))
        shared[name.strip()] = why.strip()
    return shared


def problems(defined, mainline, shared):
    """Lines that say what is wrong; empty when every name is fine."""
    out = []
    for name, (kind, path, patch) in sorted(defined.items()):
        if name in mainline and name not in shared:
            out.append("%s (%s in %s, %s) is a mainline name: %s. Rename it, or "
                       "say in %s why it means the same" % (
                           name, kind, path, patch, "; ".join(mainline[name]),
                           SHARED_NAMES.name))
    for name in sorted(set(shared) - set(defined)):
        out.append("%s names %s, which the series does not define" % (
            SHARED_NAMES.name, name))
    for name in sorted(set(shared) - set(mainline)):
        out.append("%s names %s, which %s does not list" % (
            SHARED_NAMES.name, name, MAINLINE_NAMES.name))
    return out


def check(patches):
    """problems() for the series' patch files."""
    return problems(defined_names([(p.name, p.read_text(errors="replace")) for p in patches]),
                    load_mainline(MAINLINE_NAMES.read_text()),
                    load_shared(SHARED_NAMES.read_text()))
