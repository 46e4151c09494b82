"""make shell: one guest (KERNEL on TARGET) with a shell on the terminal."""
from . import deps, guest, knobs, procs, qemu
from .log import Fatal
from .pipeline import Pipeline, libc_mode
from .targets import guest_cpus


def cmd_shell(_args):
    t = knobs.get("TARGET")
    kernel = knobs.get("KERNEL")
    knobs.user_images((kernel,), (t,))
    if not t.user.busybox_arch:
        raise Fatal("make shell: %s has no shell: Debian builds no busybox for %s (its "
                    "cases run all the same: make run TARGETS=%s)" % (
                        t.name, t.user.deb_arch, t.name))
    deps.ensure()
    p = Pipeline((kernel,), (t,), extra=guest.extra_for((t,)), libc=libc_mode())
    if p.build_kernels().unavailable:
        raise Fatal("%s: %s" % (kernel, p.unavailable[kernel]))
    p.build_initramfs()
    cpio, _ = p.initrds[t.userland]
    cmd = qemu.qemu_command(t, p.images[(kernel, t.kconfig)] / "bzImage", cpio,
                            knobs.get("ACCEL"), "shell", None, None,
                            cpus=guest_cpus(kernel, knobs.get("CPUS"), t))
    print("Booting %s/%s; the tests are in /tests; `exit` powers off; "
          "Ctrl-a x quits QEMU." % (kernel, t.name), flush=True)
    return procs.wait(procs.popen(cmd, group=False))   # QEMU reads the terminal
