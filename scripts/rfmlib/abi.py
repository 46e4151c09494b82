"""The ABI gate: abi/expected.abi against headers, pahole and syscall tables.

For each ABI (x86: lp64 -m64, ilp32 -m32, x32 -mx32; ARM: aapcs64 and
eabi, with clang's --target=) abi/abi_check.c is compiled against the
kernel tree's exported uapi headers of the ABI's architecture and against
the system's headers of that ABI (/usr/include, or the cross C library's);
its _Static_asserts fail on drift, and the values it leaves in the
assembly fill the table. pahole dumps of the user structs are diffed
against abi/pahole/<abi>.txt, the tree's syscall tables (x86's .tbl
files, ARM's syscall.tbl, the generic unistd.h of arm64 and arm64's
AArch32 compat unistd32.h) are read row by row, and the kernel's own
compat_robust_list_head (from a kernel object built with -g) is set
beside the ILP32 user layout.
"""
import difflib
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from . import config, deps, kbuild, knobs, procs, toolchain
from .log import Fatal, progress
from .tree import patches_for, pristine_tree, variant_tree
from .targets import (ARM64_TRIPLE, ARMHF_TRIPLE, CROSS_CC, MIPS64_TRIPLE, MIPS64EL_TRIPLE,
                      PPC64_TRIPLE, S390X_TRIPLE)

ABI_DIR = config.REPO / "abi"
# ABI -> the compiler flag that selects it (with CROSS_CC for ARM).
ABIS = {"lp64": "-m64", "ilp32": "-m32", "x32": "-mx32",
        "aapcs64": "--target=" + ARM64_TRIPLE, "eabi": "--target=" + ARMHF_TRIPLE,
        "n64": "-mabi=64", "n32": "-mabi=n32", "o32": "-mabi=32",
        "n64be": "-mabi=64", "n32be": "-mabi=n32", "o32be": "-mabi=32",
        "ppc64": "-m64", "ppc32": "-m32", "s390x": "-m64", "s390": "-m31"}
# ABIs built with Debian's cross gcc of a triple (toolchain.py), by flag:
# MIPS's three, little- and big-endian; 64-bit PowerPC's two; s390x's two.
MIPS_ABIS = ("n64", "n32", "o32", "n64be", "n32be", "o32be")
GCC_TRIPLES = {**{a: MIPS64EL_TRIPLE for a in MIPS_ABIS[:3]},
               **{a: MIPS64_TRIPLE for a in MIPS_ABIS[3:]},
               "ppc64": PPC64_TRIPLE, "ppc32": PPC64_TRIPLE,
               "s390x": S390X_TRIPLE, "s390": S390X_TRIPLE}
# ABI -> the ARCH= whose exported headers it reads.
HEADER_ARCH = {"lp64": "x86", "ilp32": "x86", "x32": "x86", "aapcs64": "arm64", "eabi": "arm",
               **{a: "mips" for a in MIPS_ABIS}, "ppc64": "powerpc", "ppc32": "powerpc",
               "s390x": "s390", "s390": "s390"}
# ABI -> the TARGETS group whose make deps installs its headers.
DEPS_GROUP = {"aapcs64": "arm", "eabi": "arm", **{a: "mips" for a in MIPS_ABIS},
              "ppc64": "ppc", "ppc32": "ppc", "s390x": "s390", "s390": "s390"}
PAHOLE_TYPES = "robust_list_head,robust_list"
# A target's user-space ABI (targets.USERLANDS) -> its ABI here: make abi
# checks the ABIs of TARGETS (x86's by default; TARGETS=arm or all for ARM's).
USERLAND_ABIS = {"lp64": "lp64", "ilp32": "ilp32", "x32": "x32",
                 "arm64": "aapcs64", "armhf": "eabi",
                 "mips-n64": "n64", "mips-n32": "n32", "mips-o32": "o32",
                 "mipsbe-n64": "n64be", "mipsbe-n32": "n32be", "mipsbe-o32": "o32be",
                 "ppc64": "ppc64", "ppc32": "ppc32", "s390x": "s390x", "s390": "s390"}
# The Debian packages holding an ABI's system headers.
SYSTEM_HEADERS = {"x32": "libc6-dev-x32", "aapcs64": "libc6-dev-arm64-cross",
                  "eabi": "libc6-dev-armhf-cross", "n64": "libc6-dev-mips64el-cross",
                  "n32": "libc6-dev-mipsn32-mips64el-cross",
                  "o32": "libc6-dev-mips32-mips64el-cross", "n64be": "libc6-dev-mips64-cross",
                  "n32be": "libc6-dev-mipsn32-mips64-cross",
                  "o32be": "libc6-dev-mips32-mips64-cross", "ppc64": "libc6-dev-ppc64-cross",
                  "ppc32": "libc6-dev-powerpc-ppc64-cross", "s390x": "libc6-dev-s390x-cross",
                  "s390": "libc6-dev-s390-s390x-cross"}
# Where a cross ABI's system headers are (the host's own: /usr/include).
SYSTEM_INCLUDE = {"aapcs64": "/usr/%s/include" % ARM64_TRIPLE,
                  "eabi": "/usr/%s/include" % ARMHF_TRIPLE,
                  **{abi: "/usr/%s/include" % t for abi, t in GCC_TRIPLES.items()}}

# The syscall tables read for table.TBL.NR items: TBL -> (file, format).
# "tbl": NR ABI NAME ENTRY [COMPAT_ENTRY] rows; "unistd": #define __NR_name
# NR plus __SYSCALL(__NR_name, entry) or __SC_COMP(__NR_name, entry,
# compat_entry) macros, as in the generic table arm64 uses and arm64's
# table for AArch32 tasks.
SYSCALL_TABLES = {
    "32": ("arch/x86/entry/syscalls/syscall_32.tbl", "tbl"),
    "64": ("arch/x86/entry/syscalls/syscall_64.tbl", "tbl"),
    "arm": ("arch/arm/tools/syscall.tbl", "tbl"),
    "generic": ("include/uapi/asm-generic/unistd.h", "unistd"),
    "arm64compat": ("arch/arm64/include/asm/unistd32.h", "unistd"),
    # MIPS64's three tables, numbered from 0 (the kernel adds each ABI's
    # base: 5000 n64, 6000 n32, 4000 o32, which nr.* items include).
    "n64": ("arch/mips/kernel/syscalls/syscall_n64.tbl", "tbl"),
    "n32": ("arch/mips/kernel/syscalls/syscall_n32.tbl", "tbl"),
    "o32": ("arch/mips/kernel/syscalls/syscall_o32.tbl", "tbl"),
    # PowerPC's one table: ABI "common", "64", "32", "nospu" or "spu";
    # the compat entry, if any, last.
    "ppc": ("arch/powerpc/kernel/syscalls/syscall.tbl", "tbl"),
    # s390's one table, the same way (the compat entry for 31-bit tasks).
    "s390": ("arch/s390/kernel/syscalls/syscall.tbl", "tbl"),
}


def compiler(abi):
    """The compiler command of an ABI: gcc -mFLAG, clang --target=, or
    Debian's cross gcc with its -mabi=."""
    flag = ABIS[abi]
    if abi in GCC_TRIPLES:
        return [toolchain.gcc(GCC_TRIPLES[abi]), flag]
    return [CROSS_CC, flag] if flag.startswith("--target=") else ["gcc", flag]


def parse_expected(path):
    """{abi: {item: value}} from an expected.abi file."""
    expected, section = {}, None
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"^\[(\w+)\]$", line)
        if m:
            section = m.group(1)
            if section not in ABIS:
                raise Fatal("%s:%d: unknown ABI [%s]" % (path, n, section))
            expected[section] = {}
            continue
        if section is None:
            raise Fatal("%s:%d: item before any [abi] section" % (path, n))
        item, _, value = line.partition(" ")
        expected[section][item] = " ".join(value.split())
    return expected


def _number(text):
    return int(text, 0)


def expected_header(abi, items):
    """The -include header: RFM_ABI and an EXPECT_ macro per number item."""
    lines = ['#define RFM_ABI "%s"' % abi]
    for item, value in items.items():
        if item.startswith("table."):
            continue
        lines.append("#define EXPECT_%s %s" % (item.replace(".", "_"), value))
    return "\n".join(lines) + "\n"


def _gcc_include(abi="lp64"):
    """The compiler's own headers (stddef.h), which -nostdinc leaves out."""
    return subprocess.run(compiler(abi) + ["-print-file-name=include"],
                          capture_output=True, text=True, check=True).stdout.strip()


def compile_check(abi, items, headers, workdir):
    """Compile abi_check.c; return ({item: value}, [drift messages])."""
    workdir.mkdir(parents=True, exist_ok=True)
    hdr = workdir / ("expected-%s.h" % abi)
    hdr.write_text(expected_header(abi, items))
    cmd = compiler(abi) + ["-S", "-o", "-", "-include", str(hdr)]
    if headers is not None:
        # The kernel's headers alone: no libc, only the compiler's own.
        cmd += ["-nostdinc", "-isystem", _gcc_include(abi), "-I", str(headers)]
    r = subprocess.run(cmd + [str(ABI_DIR / "abi_check.c")], capture_output=True,
                       text=True)
    if r.returncode != 0:
        # gcc: static assertion failed: "MSG"; clang: static_assert
        # failed due to requirement '...' "MSG".
        drift = re.findall(r'static(?: assertion|_assert) failed[^"\n]*"([^"]+)"', r.stderr)
        if not drift:
            raise Fatal("compiling abi_check.c %s failed:\n%s" % (ABIS[abi], r.stderr[-2000:]))
        return {}, drift
    values = {m.group(1): str((int(m.group(2)) << 16) | int(m.group(3)))
              for m in re.finditer(r'"->(\S+) (\d+) (\d+)"', r.stdout)}
    return values, []


def pahole_dump(abi, headers, workdir, types=PAHOLE_TYPES):
    """pahole of the user structs from an object built with -g."""
    obj = workdir / ("layout-%s.o" % abi)
    hdr = workdir / ("expected-%s.h" % abi)
    # MIPS: libdw applies no MIPS64 relocations to an object's DWARF, and
    # pahole of the .o finds no type; a linked object has none left.
    link = ["-fPIC", "-shared", "-nostdlib"] if abi in MIPS_ABIS else ["-c"]
    cmd = compiler(abi) + ["-g"] + link + ["-o", str(obj), "-include", str(hdr)]
    if headers is not None:
        cmd += ["-nostdinc", "-isystem", _gcc_include(abi), "-I", str(headers)]
    r = subprocess.run(cmd + [str(ABI_DIR / "abi_check.c")], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise Fatal("compiling the pahole object %s failed:\n%s" % (ABIS[abi], r.stderr[-2000:]))
    return _pahole(obj, types)


def _pahole(obj, types):
    r = subprocess.run(["pahole", "-C", types, str(obj)], capture_output=True, text=True)
    if r.returncode != 0:
        raise Fatal("pahole %s failed: %s" % (obj, r.stderr.strip()))
    return r.stdout


def pahole_members(dump):
    """{struct: {"size": n, "members": [(name, offset, size)]}}."""
    out, current = {}, None
    for line in dump.splitlines():
        m = re.match(r"^struct (\w+) \{", line)
        if m:
            current = out.setdefault(m.group(1), {"size": None, "members": []})
            continue
        if current is None:
            continue
        m = re.search(r"\s(\w+);\s+/\*\s+(\d+)\s+(\d+)\s+\*/", line)
        if m:
            current["members"].append((m.group(1), int(m.group(2)), int(m.group(3))))
            continue
        m = re.search(r"/\* size: (\d+),", line)
        if m:
            current["size"] = int(m.group(1))
    return out


def pahole_values(dump):
    """The sizeof./offset. items a pahole dump shows."""
    values = {}
    for struct, info in pahole_members(dump).items():
        values["sizeof.%s" % struct] = str(info["size"])
        for name, offset, _ in info["members"]:
            values["offset.%s.%s" % (struct, name)] = str(offset)
    return values


def unistd_rows(text):
    """{NR: "name entry [compat_entry]"} of a unistd.h-style table."""
    text = text.replace("\\\n", " ")
    numbers = {m.group(1): m.group(2) for m in
               re.finditer(r"^#define __NR_(\w+)\s+(\d+)\s*$", text, re.M)}
    rows = {}
    for m in re.finditer(r"^\s*__(?:SYSCALL|SC_\w+)\(__NR_(\w+),\s*([^)]*)\)", text, re.M):
        name = m.group(1)
        if name in numbers:
            entries = [e.strip() for e in m.group(2).split(",")]
            rows[numbers[name]] = " ".join([name] + entries)
    return rows


def syscall_rows(tree):
    """{"64.273": "64 set_robust_list sys_set_robust_list",
    "generic.99": "set_robust_list sys_set_robust_list
    compat_sys_set_robust_list", ...}: the rows of every table a tree
    has (a table the tree lacks has no rows)."""
    rows = {}
    for tbl, (rel, form) in SYSCALL_TABLES.items():
        path = tree / rel
        if not path.exists():
            continue
        if form == "unistd":
            rows.update(("%s.%s" % (tbl, nr), row)
                        for nr, row in unistd_rows(path.read_text()).items())
            continue
        for line in path.read_text().splitlines():
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 3 and fields[0].isdigit():
                rows["%s.%s" % (tbl, fields[0])] = " ".join(fields[1:])
    return rows


def headers_install(tree, ident, arch="x86"):
    """The tree's exported uapi headers of ARCH=arch, installed into the
    cache once."""
    dest = config.cache_dir() / "abi" / ("headers-%s%s" % (
        ident, "" if arch == "x86" else "-" + arch))
    if (dest / "usr" / "include" / "linux" / "futex.h").exists():
        return dest / "usr" / "include"
    progress("abi", "headers_install ARCH=%s from %s" % (arch, tree))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    r = subprocess.run(["make", "-C", str(tree), "O=%s" % (dest / "build"), "ARCH=%s" % arch,
                        "-j%d" % config.jobs(), "headers_install",
                        "INSTALL_HDR_PATH=%s" % (dest / "usr")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        raise Fatal("headers_install in %s failed:\n%s" % (tree, r.stderr[-2000:]))
    return dest / "usr" / "include"


def kernel_compat_layout(tree, ident):
    """pahole of compat_robust_list_head from the kernel's own objects:
    kernel/futex/ built with -g in a tinyconfig x86_64 (IA32) build dir."""
    build = config.cache_dir() / "abi" / ("kobj-%s" % ident)
    build.mkdir(parents=True, exist_ok=True)
    log = build / "rfm-abi.log"
    log.write_text("")
    kc = kbuild.KERNEL_CONFIGS["x86_64"]
    if not (build / ".config").exists():
        progress("abi", "configuring a debug-info build of kernel/futex/ (%s)" % ident)
        kbuild.configure(tree, build, kc, (), log, "abi")
    progress("abi", "kernel/futex/ with -g (kernel's compat layout)")
    kbuild._make(tree, build, kc, ["KCFLAGS=-g", "kernel/futex/"], log, "abi")
    for obj in sorted((build / "kernel" / "futex").glob("*.o")):
        dump = subprocess.run(["pahole", "-C", "compat_robust_list_head,compat_robust_list",
                               str(obj)], capture_output=True, text=True).stdout
        if "struct compat_robust_list_head" in dump:
            return obj.relative_to(build), dump
    raise Fatal("no object in kernel/futex/ describes compat_robust_list_head")


def tree_ident(tree):
    st = (tree / "Makefile").stat()
    h = hashlib.sha256(str(tree.resolve()).encode())
    for p in sorted((tree / "include/uapi/linux").glob("futex.h")) + [
            tree / rel for rel, _ in SYSCALL_TABLES.values()]:
        if p.exists():
            h.update(p.read_bytes())
    h.update(str(st.st_mtime).encode())
    return h.hexdigest()[:12]


def check_headers(abis):
    """The system headers of `abis` and pahole are installed."""
    if deps.installed_version("dwarves") is None:
        raise Fatal("pahole is missing: apt-get install dwarves")
    for abi in abis:
        package = SYSTEM_HEADERS.get(abi)
        if package and deps.installed_version(package) is None:
            raise Fatal("the %s ABI needs the headers of %s: apt-get install %s "
                        "(make deps%s)" % (abi, package, package,
                                           "" if abi == "x32" else " TARGETS=%s" % (
                                               DEPS_GROUP[abi])))


def _save(outdir, name, text):
    if outdir is not None:
        outdir.mkdir(parents=True, exist_ok=True)
        (outdir / name).write_text(text)


def run_gate(trees, expected_path, system=True, kernel_view=True, outdir=None, abis=None):
    """Check `abis` (all of expected_path's by default) against each
    (label, tree); return (report, drifts). The pahole dumps are also
    written to outdir, for other tools. `kernel_view`: x86_64's compat
    layout beside ILP32's, when ILP32 is among them."""
    expected = parse_expected(expected_path)
    if abis is not None:
        expected = {a: items for a, items in expected.items() if a in abis}
    check_headers(expected)
    kernel_view = kernel_view and "ilp32" in expected
    work = config.cache_dir() / "abi" / "work"
    lines, drifts = [], []
    sources = [(label, tree) for label, tree in trees]
    # Each tree's headers and debug objects first, side by side: each make
    # spends much of its time starting processes (35 s a headers_install).
    arches = sorted({HEADER_ARCH[a] for a in expected})
    procs.parallel(lambda ta: headers_install(ta[0], tree_ident(ta[0]), ta[1]),
                   [(tree, arch) for _, tree in sources for arch in arches], config.jobs())
    layouts = dict(zip([label for label, _ in sources], procs.parallel(
        lambda src: kernel_compat_layout(src, tree_ident(src)),
        [src for _, src in sources], config.jobs()))) if kernel_view else {}
    for abi, items in expected.items():
        arch = HEADER_ARCH[abi]
        header_sets = [("%s uapi" % label if arch == "x86" else "%s %s uapi" % (label, arch),
                        headers_install(tree, tree_ident(tree), arch))
                       for label, tree in sources]
        if system:
            header_sets.append((SYSTEM_INCLUDE.get(abi, "/usr/include"), None))
        columns, pahole_cols = {}, {}
        for name, hdrs in header_sets:
            values, drift = compile_check(abi, items, hdrs, work)
            drifts += ["%s against %s" % (d, name) for d in drift]
            columns[name] = values
            if not drift:
                dump = pahole_dump(abi, hdrs, work)
                pahole_cols[name] = dump
                _save(outdir, "pahole-%s-%s.txt" % (
                    abi, name.replace(" ", "-").strip("/").replace("/", "-")), dump)
        # pahole: the same bytes for every header set, and as checked in.
        want = (ABI_DIR / "pahole" / ("%s.txt" % abi))
        for name, dump in pahole_cols.items():
            if not want.exists():
                drifts.append("%s: abi/pahole/%s.txt is missing" % (abi, abi))
                break
            if dump != want.read_text():
                diff = "".join(difflib.unified_diff(
                    want.read_text().splitlines(True), dump.splitlines(True),
                    "abi/pahole/%s.txt" % abi, "pahole (%s)" % name))
                drifts.append("%s: pahole layout differs against %s:\n%s" % (abi, name, diff))
        pahole_vals = pahole_values(next(iter(pahole_cols.values()))) if pahole_cols else {}
        tables = {label: syscall_rows(tree) for label, tree in sources}

        header = ["item", "expected"] + list(columns) + ["pahole"]
        rows, table_rows = [], []
        for item, value in items.items():
            if item.startswith("table."):
                row = [item[len("table."):], value]
                for label, _ in sources:
                    got = tables[label].get(item[len("table."):], "(absent)")
                    row.append("same" if got == value else "DRIFT")
                    if got != value:
                        drifts.append("%s: %s row %r in %s, expected %r" % (
                            abi, SYSCALL_TABLES[item.split(".")[1]][0], got, label, value))
                table_rows.append(row)
                continue
            want_n = _number(value)
            row = [item, value]
            for name, values in columns.items():
                got = values.get(item)
                if got is None:
                    row.append("FAILED" if values == {} else "-")
                    # The series' headers are the ABI of record: all of
                    # it, the constants older headers lack included.
                    if values and name.startswith("series"):
                        drifts.append("%s: %s is missing from %s" % (abi, item, name))
                    continue
                got_n = int(got) & 0xffffffff
                row.append("%s" % (value if got_n == want_n else "DRIFT(%d)" % got_n))
                if got_n != want_n and values:
                    drifts.append("%s: %s is %d against %s, expected %s" % (
                        abi, item, got_n, name, value))
            pv = pahole_vals.get(item)
            row.append("" if pv is None else pv if int(pv) == want_n else "DRIFT(%s)" % pv)
            rows.append(row)
        lines.append("== %s (%s)" % (abi, ABIS[abi]))
        lines += _format(header, rows)
        if table_rows and sources:
            lines.append("")
            lines += _format(["syscall table row", "expected"]
                             + [label for label, _ in sources], table_rows)
        lines.append("")

    if kernel_view:
        user = pahole_members((ABI_DIR / "pahole" / "ilp32.txt").read_text()
                              if (ABI_DIR / "pahole" / "ilp32.txt").exists() else "")
        for label, src in sources:
            obj, dump = layouts[label]
            _save(outdir, "pahole-kernel-compat-%s.txt" % label, dump)
            kern = pahole_members(dump).get("compat_robust_list_head")
            mine = user.get("robust_list_head")
            lines.append("== ILP32 user robust_list_head vs the kernel's "
                         "compat_robust_list_head (%s, %s with -g)" % (label, obj))
            rows = []
            kmembers = {n: (o, s) for n, o, s in kern["members"]} if kern else {}
            for name, off, size in (mine["members"] if mine else []):
                k = kmembers.get(name)
                same = k == (off, size)
                rows.append([name, "%d +%d" % (off, size),
                             "%d +%d" % k if k else "(absent)", "same" if same else "DIFFERENT"])
                if not same:
                    drifts.append("compat layout: %s is %s in the kernel (%s), %d +%d in ILP32 user space"
                                  % (name, k, label, off, size))
            ksize = kern["size"] if kern else None
            rows.append(["(size)", str(mine["size"] if mine else "?"), str(ksize),
                         "same" if mine and ksize == mine["size"] else "DIFFERENT"])
            if not mine or ksize != mine["size"]:
                drifts.append("compat layout: size %s in the kernel (%s)" % (ksize, label))
            lines += _format(["field", "user ilp32", "kernel compat", ""], rows)
            lines.append("")
    return "\n".join(lines), drifts


def _format(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    fmt = "  ".join("%%-%ds" % w for w in widths)
    return [(fmt % tuple(header)).rstrip()] + [(fmt % tuple(r)).rstrip() for r in rows]


def write_pahole_expectations(headers, abis=None):
    """Regenerate abi/pahole/*.txt (after a reviewed, intended change)."""
    work = config.cache_dir() / "abi" / "work"
    expected = parse_expected(ABI_DIR / "expected.abi")
    for abi, items in expected.items():
        if abis is not None and abi not in abis:
            continue
        compile_check(abi, items, headers, work)
        (ABI_DIR / "pahole" / ("%s.txt" % abi)).write_text(pahole_dump(abi, headers, work))


def cmd_abi(args):
    """The ABI gate (no QEMU): the series and stock trees, or KSRC=tree."""
    expected = args.expected or ABI_DIR / "expected.abi"
    if args.system_only:
        trees = []
    elif knobs.get("KSRC"):
        trees = [("KSRC", knobs.get("KSRC"))]
    else:
        deps.ensure()
        series = patches_for("all")
        trees = [("series", variant_tree("series", series)[0] if series else pristine_tree()),
                 ("stock", pristine_tree())]
    outdir = config.out_dir() / "abi"
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    abis = [a for a in ABIS if a in {USERLAND_ABIS[t.userland] for t in knobs.get("TARGETS")}]
    with config.cache_lock("abi"):   # its work and build directories are shared
        text, drifts = run_gate(trees, expected, kernel_view=bool(trees), outdir=outdir,
                                abis=abis)
    text += "".join("DRIFT: %s\n" % d for d in drifts)
    text += "abi: %s\n" % ("%d drift(s)" % len(drifts) if drifts else
                           "no drift in %s" % ", ".join(abis))
    (outdir / "report.txt").write_text(text)
    print(text, end="")
    return 1 if drifts else 0
