"""LAVA: the matrix's guests as jobs for a lab, and a lab's logs back.

A job boots one guest (a kernel variant on a target) on a lab's stock
`qemu` device type: every QEMU setting is in the job's `context:`, so no
device type of ours is needed. LAVA reads one serial stream, so the
guest writes its KTAP results to the console (rfm.results=<console>)
with `quiet`; a monitor per program gives the lab its own per-case
results, and the log brings the console back, from which the one KTAP
parser and the console scan read what a local run reads from its two
ports.

Offline, `lava-run` (Debian's lava-dispatcher) runs a job with no server:
the device dictionary is the stock qemu.jinja2 of lava-server's package,
rendered with the job's context. LavaRun is a backend of the pipeline
(run(guests, ended)) that does exactly that, so a job proven here is the
job a lab runs.

The Debian tools run under /usr/bin/python3, where their packages are;
the driver reaches them through subprocesses.
"""
import json
import math
import re
import shutil
import subprocess
import time
from pathlib import Path

from . import archive, config, deps, guest, knobs, procs, qemu
from .log import Fatal, progress
from .targets import KERNEL_CONFIGS

DEBIAN_PYTHON = "/usr/bin/python3"
# What init prints last; a console that has it came from a whole run.
COMPLETE_MARKER = qemu.COMPLETE_MARKER
# One pattern for every program's cases: "ok N name", "not ok N name",
# "ok N name # SKIP ..." (a skip is "ok " before the fixup).
# Indented: a program's cases, not the program's own line after them. A
# skip's result is "ok " with its space, so the space before the number
# is optional (" +" there would make the skip alternative never match).
CASE_PATTERN = (r"(?m)^ +(?P<result>not ok|ok (?=\d+ [^\n#]*# *SKIP)|ok) *\d+ "
                r"(?P<test_case_id>[^\s#]+)[^\n]*\n")
FIXUP = {"ok": "pass", "not ok": "fail", "ok ": "skip"}


def job_name(kernel, target_name):
    """The job's name, and its files' (NAME.yaml, NAME.log)."""
    return "%s--%s" % (kernel, target_name)


def split_name(name):
    kernel, sep, target_name = name.partition("--")
    if not sep or not kernel or not target_name:
        raise Fatal("%s: not a job name of make lava (KERNEL--TARGET)" % name)
    return kernel, target_name


def memory_mb(text):
    return int(text[:-1]) * (1024 if text.endswith("G") else 1) if text[-1:] in "MG" \
        else int(text) // (1024 * 1024)


def monitors(programs):
    """One monitor per program, in the order init runs them (sorted by
    name); each starts at its "# Subtest: NAME" line and ends where the
    next program's block starts, the last at completion. A block starts
    with its version line, then its "# Subtest:" line (KUnit's order,
    both printed by init); the end does without the version line where a
    kernel message came between the two. QEMU's console ends lines with
    \\r\\n."""
    names = sorted(programs)
    out = []
    for i, name in enumerate(names):
        end = ("(?=(?:    KTAP version 1\\r?\\n)?    # Subtest: %s\\r?\\n)"
               % re.escape(names[i + 1])
               if i + 1 < len(names) else re.escape(COMPLETE_MARKER))
        out.append({"name": name, "start": "# Subtest: %s\\r?\\n" % re.escape(name),
                    "end": end, "pattern": CASE_PATTERN, "fixupdict": dict(FIXUP)})
    return out


def job(g, kernel_url, ramdisk_url):
    """The job (a dict) that boots Guest g from those URLs."""
    t = g.target
    arch = config_arch(t)
    run_minutes = math.ceil((g.run_timeout or knobs.get("RUN_TIMEOUT")) / 60)
    context = {"arch": arch, "no_kvm": True, "memory": memory_mb(knobs.get("GUEST_MEM"))}
    options = ["-smp %s" % qemu.smp_arg(g.cpus), "-no-reboot"]
    if arch == "x86_64":
        # The template gives x86_64 no -cpu or -machine of its own.
        options = ["-machine %s,accel=tcg" % t.machine, "-cpu %s" % t.cpu] + options
    elif arch.startswith(("mips", "ppc", "s390")):
        # ... and MIPS and PowerPC a -machine, but no -cpu (QEMU's
        # defaults: an R4000 runs no MIPS64 Release 2 program).
        context.update(machine="%s,accel=tcg" % t.machine)
        options = ["-cpu %s" % t.cpu] + options
    else:
        context.update(machine="%s,accel=tcg" % t.machine, cpu=t.cpu)
    context["extra_options"] = options + ([" ".join(t.qemu_args)] if t.qemu_args else [])
    append = " ".join(a for a in ("quiet", g.append) if a)
    cmdline = qemu.kernel_command_line(t, g.mode, "lab", results_port=t.console, append=append,
                                       cpus=g.cpus,
                                       preempt=qemu.kernel_preempt(g.image / "bzImage", append))
    return {
        "device_type": "qemu",
        "job_name": "robust-futex-matrix %s" % job_name(g.kernel, t.name),
        "priority": "medium",
        "visibility": "public",
        "context": context,
        "timeouts": {"job": {"minutes": run_minutes + 10},
                     "action": {"minutes": run_minutes + 2}},
        "actions": [
            {"deploy": {"to": "tmpfs", "timeout": {"minutes": 5}, "images": {
                "kernel": {"image_arg": "-kernel {kernel}", "url": kernel_url},
                "ramdisk": {"image_arg": "-initrd {ramdisk} -append \"%s\"" % cmdline,
                            "url": ramdisk_url}}}},
            {"boot": {"method": "qemu", "media": "tmpfs", "timeout": {"minutes": 2}}},
            {"test": {"timeout": {"minutes": run_minutes},
                      "monitors": monitors(g.programs)}},
        ],
    }


def config_arch(t):
    """LAVA's arch for a target: its kernel's (x86_64, i386, arm64, arm),
    or for MIPS, PowerPC and s390, whose ARCH= names no endianness or
    width, its QEMU's (mips64el, ppc64, s390x)."""
    arch = KERNEL_CONFIGS[t.kconfig].arch
    return t.qemu[len("qemu-system-"):] if arch in ("mips", "powerpc", "s390") else arch


def to_yaml(value, indent=0):
    """Block YAML for dicts, lists, bools, numbers and strings; strings are
    double-quoted JSON, which YAML reads as the same string."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            k = k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else json.dumps(k)
            if isinstance(v, (dict, list)) and v:
                lines.append("%s%s:\n%s" % (pad, k, to_yaml(v, indent + 2)))
            else:
                lines.append("%s%s: %s\n" % (pad, k, _scalar(v)))
        return "".join(lines)
    if isinstance(value, list):
        lines = []
        for v in value:
            if isinstance(v, (dict, list)) and v:
                body = to_yaml(v, indent + 2)
                lines.append("%s- %s" % (pad, body[indent + 2:]))
            else:
                lines.append("%s- %s\n" % (pad, _scalar(v)))
        return "".join(lines)
    return pad + _scalar(value) + "\n"


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, (dict, list)):
        return "{}" if isinstance(v, dict) else "[]"
    return json.dumps(str(v))


def _debian_python(code, *args, what):
    if not Path(DEBIAN_PYTHON).exists():
        raise Fatal("%s: %s is missing (make deps installs lava-dispatcher)" % (
            what, DEBIAN_PYTHON))
    r = procs.run([DEBIAN_PYTHON, "-c", code] + [str(a) for a in args],
                  capture_output=True, text=True)
    if r.returncode != 0:
        raise Fatal("%s failed:\n%s" % (what, (r.stderr or r.stdout)[-2000:]))
    return r.stdout


VALIDATE = """
import sys, yaml
from lava_common.schemas import validate
bad = 0
for path in sys.argv[1:]:
    try:
        validate(yaml.safe_load(open(path)), strict=True)
    except Exception as e:
        bad += 1
        print("%s: %s" % (path, str(e).splitlines()[0] if str(e) else type(e).__name__))
sys.exit(0)
"""


def validate(paths):
    """[problem] of the job files: lava_common's strict schema."""
    if not paths:
        return []
    out = _debian_python(VALIDATE, *paths, what="lava_common's schema check")
    return [l for l in out.splitlines() if l.strip()]


def device_types():
    """The directory of lava-server's device-type templates (qemu.jinja2),
    unpacked into the cache once from its Debian package at
    lava-dispatcher's version, which the project's own apt downloads
    (make deps does, for offline runs): the package would install a
    server; its templates are all a job needs offline."""
    deb = deps.lava_server()
    where = config.cache_dir() / "lava-server" / deb.name[:-len(".deb")]
    templates = where / "usr/share/lava-server/device-types"
    if not where.exists():
        progress("lava", "%s: unpacking its device-type templates" % deb.name)
        archive.unpack(deb, where)      # whole or not at all; a second run keeps the first's
    if not (templates / "qemu.jinja2").is_file():
        raise Fatal("%s holds no qemu.jinja2: not lava-server's templates" % where)
    return templates


def qemu_arches():
    """The arch values lava-server's qemu device type accepts (its
    template's available_architectures, read from the template itself):
    Debian 12's (2023.01) has mips64 but no mips64el."""
    text = (device_types() / "qemu.jinja2").read_text()
    block = text.split("available_architectures:", 1)[1].split("\n\n", 1)[0]
    arches = set(re.findall(r"^- ([\w-]+)\s*$", block, re.M))
    listed = re.search(r"qemu_misc_architectures = \[([^\]]*)\]", text)
    if listed:
        arches |= set(re.findall(r"'([\w-]+)'", listed.group(1)))
    return arches


def server_name():
    """lava-server's package, as NAME_VERSION_ARCH."""
    return deps.lava_server().name[:-len(".deb")]


def lab_can_boot(t):
    """Can the qemu device type of the LAVA this machine has boot target t?"""
    return config_arch(t) in qemu_arches()


RENDER = """
import sys, jinja2, yaml
env = jinja2.Environment(loader=jinja2.FileSystemLoader(sys.argv[1]), trim_blocks=True,
                         autoescape=False)
job = yaml.safe_load(open(sys.argv[2]))
sys.stdout.write(env.from_string("{% extends 'qemu.jinja2' %}").render(**job["context"]))
"""


def device_dict(job_path):
    """The stock qemu device, rendered with the job's context, as a lab's
    server would render it."""
    return _debian_python(RENDER, device_types(), job_path, what="rendering qemu.jinja2")


def read_log(text):
    """[(dt, level, msg)] of a LAVA job log: lava-run's, or lavacli's
    `jobs logs --raw` (the same records, each a YAML list item). Records
    that are not plain JSON (results with YAML tags) are skipped: the
    console lines are what is read."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("- "):
            line = line[2:]
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict):
            records.append((r.get("dt", ""), r.get("lvl", ""), r.get("msg", "")))
    return records


def _seconds(a, b):
    try:
        fmt = "%Y-%m-%dT%H:%M:%S.%f"
        return max(0.0, time.mktime(time.strptime(b[:26], fmt)) -
                   time.mktime(time.strptime(a[:26], fmt)))
    except ValueError:
        return 0.0


def guest_from_log(text):
    """(console text, qemu.Boot) of one job's log. The guest's verdict
    comes from its console, as a local run's does: complete only with the
    completion marker. A guest that panicked is a guest that stopped (the
    console scan names the panic), not a lab error; a log with no console
    at all is the lab's failure to boot it."""
    records = read_log(text)
    target = [(dt, msg) for dt, lvl, msg in records if lvl == "target"]
    console = "".join("%s\n" % msg for _, msg in target)
    errors = [str(msg) for _, lvl, msg in records if lvl in ("error", "exception")]
    seconds = _seconds(target[0][0], target[-1][0]) if target else 0.0
    if not target:
        return "", qemu.Boot("qemu-error", 0.0, "the job's log has no console: %s" % (
            errors[0] if errors else "LAVA never booted the guest"))
    if re.search(r"^%s" % re.escape(COMPLETE_MARKER), console, re.M):
        return console, qemu.Boot("complete", seconds)
    timed_out = [e for e in errors if "timed out" in e.lower()]
    if timed_out:
        return console, qemu.Boot("timeout", seconds, "LAVA: %s" % timed_out[0][:200])
    return console, qemu.Boot("incomplete", seconds,
                              "the guest stopped before the completion marker")


def write_guest(out, console, boot):
    """A guest's files as a local boot leaves them: the console is both
    console.log and, since the results travelled on it, results.ktap (the
    parser takes the KTAP lines and leaves the kernel's)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "console.log").write_text(console)
    (out / "results.ktap").write_text(console)
    (out / "boot.json").write_text(json.dumps(
        {"status": boot.status, "seconds": round(boot.seconds, 2), "detail": boot.detail,
         "accel": "tcg", "icount": False, "qemu": "lava"}, indent=1))


def artifact(src, directory, name):
    """src in `directory` as `name` (a hard link where it can be)."""
    directory.mkdir(parents=True, exist_ok=True)
    dest = directory / name
    if not dest.exists():
        try:
            (directory / (name + ".tmp")).unlink(missing_ok=True)
            (directory / (name + ".tmp")).hardlink_to(src)
        except OSError:
            shutil.copyfile(src, directory / (name + ".tmp"))
        (directory / (name + ".tmp")).rename(dest)
    return dest


def write_job(g, where, url_base):
    """Write Guest g's kernel, initramfs and job into `where`; the job's path."""
    kernel = g.image / "bzImage"
    initrd = guest.initrd_for(g.image, g.initrd)
    arts = where / "artifacts"
    kname = "%s-%s-%s" % (g.kernel, g.target.kconfig, Path(g.image).name)
    rname = initrd.name
    artifact(kernel, arts, kname)
    artifact(initrd, arts, rname)
    base = url_base.rstrip("/")
    path = where / "jobs" / ("%s.yaml" % job_name(g.kernel, g.target.name))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# %s, made by make lava\n" % job_name(g.kernel, g.target.name)
                    + to_yaml(job(g, "%s/artifacts/%s" % (base, kname),
                                  "%s/artifacts/%s" % (base, rname))))
    return path


class LavaRun:
    """A backend of the pipeline: each guest as a LAVA job, run here by
    lava-run with the stock qemu device, its log read back."""
    name = "lava-run"

    def __init__(self, where):
        self.where = where
        self.accel = "tcg"
        self.jobs = 1

    def run(self, guests, ended):
        for g in guests:
            path = write_job(g, self.where, "file://%s" % self.where)
            log = run_job(path, self.where, (g.run_timeout or knobs.get("RUN_TIMEOUT")) + 300)
            console, boot = guest_from_log(log.read_text(errors="replace"))
            write_guest(g.out, console, boot)
            ended(g, boot)


def run_job(path, where, limit):
    """Run the job at `path` with lava-run on the stock qemu device,
    rendered for it; its log, where/logs/NAME.log, as a lab's would be."""
    name = path.stem
    device = where / "devices" / ("%s.yaml" % name)
    device.parent.mkdir(parents=True, exist_ok=True)
    device.write_text(device_dict(path))
    # The dispatcher's address, which lava-run otherwise takes from the
    # host's default route (and fails without one: a machine offline, a
    # network namespace); these jobs serve nothing over the network.
    dispatcher = where / "dispatcher.yaml"
    dispatcher.write_text("dispatcher_ip: 127.0.0.1\n")
    outdir = where / "lava-run" / name
    shutil.rmtree(outdir, ignore_errors=True)
    log = where / "logs" / ("%s.log" % name)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as f:
        try:
            procs.run(["lava-run", "--job-id", "1", "--output-dir", str(outdir),
                       "--device", str(device), "--dispatcher", str(dispatcher), str(path)],
                      stdout=f, stderr=subprocess.STDOUT, timeout=limit)
        except subprocess.TimeoutExpired:
            pass    # the log so far says how far the guest got
    return log
