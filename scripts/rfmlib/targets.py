"""The one table of targets, kernel configurations and kernel variants.

Everything else (build, boot, compare, report) iterates over these; nothing
else names a target.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelConfig:
    """A kernel build: tinyconfig plus fragments from kconfig/."""
    name: str
    arch: str                 # make ARCH=
    fragments: tuple          # files in kconfig/, merged in order
    image: str                # the boot image, relative to the build dir


@dataclass(frozen=True)
class Userland:
    """A user-space ABI: how its programs are built and what they need."""
    name: str
    cflag: str                # gcc flag for every guest program
    tests_dirs: tuple         # its ABI-only cases, beside tests/common
    busybox_arch: str         # the Debian build of busybox-static it runs
    elf: tuple                # (EI_CLASS, e_machine) of its programs
    # Shared libraries of this ABI on a Debian host: where they are (the
    # multilib and multiarch directories, searched in this order) and the
    # packages of its glibc and of its gcc runtime ("lib32" + "gcc-s1").
    lib_dirs: tuple
    libc_package: str
    runtime_prefix: str
    deb_arch: str             # its Debian architecture (multiarch packages)

    @property
    def suffix(self):
        """EXTRA=DIR file suffix of a build for this ABI: its gcc flag."""
        return self.cflag.lstrip("-")


USERLANDS = {
    "lp64": Userland("lp64", "-m64", ("tests64",), "amd64", (2, 62),
                     ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                      "/lib64", "/usr/lib64", "/lib", "/usr/lib"),
                     "libc6", "lib", "amd64"),
    "ilp32": Userland("ilp32", "-m32", ("tests32",), "i386", (1, 3),
                      ("/lib32", "/usr/lib32", "/lib/i386-linux-gnu",
                       "/usr/lib/i386-linux-gnu", "/lib", "/usr/lib"),
                      "libc6-i386", "lib32", "i386"),
    # ILP32 in long mode: 32-bit pointers, x86_64 instructions and ELF
    # machine, its own system call numbers (__X32_SYSCALL_BIT). It runs
    # the ILP32 cases and its own (testsx32: the 64-bit calls it can make).
    "x32": Userland("x32", "-mx32", ("tests32", "testsx32"), "amd64", (1, 62),
                    ("/libx32", "/usr/libx32", "/lib/x86_64-linux-gnux32",
                     "/usr/lib/x86_64-linux-gnux32", "/lib", "/usr/lib"),
                    "libc6-x32", "libx32", "x32"),
}


@dataclass(frozen=True)
class Target:
    """One column of the matrix: a kernel build plus a user-space ABI."""
    name: str
    kconfig: str              # KernelConfig.name
    userland: str             # USERLANDS key
    abi: str                  # "[abi]" observations agree within a group
    qemu: str
    machine: str
    cpu: str                  # a fixed model, never "host"
    kernel_args: str = ""     # what this target needs on the command line
    cpu_flags: tuple = ()     # HARDENING_CPU_FLAGS the model must show

    @property
    def user(self):
        return USERLANDS[self.userland]


KERNEL_CONFIGS = {
    "x86_64": KernelConfig("x86_64", "x86_64",
                           ("common.config", "x86_64.config", "x32.config"),
                           "arch/x86/boot/bzImage"),
    "i386": KernelConfig("i386", "i386",
                         ("common.config", "i386.config"),
                         "arch/x86/boot/bzImage"),
    # Built by bisect-check only: no target boots it.
    "x86_64-noia32": KernelConfig("x86_64-noia32", "x86_64",
                                  ("common.config", "x86_64.config",
                                   "no-ia32.config"),
                                  "arch/x86/boot/bzImage"),
}

# What bisect-check builds after every patch of the series.
BISECT_CONFIGS = ("x86_64", "x86_64-noia32", "i386")

# CPU features that decide how the kernel's user accesses are hardened:
# SMAP (a user access outside a STAC window faults) and SMEP, and SSE2
# (without it, i386 has no LFENCE for barrier_nospec()). The guest reports
# which of them it saw; the matrix shows them per target.
HARDENING_CPU_FLAGS = ("smap", "smep", "sse2")

# QEMU's generic models plus SMAP and SMEP (TCG enforces both), so that a
# user access outside a STAC/CLAC window is caught, not passed over.
X86_64_CPU = "qemu64,+smap,+smep"
I386_CPU = "qemu32,+smap,+smep"

TARGETS = (
    Target("x86_64", "x86_64", "lp64", "lp64",
           "qemu-system-x86_64", "pc", X86_64_CPU, cpu_flags=("smap", "smep")),
    Target("x86_64-ia32", "x86_64", "ilp32", "ilp32",
           "qemu-system-x86_64", "pc", X86_64_CPU, cpu_flags=("smap", "smep")),
    Target("i386", "i386", "ilp32", "ilp32",
           "qemu-system-i386", "pc", I386_CPU, cpu_flags=("smap", "smep")),
    # Debian builds x32 in but leaves it off unless asked on the command line.
    Target("x86_64-x32", "x86_64", "x32", "ilp32",
           "qemu-system-x86_64", "pc", X86_64_CPU, "syscall.x32=y",
           cpu_flags=("smap", "smep")),
    # The i386 kernel on a CPU without SSE2 (and without SMAP and SMEP):
    # no LFENCE, so barrier_nospec() is empty there and user reads must be
    # hardened by masking the address.
    Target("i386-pentium3", "i386", "ilp32", "ilp32",
           "qemu-system-i386", "pc", "pentium3"),
)

# Kernel variants, in the order the matrix shows them. "patches" says which
# prefix of patches/series the variant applies: all, the first one, none.
KERNEL_VARIANTS = {
    "series": {"patches": "all",
               "about": "Debian's tree with patches/series applied"},
    "stock": {"patches": "none",
              "about": "Debian's linux-source-6.1 as shipped"},
    "baseline": {"patches": "first",
                 "about": "negative control: only the removal patch 0001"},
    # The series with lockdep, atomic-sleep and lockup checks, and KASAN
    # where the arch has it: for hostile lists and concurrent deaths.
    "debug": {"patches": "all",
              "fragments": {"x86_64": ("debug.config", "debug-kasan.config"),
                            "i386": ("debug.config",)},
              "about": "series + kconfig/debug*.config"},
    # Debian's own kernels (linux-image-amd64, linux-image-686), downloaded
    # and unpacked into the cache, booted with our initramfs.
    "debian": {"prebuilt": "debian",
               "about": "Debian's prebuilt linux-image-amd64 / -686"},
    # A kernel built elsewhere: BZIMAGE=path [BZIMAGE32=path].
    "user": {"prebuilt": "user",
             "about": "the user's own bzImage (BZIMAGE, BZIMAGE32)"},
    # make bench only: the seed's one-million-lock experiment.
    "bench-1m": {"patches": "all+bench",
                 "about": "series + patches/bench (ROBUST_LIST_LIMIT 1048576)"},
}

def has_series(kernel):
    """Does this kernel variant carry the whole series (and so its fixes)?
    On the others, a case patches/deviations.txt names may fail."""
    variant = KERNEL_VARIANTS.get(kernel)
    return variant is None or variant.get("patches") in ("all", "all+bench")


DEFAULT_RUN_KERNELS = ("series",)
CHECK_KERNELS = ("series", "stock", "baseline")
BENCH_KERNELS = ("series", "stock", "bench-1m")


def target(name):
    for t in TARGETS:
        if t.name == name:
            return t
    raise KeyError(name)


def select_targets(spec):
    """TARGETS=a,b (or all when empty) -> Target tuple, in table order."""
    if not spec:
        return TARGETS
    wanted = [s for s in spec.replace(",", " ").split() if s]
    if not wanted:
        raise ValueError("names no target; known: %s" % ", ".join(t.name for t in TARGETS))
    unknown = [w for w in wanted if w not in {t.name for t in TARGETS}]
    if unknown:
        raise ValueError("unknown target(s) %s; known: %s" % (
            ", ".join(unknown), ", ".join(t.name for t in TARGETS)))
    return tuple(t for t in TARGETS if t.name in wanted)


def select_kernels(spec, default):
    if not spec:
        return tuple(default)
    wanted = [s for s in spec.replace(",", " ").split() if s]
    if not wanted:
        raise ValueError("names no kernel; known: %s" % ", ".join(KERNEL_VARIANTS))
    unknown = [w for w in wanted if w not in KERNEL_VARIANTS]
    if unknown:
        raise ValueError("unknown kernel(s) %s; known: %s" % (
            ", ".join(unknown), ", ".join(KERNEL_VARIANTS)))
    return tuple(k for k in KERNEL_VARIANTS if k in wanted)
