"""The one table of targets, kernel configurations and kernel variants.

Everything else (build, boot, compare, report) iterates over these; nothing
else names a target.
"""
import dataclasses
from dataclasses import dataclass

from .elf import BIG_ENDIAN


@dataclass(frozen=True)
class KernelConfig:
    """A kernel build: tinyconfig plus fragments from kconfig/."""
    name: str
    arch: str                 # make ARCH=
    fragments: tuple          # files in kconfig/, merged in order
    image: str                # the boot image, relative to the build dir
    # ARM kernels are cross-built with clang (see CROSS_CC): make CC= and
    # CROSS_COMPILE= (binutils-<triple>). Empty: the host's gcc.
    cross: str = ""
    # Merged after `fragments` on tinyconfig only, never on a
    # distribution's config (the distro variants build what Debian does).
    tiny_fragments: tuple = ()
    # The cross compiler, when not CROSS_CC (a variant's "cross_cc").
    cross_cc: str = ""
    # PREEMPT=MODEL's model, merged as preempt-MODEL.config after
    # tiny_fragments; "": the tree's own (kernel_config()).
    preempt: str = ""
    # Built with Debian's cross gcc of this triple (toolchain.py), not
    # with clang: MIPS and PowerPC.
    gcc_triple: str = ""

    @property
    def build_name(self):
        """Its build directory's name: a preemption model of its own
        builds apart, so that switching models rebuilds nothing."""
        return "%s-preempt-%s" % (self.name, self.preempt) if self.preempt else self.name

    def make_args(self):
        """What make needs besides ARCH= to build for this config."""
        if not self.cross:
            return []
        return ["CC=%s" % (self.cross_cc or CROSS_CC), "CROSS_COMPILE=%s-" % self.cross]

    def compiler(self):
        """The compiler command, as a list, that builds this kernel."""
        return [self.cross_cc or CROSS_CC, "--target=%s" % self.cross] if self.cross \
            else ["gcc"]


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
    # The compiler: the host's gcc, or clang for a cross ABI (cflag is then
    # its --target=). EXTRA=DIR's suffix of a build for this ABI: the gcc
    # flag (m64, m32, mx32), or the name given here.
    cc: str = "gcc"
    extra_suffix: str = ""
    x86: bool = True          # can run x86-only cases (int $0x80, x32...)
    uapi_arch: str = "x86"    # make ARCH= of the kernel headers its programs see
    # Directories of helper programs its cases run that are built -m64,
    # not with cflag, into /helpers: a 64-bit tracer sees and sets all of
    # an ia32 task's registers, which no 32-bit program can.
    helpers64: tuple = ()
    # Built with Debian's cross gcc of this triple (toolchain.py) and
    # cflag, not with `cc`.
    gcc_triple: str = ""
    # Libraries other programs than the project's (mainline's selftests)
    # link beyond their Makefile's: o32 has no 64-bit atomic instruction.
    ldlibs: tuple = ()

    @property
    def suffix(self):
        """EXTRA=DIR file suffix of a build for this ABI."""
        return self.extra_suffix or self.cflag.lstrip("-")

    def compiler(self):
        """The compiler command, as a list, for this ABI's programs."""
        return [self.cc, self.cflag]


# Debian 12's gcc-multilib (the x86 ABIs' -m32 and -mx32) conflicts with
# every gcc-<triple> cross compiler, so the ARM kernels and programs are
# built with clang, which is a cross compiler for every target it knows,
# linking with binutils-<triple> against libc6-dev-<arch>-cross and the
# cross libgcc (libgcc-12-dev-<arch>-cross).
CROSS_CC = "clang"
ARM64_TRIPLE = "aarch64-linux-gnu"
ARMHF_TRIPLE = "arm-linux-gnueabihf"
# MIPS is built with Debian's cross gcc (toolchain.py): one compiler,
# -mabi= choosing among the three ABIs of one kernel.
MIPS64EL_TRIPLE = "mips64el-linux-gnuabi64"
MIPS64_TRIPLE = "mips64-linux-gnuabi64"       # big-endian
EM_MIPS = 8
# 64-bit PowerPC, big-endian (Debian's ppc64 port: ELFv1), built with
# Debian's cross gcc, whose -m32 is the 32-bit ABI of its lib32.
PPC64_TRIPLE = "powerpc64-linux-gnu"
EM_PPC, EM_PPC64 = 20, 21
# s390x, big-endian, and its 31-bit ABI (Debian's s390x multilib):
# Debian's cross gcc, -m64 or -m31.
S390X_TRIPLE = "s390x-linux-gnu"
EM_S390 = 22


def _mips_userland(name, abi, elf_class, libdirs, libc_package, runtime_prefix, tests_dirs,
                   ldlibs=(), big_endian=False):
    """A MIPS64 ABI of Debian's mips64el port, or of the same three on
    big-endian MIPS64 (which Debian builds cross packages for but no
    port, hence no busybox): n64, n32 (ILP32 with 64-bit registers,
    MIPS's x32) or o32 (MIPS's ia32). `libdirs`: where Debian's cross
    packages put its shared libraries, under /usr/<triple>: n64's in lib
    (its loader alone in lib64), n32's in lib32, o32's in libo32 (its
    loader, /lib/ld.so.1, linked from lib)."""
    triple = MIPS64_TRIPLE if big_endian else MIPS64EL_TRIPLE
    return Userland(name, "-mabi=%s" % abi, tests_dirs, "" if big_endian else "mips64el",
                    (elf_class, EM_MIPS) + ((BIG_ENDIAN,) if big_endian else ()),
                    tuple("/usr/%s/%s" % (triple, d) for d in libdirs),
                    libc_package % ("mips64" if big_endian else "mips64el"), runtime_prefix,
                    "mips64" if big_endian else "mips64el", cc="gcc",
                    extra_suffix=name, x86=False, uapi_arch="mips",
                    gcc_triple=triple, ldlibs=ldlibs)


def _mips_userlands(prefix, big_endian):
    return {
        prefix + "n64": _mips_userland(prefix + "n64", "64", 2, ("lib64", "lib"),
                                       "libc6-%s-cross", "lib", (), big_endian=big_endian),
        prefix + "n32": _mips_userland(prefix + "n32", "n32", 1, ("lib32",),
                                       "libc6-mipsn32-%s-cross", "libn32", ("tests32",),
                                       big_endian=big_endian),
        prefix + "o32": _mips_userland(prefix + "o32", "32", 1, ("libo32",),
                                       "libc6-mips32-%s-cross", "lib32", ("tests32",),
                                       ldlibs=("-latomic",), big_endian=big_endian)}


def _ppc_userland(name, flag, elf, libdir, libc_package, runtime_prefix, deb_arch,
                  tests_dirs, ldlibs=()):
    """A user space of the big-endian ppc64 kernel: native ppc64, or the
    32-bit PowerPC ABI through its compat entry. Debian builds no busybox
    for either (ppc64 is no release architecture): make shell refuses."""
    return Userland(name, flag, tests_dirs, "", elf + (BIG_ENDIAN,),
                    ("/usr/%s/%s" % (PPC64_TRIPLE, libdir),), libc_package, runtime_prefix,
                    deb_arch, cc="gcc", extra_suffix=name, x86=False, uapi_arch="powerpc",
                    gcc_triple=PPC64_TRIPLE, ldlibs=ldlibs)


def _s390_userland(name, flag, elf_class, libdir, libc_package, runtime_prefix, deb_arch,
                   tests_dirs, busybox_arch):
    """A user space of the s390x kernel: native s390x, or the 31-bit ABI
    through its compat entry (31-bit pointers in 32-bit words: the
    kernel's compat_ptr() clears bit 31)."""
    return Userland(name, flag, tests_dirs, busybox_arch, (elf_class, EM_S390, BIG_ENDIAN),
                    ("/usr/%s/%s" % (S390X_TRIPLE, libdir),), libc_package, runtime_prefix,
                    deb_arch, cc="gcc", extra_suffix=name, x86=False, uapi_arch="s390",
                    gcc_triple=S390X_TRIPLE)


USERLANDS = {
    "lp64": Userland("lp64", "-m64", ("tests64",), "amd64", (2, 62),
                     ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                      "/lib64", "/usr/lib64", "/lib", "/usr/lib"),
                     "libc6", "lib", "amd64"),
    "ilp32": Userland("ilp32", "-m32", ("tests32",), "i386", (1, 3),
                      ("/lib32", "/usr/lib32", "/lib/i386-linux-gnu",
                       "/usr/lib/i386-linux-gnu", "/lib", "/usr/lib"),
                      "libc6-i386", "lib32", "i386", helpers64=("helpers64",)),
    # ILP32 in long mode: 32-bit pointers, x86_64 instructions and ELF
    # machine, its own system call numbers (__X32_SYSCALL_BIT). It runs
    # the ILP32 cases and its own (testsx32: the 64-bit calls it can make).
    "x32": Userland("x32", "-mx32", ("tests32", "testsx32"), "amd64", (1, 62),
                    ("/libx32", "/usr/libx32", "/lib/x86_64-linux-gnux32",
                     "/usr/lib/x86_64-linux-gnux32", "/lib", "/usr/lib"),
                    "libc6-x32", "libx32", "x32"),
    # AAPCS64 and ARM EABI hard-float, Debian's arm64 and armhf. tests64/
    # is x86's (int $0x80); tests32/ holds the ILP32 cases every 32-bit
    # ABI runs (a list above 3 GiB, 32-bit offset arithmetic).
    "arm64": Userland("arm64", "--target=" + ARM64_TRIPLE, (), "arm64", (2, 183),
                      ("/usr/%s/lib" % ARM64_TRIPLE,),
                      "libc6-arm64-cross", "lib", "arm64",
                      cc=CROSS_CC, extra_suffix="aarch64", x86=False, uapi_arch="arm64"),
    "armhf": Userland("armhf", "--target=" + ARMHF_TRIPLE, ("tests32",), "armhf", (1, 40),
                      ("/usr/%s/lib" % ARMHF_TRIPLE,),
                      "libc6-armhf-cross", "lib", "armhf",
                      cc=CROSS_CC, extra_suffix="armhf", x86=False, uapi_arch="arm"),
    **_mips_userlands("mips-", big_endian=False),
    **_mips_userlands("mipsbe-", big_endian=True),
    "ppc64": _ppc_userland("ppc64", "-m64", (2, EM_PPC64), "lib", "libc6-ppc64-cross", "lib",
                           "ppc64", ()),
    # 32-bit PowerPC has no 64-bit atomic instruction either (futex_numa).
    "ppc32": _ppc_userland("ppc32", "-m32", (1, EM_PPC), "lib32",
                           "libc6-powerpc-ppc64-cross", "lib32", "powerpc", ("tests32",),
                           ldlibs=("-latomic",)),
    "s390x": _s390_userland("s390x", "-m64", 2, "lib", "libc6-s390x-cross", "lib", "s390x",
                            ("tests-s390x",), "s390x"),
    "s390": _s390_userland("s390", "-m31", 1, "lib32", "libc6-s390-s390x-cross", "lib32",
                           "s390", ("tests32",), ""),
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
    # The guest's console (kernel messages) and the port init writes the
    # KTAP results to: two 8250 UARTs on x86's pc; on ARM's virt, which
    # has one UART (the PL011), a virtio console for the results.
    console: str = "ttyS0"
    results_port: str = "ttyS1"
    # make coverage: where init writes the kernel's gcov counters (a third
    # UART on x86's pc; a second virtio console on ARM's virt).
    coverage_port: str = "ttyS2"
    # Its hvc* ports are QEMU's -serial ones (pseries: a hypervisor
    # console per serial port, in order), not virtio consoles (virt).
    serial_hvc: bool = False
    # QEMU arguments of its machine's own, after the rest.
    qemu_args: tuple = ()
    # The virtio-serial controller of its hvc* virtio consoles: on
    # virtio-mmio (virt), or on the channel subsystem (s390's ccw).
    virtio_serial: str = "virtio-serial-device"
    # In its architecture's group (and "all"); a target outside them runs
    # only when TARGETS names it.
    grouped: bool = True
    # The most vCPUs its machine and CPU model can run (0: no limit). A
    # case that needs more is "-" there, with the reason (compare.py).
    max_cpus: int = 0
    max_cpus_why: str = ""

    @property
    def user(self):
        return USERLANDS[self.userland]

    @property
    def x86(self):
        """Is the kernel an x86 one (TSC hints, x86-only cases)?"""
        return KERNEL_CONFIGS[self.kconfig].arch in ("x86_64", "i386")


KERNEL_CONFIGS = {
    "x86_64": KernelConfig("x86_64", "x86_64",
                           ("common.config", "x86_64.config", "x32.config"),
                           "arch/x86/boot/bzImage", tiny_fragments=("gcov-runtime.config",)),
    "i386": KernelConfig("i386", "i386",
                         ("common.config", "i386.config"),
                         "arch/x86/boot/bzImage", tiny_fragments=("gcov-runtime.config",)),
    # x86_64 without CONFIG_COMPAT: bisect-check builds it, and the
    # x86_64-noia32 target (in no group) boots it.
    "x86_64-noia32": KernelConfig("x86_64-noia32", "x86_64",
                                  ("common.config", "x86_64.config",
                                   "no-ia32.config"),
                                  "arch/x86/boot/bzImage"),
    # ARM, cross-built with clang: one arm64 kernel for the native and the
    # AArch32 compat targets, one native 32-bit kernel.
    "arm64": KernelConfig("arm64", "arm64", ("common.config", "arm64.config"),
                          "arch/arm64/boot/Image", cross=ARM64_TRIPLE),
    "arm": KernelConfig("arm", "arm", ("common.config", "arm.config"),
                        "arch/arm/boot/zImage", cross=ARMHF_TRIPLE),
    # Malta boots the ELF image itself.
    "mips64el": KernelConfig("mips64el", "mips", ("common.config", "mips64el.config"),
                             "vmlinux", cross=MIPS64EL_TRIPLE,
                             gcc_triple=MIPS64EL_TRIPLE),
    "mips64": KernelConfig("mips64", "mips", ("common.config", "mips64el.config",
                                              "mips64-be.config"),
                           "vmlinux", cross=MIPS64_TRIPLE, gcc_triple=MIPS64_TRIPLE),
    # pseries boots the ELF image through QEMU's Open Firmware (VOF).
    "ppc64": KernelConfig("ppc64", "powerpc", ("common.config", "ppc64.config"), "vmlinux",
                          cross=PPC64_TRIPLE, gcc_triple=PPC64_TRIPLE),
    "s390x": KernelConfig("s390x", "s390", ("common.config", "s390x.config"),
                          "arch/s390/boot/bzImage", cross=S390X_TRIPLE,
                          gcc_triple=S390X_TRIPLE),
}

# What bisect-check builds after every patch of the series.
BISECT_CONFIGS = ("x86_64", "x86_64-noia32", "i386", "arm64", "arm", "mips64el", "mips64",
                  "ppc64", "s390x")


def bisect_configs(targets=None):
    """The configs bisect-check builds: all of BISECT_CONFIGS, or, given
    targets (TARGETS=x86 on one runner, arm on another), their kernels',
    with x86_64 without IA32 emulation beside x86_64."""
    if targets is None:
        return BISECT_CONFIGS
    wanted = {t.kconfig for t in targets}
    if "x86_64" in wanted:
        wanted.add("x86_64-noia32")
    return tuple(kc for kc in BISECT_CONFIGS if kc in wanted)

# CPU features that decide how the kernel's user accesses are hardened:
# SMAP (a user access outside a STAC window faults) and SMEP, and SSE2
# (without it, i386 has no LFENCE for barrier_nospec()), and LA57: the
# kernel runs with 5-level paging (it clears the flag otherwise), so
# TASK_SIZE_MAX, which mask_user_address() clamps to, is read at run time.
# The guest reports which of them it saw; the matrix shows them per target.
HARDENING_CPU_FLAGS = ("smap", "smep", "sse2", "la57")

# QEMU's generic models plus SMAP and SMEP (TCG enforces both), so that a
# user access outside a STAC/CLAC window is caught, not passed over.
X86_64_CPU = "qemu64,+smap,+smep"
I386_CPU = "qemu32,+smap,+smep"
ARM64_CPU = "cortex-a57"
ARM_CPU = "cortex-a15"
ARM_VIRT_PORTS = {"console": "ttyAMA0", "results_port": "hvc0", "coverage_port": "hvc1"}
# A MIPS64 Release 2 CPU, as Debian's mips64el port requires. QEMU's
# Malta runs several CPUs only of models with a Coherence Manager (the
# I6400, MIPS64 Release 6, whose encodings Debian's R2 programs do not
# run) or with MIPS MT (the 34Kf, 32-bit): one CPU here.
MIPS64_CPU = "MIPS64R2-generic"
MIPS_MALTA = {"max_cpus": 1,
              "max_cpus_why": "QEMU's Malta runs one MIPS64 Release 2 CPU (it has SMP only "
                              "for Release 6 and MIPS MT models)"}

# QEMU's pseries with its own small Open Firmware (x-vof=on: no SLOF to
# boot through) and a POWER9: the console (hvc0), the results (hvc1) and
# the coverage counters (hvc2) on three hypervisor consoles.
PPC64_CPU = "power9"
# A -prom-env variable has QEMU format the NVRAM as SLOF would (a
# system and a free partition): VOF leaves it blank, and the kernel
# reports a blank NVRAM as "WARNING: nvram corruption detected".
PSERIES = {"console": "hvc0", "results_port": "hvc1", "coverage_port": "hvc2",
           "serial_hvc": True, "qemu_args": ("-prom-env", "rfm=1")}

# QEMU's s390-ccw-virtio with its generic CPU model: the console on the
# SCLP's VT220 (ttysclp0, QEMU's first -serial there), the results and
# the coverage counters on virtio consoles on the channel subsystem.
S390X_CPU = "qemu"
S390_CCW = {"console": "ttysclp0", "results_port": "hvc0", "coverage_port": "hvc1",
            "virtio_serial": "virtio-serial-ccw"}

# PREEMPT=: the preemption models a tinyconfig kernel can be built with
# (kconfig/preempt-MODEL.config). Unset, each kernel keeps its tree's
# own: PREEMPT_NONE on 6.1; on 7.3, whose x86 and arm64 have no
# PREEMPT_NONE or PREEMPT_VOLUNTARY any more, PREEMPT_LAZY. Every
# tinyconfig kernel is SMP (kconfig/x86_64.config; arm64 always is), so
# CPUS=N needs no other build.
PREEMPT_MODELS = ("none", "voluntary", "full")

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
    # 5-level paging: the x86_64 kernel on a CPU with LA57. Only a kernel
    # with CONFIG_X86_5LEVEL (the distro variant) uses it, so it is in no
    # group: TARGETS="x86 x86_64-la57" (make distro-check) names it.
    Target("x86_64-la57", "x86_64", "lp64", "lp64",
           "qemu-system-x86_64", "pc", X86_64_CPU + ",+la57",
           cpu_flags=("smap", "smep", "la57"), grouped=False),
    # A 64-bit kernel without CONFIG_COMPAT (no IA32 emulation, no x32):
    # where FUTEX_ROBUST_LIST32 has no compat list behind it. In no group:
    # TARGETS="x86 x86_64-noia32" names it (docs/mainline.md).
    Target("x86_64-noia32", "x86_64-noia32", "lp64", "lp64",
           "qemu-system-x86_64", "pc", X86_64_CPU, cpu_flags=("smap", "smep"),
           grouped=False),
    # ARM on QEMU's virt machine. The Cortex-A57 runs AArch32 at EL0, so
    # the same arm64 kernel runs armhf programs through its compat entry;
    # the native 32-bit kernel runs on a Cortex-A15 (ARMv7, VFPv4, NEON).
    Target("arm64", "arm64", "arm64", "lp64",
           "qemu-system-aarch64", "virt", ARM64_CPU, **ARM_VIRT_PORTS),
    Target("arm64-aarch32", "arm64", "armhf", "ilp32",
           "qemu-system-aarch64", "virt", ARM64_CPU, **ARM_VIRT_PORTS),
    Target("armhf", "arm", "armhf", "ilp32",
           "qemu-system-arm", "virt", ARM_CPU, **ARM_VIRT_PORTS),
    # One little-endian and one big-endian MIPS64 kernel on QEMU's Malta
    # board, their three ABIs each.
    *(Target(name, kconfig, userland, abi, "qemu-system-" + kconfig, "malta", MIPS64_CPU,
             **MIPS_MALTA)
      for name, kconfig, userland, abi in (
          ("mips64el", "mips64el", "mips-n64", "lp64"),
          ("mips64el-n32", "mips64el", "mips-n32", "ilp32"),
          ("mips64el-o32", "mips64el", "mips-o32", "ilp32"),
          ("mips64", "mips64", "mipsbe-n64", "lp64"),
          ("mips64-n32", "mips64", "mipsbe-n32", "ilp32"),
          ("mips64-o32", "mips64", "mipsbe-o32", "ilp32"))),
    # The big-endian ppc64 kernel: native ppc64 and 32-bit PowerPC.
    Target("ppc64", "ppc64", "ppc64", "lp64", "qemu-system-ppc64", "pseries,x-vof=on",
           PPC64_CPU, **PSERIES),
    Target("ppc64-ppc32", "ppc64", "ppc32", "ilp32", "qemu-system-ppc64", "pseries,x-vof=on",
           PPC64_CPU, **PSERIES),
    # The s390x kernel: native s390x and the 31-bit s390 ABI.
    Target("s390x", "s390x", "s390x", "lp64", "qemu-system-s390x", "s390-ccw-virtio",
           S390X_CPU, **S390_CCW),
    Target("s390x-s390", "s390x", "s390", "ilp32", "qemu-system-s390x", "s390-ccw-virtio",
           S390X_CPU, **S390_CCW),
)

# TARGETS=GROUP: the targets of an architecture, or all of them. Without
# TARGETS the x86 ones run: the ARM ones triple the cold build and the
# guests' time (docs/timing.md), and run in make check as a short step.
def _arch_of(t):
    return KERNEL_CONFIGS[t.kconfig].arch


# The groups that are architectures (bisect-check runs one a runner);
# TARGET_GROUPS adds "be" (every big-endian target) and "all".
ARCH_GROUPS = ("x86", "arm", "mips", "ppc", "s390")
TARGET_GROUPS = {
    "x86": tuple(t.name for t in TARGETS if t.x86 and t.grouped),
    "arm": tuple(t.name for t in TARGETS if _arch_of(t) in ("arm64", "arm") and t.grouped),
    "mips": tuple(t.name for t in TARGETS if _arch_of(t) == "mips" and t.grouped),
    "ppc": tuple(t.name for t in TARGETS if _arch_of(t) == "powerpc" and t.grouped),
    "s390": tuple(t.name for t in TARGETS if _arch_of(t) == "s390" and t.grouped),
    "be": tuple(t.name for t in TARGETS if BIG_ENDIAN in t.user.elf and t.grouped),
    "all": tuple(t.name for t in TARGETS if t.grouped),
}

# What the distro variants add to Debian's config, per kernel build.
DISTRO_FRAGMENTS = {"x86_64": ("distro.config",), "i386": ("distro.config",)}
DISTRO_PAE_FRAGMENTS = {"i386": ("distro.config",)}
DISTRO_PAE_PACKAGE = {"i386": "linux-image-686-pae:i386"}

# What a kernel variant is to the comparer ("role"):
# - a subject is what the project proves: every case passes, and agrees
#   across targets; each of its references ("compared_with") must give
#   the same status and observations on every case, except where that
#   reference's deviations file names the case;
# - a reference is a kernel the subjects are held against (stock,
#   mainline, a distribution's own): a case its deviations file names
#   is expected to fail there; any other failure is one;
# - the negative control must fail what tests/negative-control.txt says.
SUBJECT, REFERENCE, CONTROL = "subject", "reference", "negative control"
ROLES = (SUBJECT, REFERENCE, CONTROL)
# A reference's deviations file (in patches/), unless it names another.
DEVIATIONS = "deviations.txt"

# What the mainline variants add to the series' fragments: what 7.3's
# ABI needs (RSEQ, for its robust unlock).
MAINLINE_FRAGMENTS = {"x86_64": ("mainline.config", "mainline-x86.config"),
                      "x86_64-noia32": ("mainline.config", "mainline-x86.config"),
                      "i386": ("mainline.config", "mainline-x86.config"),
                      "arm64": ("mainline.config",), "arm": ("mainline.config",),
                      "mips64el": ("mainline.config",), "mips64": ("mainline.config",),
                      "ppc64": ("mainline.config",),
                      "s390x": ("mainline.config", "mainline-s390x.config")}
# The test-only patch directory ("+DIR") that is not in patches/: the mails
# for mainline, at the top of the repo (tree.patches_for).
UPSTREAM = "upstream"

# Kernel variants, in the order the matrix shows them. "patches" says which
# prefix of patches/series the variant applies: all, the first one, none;
# "tree", the Debian tree, when not the series' linux-source-6.1.
KERNEL_VARIANTS = {
    "series": {"role": SUBJECT, "patches": "all",
               "compared_with": ("stock", "mainline", "mainline-norseq", "trixie"),
               "about": "Debian's tree with patches/series applied"},
    "stock": {"role": REFERENCE, "patches": "none",
              "about": "Debian's linux-source-6.1 as shipped"},
    # Two vCPUs at least: its death cases must all run to show they can
    # fail, and three of them are races that skip on one CPU.
    "baseline": {"role": CONTROL, "patches": "first", "min_cpus": 2,
                 "about": "negative control: only the removal patch 0001"},
    # The series with lockdep, atomic-sleep and lockup checks, and KASAN
    # where the arch has it: for hostile lists and concurrent deaths
    # (make fuzz and make stress; CPUS=2 PREEMPT=full for the races).
    "debug": {"role": SUBJECT, "patches": "all",
              "fragments": {"x86_64": ("debug.config", "debug-hardlockup.config",
                                       "debug-kasan.config"),
                            "i386": ("debug.config", "debug-hardlockup.config"),
                            "arm64": ("debug.config", "debug-kasan.config"),
                            "arm": ("debug.config", "debug-kasan.config")},
              "about": "series + kconfig/debug*.config"},
    # Debian's own kernels (linux-image-amd64, linux-image-686), downloaded
    # and unpacked into the cache, booted with our initramfs.
    "debian": {"role": REFERENCE, "prebuilt": "debian",
               "about": "Debian's prebuilt linux-image-amd64 / -686"},
    # What a distribution builds: the series, and stock, from Debian's own
    # config (full hardening, retpolines, 5-level paging, objtool's
    # uaccess validation), modules off. Slow: not in make check.
    "distro": {"role": SUBJECT, "patches": "all", "base": "debian",
               "fragments": DISTRO_FRAGMENTS, "compared_with": ("distro-stock",),
               "about": "series, built from Debian's own config (kconfig/distro.config)"},
    "distro-stock": {"role": REFERENCE, "patches": "none", "base": "debian",
                     "fragments": DISTRO_FRAGMENTS,
                     "about": "stock, built from Debian's own config (kconfig/distro.config)"},
    # The same from Debian's other i386 flavour, -686-pae (PAE page tables,
    # 64 GiB of high memory, NX): i386 only.
    "distro-pae": {"role": SUBJECT, "patches": "all", "base": "debian",
                   "base_package": DISTRO_PAE_PACKAGE, "compared_with": ("distro-pae-stock",),
                   "fragments": DISTRO_PAE_FRAGMENTS,
                   "about": "series, built from Debian's linux-image-686-pae config"},
    "distro-pae-stock": {"role": REFERENCE, "patches": "none", "base": "debian",
                         "base_package": DISTRO_PAE_PACKAGE,
                         "fragments": DISTRO_PAE_FRAGMENTS,
                         "about": "stock, built from Debian's linux-image-686-pae config"},
    # A kernel built elsewhere: BZIMAGE=path [BZIMAGE32=path].
    "user": {"role": REFERENCE, "prebuilt": "user",
             "about": "the user's own bzImage (BZIMAGE, BZIMAGE32)"},
    # make bench only: the seed's one-million-lock experiment.
    "bench-1m": {"role": SUBJECT, "patches": "all+bench",
                 "about": "series + patches/bench (ROBUST_LIST_LIMIT 1048576)"},
    # make perf-gate: the series and stock, each with a counter of the
    # instructions futex_exit_release() takes (x86; patches/bench-exit).
    "bench-exit": {"role": SUBJECT, "patches": "all+bench-exit+bench-signal",
                   "about": "series + patches/bench-exit and bench-signal (exit release "
                            "and signal hook counters)"},
    "bench-exit-stock": {"role": REFERENCE, "patches": "none+bench-exit",
                         "about": "stock + patches/bench-exit (exit release counter)"},
    # make coverage: the series with the kernel's gcov on the files it
    # touches (patches/coverage); init writes the counters out after the
    # suites. The gcov runtime is in every x86 kernel's config
    # (kconfig/gcov-runtime.config), so this builds only the profiled
    # files, in the series' build directory.
    "coverage": {"role": SUBJECT, "patches": "all+coverage",
                 "configs": ("x86_64", "i386"),     # x86: gcc's counters (ARM: clang's)
                 "coverage": True,
                 "about": "series + patches/coverage (gcov on the files it touches)"},
    # Test only: de_thread() sleeps on request where a non-leader's exec
    # can be raced (before its group-exit check, before its TID change),
    # so the exec cases act inside those windows every time.
    "exec-window": {"role": SUBJECT, "patches": "all+exec-window",
                    "append": "exec_window_ms=1000",
                    "about": "series + patches/exec-window, exec_window_ms=1000"},
    # The second oracle: mainline's own robust unlock, in Debian's
    # linux-source-7.3 (patches/trees.json pins it), from the same
    # fragments as the series plus what its ABI needs (RSEQ).
    # patches/deviations-upstream.txt names what upstream/ fixes.
    "mainline": {"role": REFERENCE, "tree": "linux-source-7.3", "patches": "none",
                 "deviations": ("deviations-mainline.txt", "deviations-upstream.txt"),
                 # 7.3 needs LLVM 17 or later (scripts/min-tool-version.sh);
                 # Debian 12's clang is 14, its clang-19 is newer.
                 "cross_cc": "clang-19",
                 "fragments": MAINLINE_FRAGMENTS,
                 "about": "Debian's linux-source-7.3 as shipped (mainline), + "
                          "kconfig/mainline.config"},
    # Mainline with the kernel mails of upstream/ (make upstream-check),
    # built incrementally in mainline's slot: it must differ from mainline only
    # where patches/deviations-upstream.txt says, and from the series
    # only where deviations-mainline.txt does.
    "mainline-fix": {"role": REFERENCE, "tree": "linux-source-7.3",
                     "patches": "none+" + UPSTREAM, "slot": "mainline",
                     "deviations": "deviations-mainline.txt",
                     "compared_with": (("mainline", "deviations-upstream.txt"),),
                     "cross_cc": "clang-19", "fragments": MAINLINE_FRAGMENTS,
                     "about": "mainline + the kernel mails of upstream/"},
    # Test only: mainline-fix with patches/exec-window-mainline (the
    # exec-window variant's delay, on 7.3), booted with exec_window_ms=
    # 1000: make mutate-upstream's mutants of the exec fix that only a
    # race inside de_thread() shows (x86_64).
    "mainline-fix-window": {"role": REFERENCE, "tree": "linux-source-7.3",
                            "patches": "none+%s+exec-window-mainline" % UPSTREAM,
                            "slot": "mainline", "append": "exec_window_ms=1000",
                            "deviations": "deviations-mainline.txt",
                            "fragments": {"x86_64": MAINLINE_FRAGMENTS["x86_64"]},
                            "about": "mainline-fix + patches/exec-window-mainline, "
                                     "exec_window_ms=1000"},
    # Mainline built as tinyconfig has it, without rseq: 7.3's
    # FUTEX_ROBUST_UNLOCK depends on it, so no vDSO try-unlock and no
    # fixup (the series' do not: patches 13 and 14). x86 only.
    "mainline-norseq": {"role": REFERENCE, "tree": "linux-source-7.3", "patches": "none",
                        "deviations": ("deviations-mainline.txt", "deviations-upstream.txt",
                                       "deviations-mainline-norseq.txt"),
                        "fragments": {"x86_64": (), "i386": ()},
                        "configs": ("x86_64", "i386"),
                        "about": "Debian's linux-source-7.3 as shipped, without CONFIG_RSEQ "
                                 "(tinyconfig's)"},
    # make perf-gate and make bench: mainline with the exit release counter
    # (patches/bench-exit-mainline, 7.3's version of bench-exit), built
    # incrementally in mainline's own slot, from its config (x86 only).
    "bench-exit-mainline": {"role": REFERENCE, "tree": "linux-source-7.3",
                            "patches": "none+bench-exit-mainline", "slot": "mainline",
                            "fragments": {kc: MAINLINE_FRAGMENTS[kc] for kc in ("x86_64", "i386")},
                            "about": "mainline + patches/bench-exit-mainline (exit release "
                                     "counter)"},
    # Another Debian tree the same way: trixie's own kernel, which has
    # neither the 2026 unlock nor the exec fix.
    "trixie": {"role": REFERENCE, "tree": "linux-source-6.12", "patches": "none",
               "about": "Debian's linux-source-6.12 (trixie) as shipped"},
}

def kernel_config(name, kernel=None, preempt=None):
    """The KernelConfig `name` as kernel variant `kernel` builds it (its
    own cross compiler, if it names one), with preemption model
    `preempt` (PREEMPT=) when its config is tinyconfig's: a kernel from
    Debian's config is PREEMPT_DYNAMIC and takes the model on its command
    line instead (preempt_append())."""
    kconfig = KERNEL_CONFIGS[name]
    cross_cc = KERNEL_VARIANTS.get(kernel, {}).get("cross_cc", "") if kernel else ""
    if cross_cc and kconfig.cross:
        kconfig = dataclasses.replace(kconfig, cross_cc=cross_cc)
    if preempt and not debian_config(kernel):
        kconfig = dataclasses.replace(
            kconfig, preempt=preempt,
            tiny_fragments=kconfig.tiny_fragments + ("preempt-%s.config" % preempt,))
    return kconfig


def debian_config(kernel):
    """Is `kernel` one of Debian's own kernels, or built from Debian's
    config (both PREEMPT_DYNAMIC)?"""
    variant = KERNEL_VARIANTS.get(kernel, {}) if kernel else {}
    return variant.get("prebuilt") == "debian" or bool(variant.get("base"))


def preempt_append(kernel, preempt):
    """What the command line of `kernel` needs for PREEMPT=`preempt`:
    preempt= on Debian's PREEMPT_DYNAMIC kernels; nothing on the others,
    whose model is built in (kernel_config())."""
    return "preempt=%s" % preempt if preempt and debian_config(kernel) else ""


def variant_tree(kernel):
    """The Debian tree (a key of patches/trees.json) a built variant
    starts from, None for the series' own (linux-source-6.1)."""
    return KERNEL_VARIANTS[kernel].get("tree")


def variant_slot(kernel):
    """The tree slot, hence the build directories, a built variant uses.
    A variant that adds only test-only patches to the series, stock or
    the negative control shares their slot, so that it is an incremental
    build of theirs (a few files), not a kernel from scratch; one with a
    config of its own (fragments, Debian's config) has its own."""
    variant = KERNEL_VARIANTS[kernel]
    if variant.get("slot"):     # test-only patches on another tree's variant
        return variant["slot"]
    if variant.get("fragments") or variant.get("base") or variant.get("tree"):
        return kernel
    return {"all": "series", "first": "baseline", "none": "stock"}[
        variant["patches"].split("+")[0]]


def variant_configs(kernel):
    """The kernel configs a variant is built for: those its `configs` or
    its `fragments` name, or all."""
    variant = KERNEL_VARIANTS[kernel]
    names = variant.get("configs") or tuple(variant.get("fragments", {})) or KERNEL_CONFIGS
    return tuple(names)


# User-space ABIs a tree's kernels no longer have: a variant of that tree
# cannot boot their targets (their init is of that ABI). The native
# target shows the refusal as a row instead (tests-s390x/compat_exec.c).
ABIS_REMOVED = {
    "linux-source-7.3": {"s390": "7.3 has no 31-bit compat: a 31-bit program is ENOEXEC "
                                 "there, which compat_exec.exec_31bit_program on s390x shows"},
}


def tree_lacks_abi(tree, userland):
    """Why the Debian tree `tree` has no `userland` ABI, or None."""
    return ABIS_REMOVED.get(tree, {}).get(userland)


def variant_lacks_abi(kernel, target):
    """Why `kernel` cannot run `target`'s user space, or None."""
    return tree_lacks_abi(KERNEL_VARIANTS[kernel].get("tree"), target.userland)


def has_series(kernel):
    """Does this kernel variant carry the whole series (so that a mutant
    of the series can be built on it)?"""
    variant = KERNEL_VARIANTS.get(kernel)
    return variant is None or (variant.get("patches", "").split("+")[0] == "all"
                               and not variant.get("tree"))


def role(kernel):
    """SUBJECT, REFERENCE or CONTROL. A column that is no variant (make
    mutate's "mutant") is a subject: it is what is being proven."""
    return KERNEL_VARIANTS.get(kernel, {}).get("role", SUBJECT)


def deviations_files(kernel):
    """The files in patches/ naming the cases on which reference `kernel`
    may differ from its subjects (and fail), () for a subject."""
    if role(kernel) != REFERENCE:
        return ()
    files = KERNEL_VARIANTS[kernel].get("deviations", DEVIATIONS)
    return (files,) if isinstance(files, str) else tuple(files)


@dataclass(frozen=True)
class Comparison:
    """A kernel held against one of its references ("compared_with"): a
    subject, or a reference held against another (mainline-fix against
    mainline). `files`: the deviations files of this comparison, when it
    names its own; otherwise the reference's."""
    subject: str
    reference: str
    files: tuple = ()

    @property
    def deviations(self):
        return self.files or deviations_files(self.reference)

    @property
    def title(self):
        return "%s vs %s" % (self.subject, self.reference)


def _reference(entry):
    """A "compared_with" entry: a reference's name, or (name, the file
    naming where the two may differ)."""
    return (entry, ()) if isinstance(entry, str) else (entry[0], tuple(entry[1:]))


def comparisons(kernels):
    """The Comparisons among `kernels`: each kernel's references that are
    there too, in the order of the table."""
    return tuple(Comparison(s, r, files) for s in kernels
                 for r, files in map(_reference, KERNEL_VARIANTS.get(s, {}).get(
                     "compared_with", ()))
                 if r in kernels)


def kernel_coverage(kernel):
    """Does this kernel variant write its gcov counters out (make coverage)?"""
    return bool(KERNEL_VARIANTS.get(kernel, {}).get("coverage"))


def guest_cpus(kernel, asked, target=None):
    """The vCPUs a guest of `kernel` boots with: CPUS= (`asked`), or more
    where the variant needs more for its cases to run at all; never more
    than `target`'s machine runs."""
    cpus = max(asked, KERNEL_VARIANTS.get(kernel, {}).get("min_cpus", 1))
    return min(cpus, target.max_cpus) if target is not None and target.max_cpus else cpus


def kernel_append(kernel):
    """What a kernel variant needs on its command line, besides the target's."""
    return KERNEL_VARIANTS.get(kernel, {}).get("append", "")


# The perf gate's kernels, each with the exit release counter, by the
# column they stand for.
PERF_GATE_KERNELS = {"series": "bench-exit", "stock": "bench-exit-stock",
                     "mainline": "bench-exit-mainline"}


def target(name):
    for t in TARGETS:
        if t.name == name:
            return t
    raise KeyError(name)


def select_targets(spec):
    """TARGETS=a,b or a group (x86, arm, all) -> Target tuple, in table
    order. (The default, when TARGETS is unset, is the knob table's.)"""
    spec = spec or ""
    known = "%s; groups: %s" % (", ".join(t.name for t in TARGETS),
                                ", ".join(TARGET_GROUPS))
    wanted = [s for s in spec.replace(",", " ").split() if s]
    if not wanted:
        raise ValueError("names no target; known: %s" % known)
    unknown = [w for w in wanted
               if w not in {t.name for t in TARGETS} and w not in TARGET_GROUPS]
    if unknown:
        raise ValueError("unknown target(s) %s; known: %s" % (", ".join(unknown), known))
    names = {n for w in wanted for n in TARGET_GROUPS.get(w, (w,))}
    return tuple(t for t in TARGETS if t.name in names)


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
