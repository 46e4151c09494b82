"""The one pipeline: kernels x targets -> images -> boots -> guest runs.

Every command that boots guests goes through it:

    p = Pipeline(kernels, targets, suite="tests", extra=None, libc="static")
    p.build()                       # kernel images and initramfs images
    backend = p.backend()           # where the guests run (LocalQemu here)
    runs = boot_all(backend, p.guests(out))   # {kernel: {target: GuestRun}}

and the comparer (compare.build_matrix) turns the runs into a matrix.

The boot step is the seam. A backend's run(guests, ended) boots Guest
requests and, for each, leaves the guest's console.log and results.ktap
in the request's `out` directory and calls ended(guest, qemu.Boot) with
how the guest ended (status, seconds, detail); everything after that
(KTAP parsing, the console scan, the comparer) is the same whatever
booted the guest, and a guest the backend never reports is a failed
cell, not a pass. LocalQemu boots them on this machine, JOBS at a time.
A backend for a lab that takes jobs (LAVA) writes one job per Guest,
submits them all, and copies each job's log back into its `out`
directory as the job ends: the same shape.
"""
import dataclasses
from pathlib import Path

from . import (compare, config, guest, kbuild, knobs, kselftest, ktap, prebuilt, procs, qemu,
               tree)
from .log import Usage, progress
from .targets import (KERNEL_VARIANTS, guest_cpus, kernel_append, kernel_coverage,
                      preempt_append, tree_lacks_abi, variant_configs, variant_lacks_abi,
                      variant_slot, variant_tree)


def libc_mode():
    """LIBC=static|shared: how the project's robust-mutex programs link."""
    return knobs.get("LIBC")


def program_timeout():
    """PROGRAM_TIMEOUT=seconds: each guest program's limit (init's rfm.timeout)."""
    return knobs.get("PROGRAM_TIMEOUT")


@dataclasses.dataclass(frozen=True)
class Guest:
    """One guest to boot: `kernel` names its column in the matrix (a
    variant, or "mutant"), `image` is the kernel's build directory."""
    kernel: str
    target: object
    image: Path
    initrd: Path
    programs: tuple
    out: Path
    append: str = ""
    mode: str = "tests"
    icount: bool = False
    boot_timeout: int = None
    run_timeout: int = None
    coverage: bool = False   # write the kernel's gcov counters out
    cpus: int = 1            # vCPUs (QEMU -smp)


class LocalQemu:
    """The guests boot here, in QEMU, using up to `jobs` host threads at a
    time: a guest of N vCPUs runs N threads under multi-threaded TCG and
    takes N of them (all `jobs`, if it has more), so that its vCPUs
    really run at once. Guests start in the order given."""
    name = "qemu"

    def __init__(self, accel, jobs):
        self.accel, self.jobs = accel, jobs

    def run(self, guests, ended):
        """Boot `guests`; ended(guest, qemu.Boot) as each one ends."""
        slots = procs.Slots(self.jobs)

        def one(item):
            turn, g = item
            with slots.taken(turn, min(g.cpus, self.jobs)):
                ended(g, qemu.boot(g.target, g.image / "bzImage", g.initrd, g.out, self.accel,
                                   mode=g.mode, boot_timeout=g.boot_timeout,
                                   run_timeout=g.run_timeout, append=g.append,
                                   icount=g.icount, coverage=g.coverage, cpus=g.cpus))
        procs.parallel(one, list(enumerate(guests)), self.jobs)


def load_guest_run(d, target_name, status, seconds, detail, programs):
    """What one guest left in `d`, parsed: a compare.GuestRun."""
    results = d / "results.ktap"
    console = d / "console.log"
    log = console.read_text(errors="replace") if console.exists() else ""
    return compare.GuestRun(
        target=target_name, boot_status=status,
        run=ktap.parse(results.read_text(errors="replace") if results.exists() else ""),
        console=ktap.scan_console(log), console_seen=bool(log.strip()),
        programs=tuple(programs), seconds=seconds, detail=detail)


def boot_all(backend, guests, stage="boot", check=None):
    """{kernel: {target name: GuestRun}} of `guests`, booted by `backend`,
    with a progress line for each as it ends. check(guest, run), if
    given, runs then too: it may print its own line, or raise to stop the
    boots still to come (a benchmark with no figure from one guest is
    not worth the hours of the others)."""
    guests = list(guests)
    keys = [(g.kernel, g.target.name) for g in guests]
    if len(set(keys)) != len(keys):
        raise ValueError("boot_all: a (kernel, target) asked for twice")
    ended = {}

    def report(g, b):
        progress(stage, "%s/%s%s: %s in %.1fs%s" % (
            g.kernel, g.target.name, " (icount)" if g.icount else "", b.status, b.seconds,
            " (%s)" % b.detail if b.detail else ""))
        run = load_guest_run(g.out, g.target.name, b.status, b.seconds, b.detail, g.programs)
        ended[(g.kernel, g.target.name)] = run
        if check:
            check(g, run)

    backend.run(guests, report)
    runs = {}
    for g in guests:        # in the order asked, whatever order they ended in
        run = ended.get((g.kernel, g.target.name))
        if run is None:
            run = load_guest_run(g.out, g.target.name, "boot-timeout", 0.0,
                                 "the %s backend gave no result" % backend.name, g.programs)
        runs.setdefault(g.kernel, {})[g.target.name] = run
    return runs


def build_kernel(kernel, kconfig, targets, more_patches=(), salt="", label=None):
    """The build directory of one kernel variant for one config (built,
    or taken from the cache), for `targets` (the x32 check of a user's
    own kernel needs them); `more_patches` on top of the variant's (make
    mutate's mutant), built with the key `salt`."""
    variant = KERNEL_VARIANTS[kernel]
    if variant.get("prebuilt") == "debian":
        return prebuilt.fetch(kconfig)
    if variant.get("prebuilt"):
        return prebuilt.user_kernel(kconfig, tree.pristine_tree(),
                                    x32=any(t.userland == "x32" for t in targets))
    patches, extra, base, kc = prebuilt.build_inputs(kernel, kconfig)
    return kbuild.build(variant_slot(kernel), patches + list(more_patches), kconfig,
                        label=label or "%s/%s" % (kernel, kc.build_name), salt=salt,
                        extra_fragments=extra, base_config=base,
                        package=variant_tree(kernel), kconfig=kc)


def describe(kernel, images):
    """One line on what a kernel variant is, for the report's meta."""
    variant = KERNEL_VARIANTS[kernel]
    if variant.get("prebuilt"):
        return "; ".join(sorted({prebuilt.describe(d) for (k, _), d in images.items()
                                 if k == kernel}))
    text = "%s + %d patch(es)" % (tree.source(package=variant_tree(kernel)).linux,
                                  len(tree.patches_for(variant["patches"])))
    return text + (", Debian's config" if variant.get("base") else "")


class Pipeline:
    """Kernels x targets, their images, and the guests that boot them."""

    def __init__(self, kernels, targets, suite="tests", extra=None, libc="static",
                 selftests=False):
        """`selftests`: mainline's futex selftests in the guests too ("all",
        or "robust": kselftest.wanted())."""
        self.kernels, self.targets = tuple(kernels), tuple(targets)
        self.suite, self.extra, self.libc = suite, extra, libc
        self.selftests = selftests
        self.images, self.unavailable, self.described, self.initrds = {}, {}, {}, {}
        # {(kernel, target name): why}: a kernel without the target's ABI
        # (targets.ABIS_REMOVED): never booted there, its column "-".
        self.absent = {}

    @property
    def kconfigs(self):
        return sorted({t.kconfig for t in self.targets})

    def build_kernels(self):
        """images {(kernel, kconfig): build dir}; unavailable {kernel: why};
        absent {(kernel, target name): why}. Every kernel is checked
        against the targets before any is built."""
        for kernel in self.kernels:
            lacking = [kc for kc in self.kconfigs if kc not in variant_configs(kernel)]
            if lacking:
                raise Usage("KERNELS=%s is not built for the %s kernel(s) "
                            "(targets %s); choose other targets, or KERNELS=series" % (
                                kernel, ", ".join(lacking), ", ".join(
                                    t.name for t in self.targets if t.kconfig in lacking)))
            for t in self.targets:
                if variant_lacks_abi(kernel, t):
                    self.absent[(kernel, t.name)] = variant_lacks_abi(kernel, t)
        for kernel in self.kernels:
            variant = KERNEL_VARIANTS[kernel]
            if not variant.get("prebuilt") and tree.patches_for(variant["patches"]) is None:
                self.unavailable[kernel] = ("patches/series is empty, so there is no "
                                            "removal patch to build it from yet")
                continue
            for kc in self.kconfigs:
                if any(t.kconfig == kc and (kernel, t.name) not in self.absent
                       for t in self.targets):
                    self.images[(kernel, kc)] = build_kernel(kernel, kc, self.targets)
            self.described[kernel] = describe(kernel, self.images)
        return self

    def build_initramfs(self):
        """initrds {userland: (cpio, programs)} for the targets' ABIs."""
        pristine = tree.pristine_tree()
        for t in self.targets:
            if t.userland not in self.initrds:
                # Mainline's selftests come from its tree, built against its
                # headers: none for an ABI that tree no longer has (7.3's
                # have no 31-bit s390: SYS_futex_time64 undefined, a 64-bit
                # timespec read as a 32-bit one).
                selftests = self.selftests and not tree_lacks_abi(
                    kselftest.tree_package(), t.userland)
                cpio, tests, extras = guest.build_initramfs(
                    pristine, t.user, self.extra, suite=self.suite, libc=self.libc,
                    external_dir=kselftest.build(t.user, self.selftests)
                    if selftests else None)
                self.initrds[t.userland] = (cpio, tuple(tests + extras))
        return self

    def build(self):
        return self.build_kernels().build_initramfs()

    def backend(self, icount=False, jobs=None):
        """Local QEMU with the accelerator for these images: TCG for
        instruction counts, else qemu.choose_accel's (ACCEL, or a probe)."""
        accel = "tcg"
        booted = [(k, t) for k in self.kernels if k not in self.unavailable
                  for t in self.targets if (k, t.name) not in self.absent]
        if not icount and booted:
            k, t = booted[0]
            accel = qemu.choose_accel(t, self.images[(k, t.kconfig)] / "bzImage",
                                      self.initrds[t.userland][0])
        # JOBS counts host threads; each guest takes one per vCPU.
        return LocalQemu(accel, jobs or config.jobs())

    def guest(self, kernel, t, out, image=None, append="", **how):
        """The Guest that boots `kernel` (or the build dir `image`, in the
        column `kernel`) on target t, its files in out/<kernel>/<target>;
        the variant's own command line goes after `append`."""
        cpio, programs = self.initrds[t.userland]
        return Guest(kernel, t, image or self.images[(kernel, t.kconfig)], cpio, programs,
                     out / kernel / t.name,
                     append=" ".join(a for a in (append, kernel_append(kernel),
                                                 preempt_append(kernel, knobs.get("PREEMPT")))
                                     if a),
                     coverage=kernel_coverage(kernel),
                     cpus=1 if how.get("icount") else guest_cpus(kernel, knobs.get("CPUS"), t),
                     **how)

    def guests(self, out, kernels=None, append="", **how):
        """Every (kernel, target) of the pipeline, or of `kernels`."""
        return [self.guest(k, t, out, append=append, **how)
                for k in (kernels or self.kernels) if k not in self.unavailable
                for t in self.targets if (k, t.name) not in self.absent]

    def absent_runs(self, out):
        """{kernel: {target name: GuestRun}} of the pairs never booted, each
        saying why: its cells are "-", not missing results."""
        runs = {}
        for (k, name), why in self.absent.items():
            runs.setdefault(k, {})[name] = load_guest_run(
                out / k / name, name, compare.ABSENT, 0.0, why, ())
        return runs
