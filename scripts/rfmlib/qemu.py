"""Boot a kernel and initramfs in QEMU, with timeouts at every level.

The console (console.log) and the KTAP results (results.ktap) travel on
two ports the target names (ttyS0 and ttyS1 on x86; the PL011 and a
virtio console on ARM's virt): kernel messages cannot interleave with
results. The guest
reboots when done and -no-reboot turns that into a QEMU exit; panic=-1
does the same for a panic. A run is complete only if the results end with
the completion marker.
"""
import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import atomic, config, guest, knobs, ktap, procs
from .log import checkpoint, one_line, progress
from .targets import HARDENING_CPU_FLAGS

COMPLETE_MARKER = "# rfm-complete"
KERNEL_ARGS = "panic=-1 oops=panic panic_on_warn=1"


# QEMU's instruction-counting clock: the guest's clock advances exactly 1 ns
# per guest instruction (shift=0) and never waits for the host (sleep=off),
# so a guest that reads its clock around some work reads how many
# instructions it took. For the same number on every run, nothing else may
# vary either: the RTC starts at a fixed date and follows that clock (the
# date seeds the kernel's RNG), and user space is not randomized
# (norandmaps: addresses decide futex hash chains, page faults...).
ICOUNT_ARGS = ["-icount", "shift=0,sleep=off", "-rtc", "base=2026-01-01T00:00:00,clock=vm"]
# Under icount the TSC counts that clock: 1 GHz, one tick per instruction.
ICOUNT_TSC_HINT = "tsc_early_khz=1000000 tsc=reliable norandmaps"
# What a coverage kernel's guest writes its gcov counters to (make coverage).
COVERAGE_FILE = "gcov.txt"


def _virtio(target, port):
    """Is this port of the target a virtio console (hvc* on virt's
    virtio-mmio), rather than a -serial one (a UART, or pseries's
    hypervisor consoles, which the guest calls hvc* too)?"""
    return port.startswith("hvc") and not target.serial_hvc


def port_args(target, port, path):
    """QEMU's arguments for a guest port of `target` writing to file
    `path`: a -serial port (ttyS*, ttyAMA*, pseries's hvc*: the
    machine's serial ports, in order) or a virtio console."""
    if _virtio(target, port):
        return ["-device", target.virtio_serial,
                "-chardev", "file,id=%s,path=%s" % (port, path),
                "-device", "virtconsole,chardev=%s" % port]
    return ["-serial", "file:%s" % path]


def port_args_shell(target):
    """make shell: the console on stdio; the results port goes nowhere."""
    args = ["-serial", "mon:stdio"]
    if _virtio(target, target.results_port):
        args += ["-device", target.virtio_serial,
                 "-chardev", "null,id=%s" % target.results_port,
                 "-device", "virtconsole,chardev=%s" % target.results_port]
    elif target.serial_hvc:
        args += ["-serial", "null"]
    return args


def tsc_hint(accel):
    """Under TCG the guest's TSC is the host's, but a busy host makes the
    guest's calibration against the PIT fail, and its clocksource watchdog
    (jiffies, which lag when the host is busy) later mark the TSC
    unstable, leaving the guest on jiffies (4 ms steps). Tell it the
    frequency instead, the host's TSC rate, which in a VM /proc/cpuinfo
    reports as "cpu MHz", and that the TSC is reliable."""
    if accel != "tcg":
        return ""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("cpu MHz"):
                    return "tsc_early_khz=%d tsc=reliable" % round(
                        float(line.split(":")[1]) * 1000)
    except (OSError, ValueError):
        pass
    return ""


@dataclass
class Boot:
    status: str          # complete | incomplete | boot-timeout | timeout | qemu-error
    seconds: float
    detail: str = ""


def kernel_command_line(target, mode, accel, append="", icount=False, results_port=None,
                        coverage=False, cpus=1, preempt=""):
    """The guest kernel's command line: its console, what every guest
    needs, the clock hints of `accel` ("lab": a machine we cannot see,
    so no hint from this host), the target's own arguments, what init
    reads (rfm.*: the accelerator; the results go to `results_port`, else the target's;
    with `coverage`, the gcov counters to the target's coverage port;
    the vCPUs it must find online and the kernel's preemption model, for
    its report), then `append`."""
    if target.x86:
        clock = (ICOUNT_TSC_HINT if icount else "tsc=reliable" if accel == "lab"
                 else tsc_hint(accel))
    else:
        clock = "norandmaps" if icount else ""     # ARM: no TSC to describe
    return " ".join(a for a in (
        "console=%s" % target.console, KERNEL_ARGS, clock, target.kernel_args,
        "rfm.mode=%s rfm.target=%s rfm.cpus=%d" % (mode, target.name, cpus),
        # What emulates the guest, for a case that must tell an emulator's
        # defect from the kernel's (rfm_race.h); not in -icount boots,
        # whose instruction counts are the bench's
        "rfm.accel=%s" % accel if not icount else "",
        "rfm.preempt=%s" % preempt if preempt else "",
        "rfm.results=/dev/%s" % (results_port or target.results_port),
        "rfm.coverage=/dev/%s" % target.coverage_port if coverage else "", append) if a)


def smp_arg(cpus):
    """-smp's value: each vCPU a socket of its own. The x86 kernels have no
    ACPI, so they find their CPUs in SeaBIOS's MP table, which lists one
    CPU per socket: QEMU's default of cores in one socket would leave the
    guest one CPU."""
    return "%d,sockets=%d" % (cpus, cpus)


def accel_args(target, accel, cpus):
    """The machine and accelerator. Several vCPUs under TCG run in a host
    thread each (thread=multi, asked for, not assumed: QEMU refuses it
    where the guest's memory model needs a stronger host), so that they
    really run at the same time."""
    if accel == "tcg" and cpus > 1:
        return ["-machine", target.machine, "-accel", "tcg,thread=multi"]
    return ["-machine", "%s,accel=%s" % (target.machine, accel)]


# The preemption model a kernel runs, from its config: the model built
# in, or, for PREEMPT_DYNAMIC, the default its config chose (a preempt=
# on the command line overrides it). Most specific first.
PREEMPT_SYMBOLS = (("CONFIG_PREEMPT_RT=y", "rt"), ("CONFIG_PREEMPT_LAZY=y", "lazy"),
                   ("CONFIG_PREEMPT=y", "full"), ("CONFIG_PREEMPT_VOLUNTARY=y", "voluntary"),
                   ("CONFIG_PREEMPT_NONE=y", "none"))


def preempt_model(config_text, command_line):
    """"none", "voluntary", "full", "lazy" or "rt", "dynamic-" before it on a
    PREEMPT_DYNAMIC kernel; "" if the config is not known."""
    lines = set(config_text.splitlines())
    model = next((m for symbol, m in PREEMPT_SYMBOLS if symbol in lines), "")
    if "CONFIG_PREEMPT_DYNAMIC=y" not in lines:
        return model
    for arg in command_line.split():
        if arg.startswith("preempt="):
            model = arg.split("=", 1)[1]
    return "dynamic-%s" % model


def kernel_preempt(kernel, append):
    """The preemption model of the kernel image `kernel`, from the config
    kept beside it (every cached kernel, Debian's unpacked ones)."""
    config_file = Path(kernel).parent / "config"
    try:
        text = config_file.read_text(errors="replace")
    except OSError:
        return ""
    return preempt_model(text, append)


def qemu_command(target, kernel, initrd, accel, mode, console, results, append="",
                 icount=False, coverage=None, cpus=1):
    """icount: count instructions instead of time (TCG only); coverage:
    the file the guest's gcov counters go to (make coverage), or None;
    cpus: the guest's vCPUs (one under -icount: QEMU counts instructions
    exactly on one vCPU thread only)."""
    initrd = guest.initrd_for(Path(kernel).parent, initrd)    # + its modules
    if icount and cpus != 1:
        raise ValueError("-icount counts exactly on one vCPU, not %d" % cpus)
    cmd = [target.qemu] + accel_args(target, accel, cpus) + [
           "-cpu", target.cpu, "-m", knobs.get("GUEST_MEM"), "-smp", smp_arg(cpus),
           "-nodefaults", "-no-reboot", "-display", "none",
           "-kernel", str(kernel), "-initrd", str(initrd),
           "-append", kernel_command_line(target, mode, accel, append, icount,
                                          coverage=coverage is not None, cpus=cpus,
                                          preempt=kernel_preempt(kernel, append))]
    cmd += list(target.qemu_args)
    if icount:
        cmd += ICOUNT_ARGS
    if mode == "shell":
        cmd += port_args_shell(target)
    else:
        cmd += (port_args(target, target.console, console)
                + port_args(target, target.results_port, results) + ["-monitor", "none"])
        if coverage is not None:
            cmd += port_args(target, target.coverage_port, coverage)
    return cmd


def _results_started(path):
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def boot(target, kernel, initrd, outdir, accel, mode="tests",
         boot_timeout=None, run_timeout=None, append="", icount=False, coverage=False,
         cpus=1):
    boot_timeout = boot_timeout or knobs.get("BOOT_TIMEOUT")
    run_timeout = run_timeout or knobs.get("RUN_TIMEOUT")
    outdir.mkdir(parents=True, exist_ok=True)
    console, results = outdir / "console.log", outdir / "results.ktap"
    gcov = outdir / COVERAGE_FILE if coverage else None
    for f in (console, results, gcov):
        if f:
            f.unlink(missing_ok=True)
    if icount and accel != "tcg":
        raise ValueError("-icount needs TCG, not %s" % accel)
    cmd = qemu_command(target, kernel, initrd, accel, mode, console, results, append,
                       icount=icount, coverage=gcov, cpus=cpus)
    (outdir / "qemu.cmd").write_text(" ".join(cmd) + "\n")
    start = time.monotonic()
    stderr = open(outdir / "qemu.stderr", "w")
    proc = procs.popen(cmd, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    try:
        checkpoint("boot")      # the interruption check's hold, QEMU running
    except BaseException:
        procs.stop(proc)
        raise
    status, detail = None, ""
    while proc.poll() is None:
        waited = time.monotonic() - start
        if waited > run_timeout:
            status, detail = "timeout", "guest still running after %ds" % run_timeout
        elif waited > boot_timeout and not _results_started(results):
            status, detail = "boot-timeout", "no results after %ds" % boot_timeout
        if status:
            proc.kill()
            procs.wait(proc)
            break
        try:
            procs.wait(proc, 0.1)
        except subprocess.TimeoutExpired:
            pass
    stderr.close()
    seconds = time.monotonic() - start
    if status is None:
        text = results.read_text(errors="replace") if results.exists() else ""
        if COMPLETE_MARKER in text:
            status = "complete"
        elif proc.returncode != 0:
            status = "qemu-error"
            detail = one_line((outdir / "qemu.stderr").read_text()[-500:]) or (
                "QEMU exited with status %d" % proc.returncode)
        else:
            status = "incomplete"
            detail = "the guest stopped before the completion marker"
    seen = ktap.parse(results.read_text(errors="replace") if results.exists()
                      else "").meta.get("cpu-flags", "").split()
    (outdir / "boot.json").write_text(json.dumps(
        {"status": status, "seconds": round(seconds, 2), "detail": detail,
         "accel": accel, "icount": icount, "qemu": cmd[0], "cpu": target.cpu,
         "cpu_flags": [f for f in HARDENING_CPU_FLAGS if f in seen]}, indent=1))
    return Boot(status, seconds, detail)


def choose_accel(target, kernel, initrd):
    """TCG unless ACCEL says otherwise, or a short probe shows KVM boots.

    Here /dev/kvm exists but guests hang under it, so KVM is used only when
    a probe boot completes within a few seconds. The verdict is cached per
    host kernel and QEMU binary.
    """
    forced = knobs.get("ACCEL")
    if forced:
        return forced
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    ident = "%s %s %s" % (os.uname().release, target.qemu,
                          int(Path(subprocess.run(["which", target.qemu],
                              capture_output=True, text=True).stdout.strip()
                              or "/").stat().st_mtime))
    cache = config.cache_dir() / "accel-probe.json"
    known = _read_probes(cache)
    if ident not in known:
        with atomic.scratch_dir(config.cache_dir() / "accel-probe") as probe_dir:
            b = boot(target, kernel, initrd, probe_dir, "kvm", mode="probe",
                     boot_timeout=10, run_timeout=15)
        known = dict(_read_probes(cache), **{ident: "kvm" if b.status == "complete" else "tcg"})
        progress("accel", "KVM probe: %s -> using %s" % (b.status, known[ident]))
        atomic.write(cache, json.dumps(known, indent=1))
    if known[ident] == "tcg":
        return "tcg"
    return "kvm"


def _read_probes(path):
    """The cached probe verdicts; a damaged file is as good as none."""
    try:
        known = json.loads(path.read_text())
        return known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        return {}
