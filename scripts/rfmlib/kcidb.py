"""The matrix as a KCIDB report (KernelCI's I/O schema, version 5.3).

From matrix.json alone (its meta["provenance"] says what was built):

- a checkout per source a kernel was built from: Debian's tree plus the
  patches its variant applies (the whole series for `series`, none for
  `stock`, the first for `baseline`), with KCIDB's patchset_hash;
- a build per kernel variant and kernel config that booted;
- a test per case and target, and per target the guest run and the
  console, each with the target (QEMU, CPU, user-space ABI) as its
  environment. The cross-target verdict and any series-vs-stock
  difference go in the test's misc; the matrix summary in the first
  checkout's.

The status mapping is CASE_STATUS, GUEST_STATUS and CONSOLE_STATUS
below; docs/kcidb.md shows it.
"""
import hashlib
import re

from . import knobs
from .compare import ABSENT, NA
from .ktap import ERROR, FAIL, MISS, PASS, SKIP
from .log import Fatal
from .targets import CONTROL, KERNEL_CONFIGS, KERNEL_VARIANTS, TARGETS, role

VERSION = {"major": 5, "minor": 3}
# KCIDB's admins assign each submitter an origin; KCIDB_ORIGIN= sets it.
TEST_ROOT = "robust_futex_matrix"     # the first part of every test path

# A case on a target. "-" (not built for this word size) is KCIDB's SKIP:
# "did not run because it was not applicable".
CASE_STATUS = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP", ERROR: "ERROR",
               MISS: "MISS", NA: "SKIP"}
# How a guest ended (the "(guest run)" row). A guest that did not finish
# leaves the kernel's state unknown: ERROR; one QEMU could not run, or
# that no shard ran, never ran: MISS; one never booted because the kernel
# has no such ABI was not applicable: SKIP.
GUEST_STATUS = {"complete": PASS, "incomplete": ERROR, "timeout": ERROR,
                "boot-timeout": ERROR, "qemu-error": MISS, "not run": MISS,
                ABSENT: SKIP}
# The console: trouble (panic, oops, warning, lockdep, KASAN) is FAIL;
# clean is PASS only for a guest that ran to the end: one that stopped
# early was not seen whole (MISS).
CONSOLE_STATUS = {"clean": PASS, "trouble": FAIL, "unseen": MISS}

MAX_EXCERPT = 16384


def origin():
    name = knobs.get("KCIDB_ORIGIN")
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise Fatal("KCIDB_ORIGIN=%s: an origin is lower-case letters, digits "
                    "and _" % name, status=2)
    return name


def patchset_hash(patches):
    """KCIDB's: sha256 over the newline-terminated sha256 of each patch,
    in order; "" for no patches."""
    if not patches:
        return ""
    return hashlib.sha256("".join(p["sha256"] + "\n" for p in patches)
                          .encode()).hexdigest()


def test_path(case):
    """A dot-separated KCIDB path: each part of the case key with what the
    schema does not allow replaced by _."""
    parts = [re.sub(r"[^A-Za-z0-9_-]", "_", p) or "_" for p in case.split(".")]
    return ".".join([TEST_ROOT] + parts)


def _excerpt(lines):
    text = "\n".join(lines)
    return text[-MAX_EXCERPT:]


def _target(name):
    return next((t for t in TARGETS if t.name == name), None)


def _checkout(kernel, meta, org):
    """(id, checkout object) of the source `kernel` was built from."""
    prov = meta.get("provenance") or {}
    tree = (prov.get("trees") or {}).get(kernel) or prov.get("tree") or {}
    base = "%s %s" % (tree.get("package", "?"), tree.get("version", "?"))
    if KERNEL_VARIANTS.get(kernel, {}).get("prebuilt"):
        local = "prebuilt-%s" % kernel
        obj = {"comment": "%s, not built here: %s" % (
            KERNEL_VARIANTS[kernel]["about"], meta.get("kernels", {}).get(kernel, "?"))}
    else:
        patches = (prov.get("patches") or {}).get(kernel)
        local = "%s_%s" % (tree.get("package", "unknown"), tree.get("version", "unknown"))
        pinned = tree.get("pinned", tree.get("version"))
        obj = {"comment": base + ("" if pinned == tree.get("version") else
                                  " (the newest Debian serves: pinned %s is no longer "
                                  "served)" % pinned),
               "valid": True,
               "misc": {"debian_package": tree.get("package"),
                        "debian_version": tree.get("version"),
                        "pinned_version": pinned, "deb_sha256": tree.get("sha256"),
                        "linux": tree.get("linux"), "source": prov.get("source", "")}}
        if patches is not None:
            h = patchset_hash(patches)
            if h:
                local += "+" + h[:16]
                obj["comment"] += " + %d patch(es): %s .. %s" % (
                    len(patches), patches[0]["name"], patches[-1]["name"])
            obj["patchset_hash"] = h
            obj["misc"]["patches"] = [p["name"] for p in patches]
    obj = dict({"id": "%s:%s" % (org, local), "origin": org}, **obj)
    if meta.get("date"):
        obj["start_time"] = meta["date"]
    return obj["id"], obj


def _build(kernel, kc, checkout_id, meta, org):
    prov = meta.get("provenance") or {}
    built = ((prov.get("kernels") or {}).get(kernel) or {}).get(kc) or {}
    key = built.get("key") or "unknown"
    variant = KERNEL_VARIANTS.get(kernel, {})
    kconfig = KERNEL_CONFIGS[kc]
    obj = {"id": "%s:%s-%s-%s" % (org, kernel, kc, key), "origin": org,
           "checkout_id": checkout_id, "architecture": kconfig.arch,
           "status": PASS,    # only kernels that booted are in the matrix
           "comment": "%s kernel for %s: %s" % (kernel, kc, variant.get("about", "")),
           "misc": {"variant": kernel, "kconfig": kc, "key": key,
                    "described": meta.get("kernels", {}).get(kernel, "")}}
    if variant.get("prebuilt"):
        obj["config_name"] = "as packaged"
    else:
        obj["config_name"] = " + ".join(
            ("tinyconfig",) + kconfig.fragments
            + (() if variant.get("base") else kconfig.tiny_fragments)
            + tuple(variant.get("fragments", {}).get(kc, ())))
    if role(kernel) == CONTROL:
        obj["comment"] += " (the negative control: its death_* cases must fail)"
    if built.get("compiler"):
        obj["compiler"] = built["compiler"]
    if meta.get("date"):
        obj["start_time"] = meta["date"]
    return obj


def _environment(t, meta):
    return {"comment": "QEMU %s (%s -cpu %s), %s user space%s" % (
                meta.get("accel", "?"), t.qemu, t.cpu, t.userland,
                ", " + t.kernel_args if t.kernel_args else ""),
            "misc": {"target": t.name, "abi": t.abi, "kconfig": t.kconfig}}


def report(matrix):
    """The KCIDB report of a matrix (matrix.json's content)."""
    org = origin()
    meta = matrix.get("meta", {})
    run = meta.get("date") or "undated"
    out = {"version": dict(VERSION), "checkouts": [], "builds": [], "tests": []}
    checkouts, builds = {}, {}
    # A subject's differences from each of its references, by case and target.
    versus = {}
    for d in matrix.get("kernel_comparison", []):
        versus.setdefault((d.get("subject", "series"), d["case"], d["target"]), []).append(d)

    def test(kernel, target, path, status, build_id, **fields):
        obj = {"id": "%s:%s/%s/%s/%s" % (org, run, kernel, target.name, path),
               "origin": org, "build_id": build_id, "path": path, "status": status,
               "environment": _environment(target, meta)}
        if meta.get("date"):
            obj["start_time"] = meta["date"]
        obj.update({k: v for k, v in fields.items() if v not in (None, "", [])})
        out["tests"].append(obj)

    for kernel, k in matrix.get("kernels", {}).items():
        if not k.get("available"):
            continue
        cid, checkout = _checkout(kernel, meta, org)
        if cid not in checkouts:
            checkouts[cid] = checkout
            out["checkouts"].append(checkout)
        for name in matrix.get("targets", []):
            t = _target(name)
            if t is None:
                continue
            if (kernel, t.kconfig) not in builds:
                b = _build(kernel, t.kconfig, cid, meta, org)
                builds[(kernel, t.kconfig)] = b["id"]
                out["builds"].append(b)
            bid = builds[(kernel, t.kconfig)]
            guest = k["guests"].get(name, {"boot": "not run"})
            test(kernel, t, TEST_ROOT + ".guest_run", GUEST_STATUS.get(guest["boot"], ERROR),
                 bid, duration=guest.get("seconds"),
                 comment="guest %s%s" % (guest["boot"], ": " + guest["detail"]
                                         if guest.get("detail") else ""))
            if guest["boot"] == "not run":
                continue
            console = guest.get("console", [])
            seen = ("trouble" if console else "clean" if guest["boot"] == "complete"
                    else "unseen")
            test(kernel, t, TEST_ROOT + ".console", CONSOLE_STATUS[seen], bid,
                 comment={"trouble": "%d problem(s) in the kernel log" % len(console),
                          "clean": "clean",
                          "unseen": "not judged: guest %s" % guest["boot"]}[seen],
                 log_excerpt=_excerpt("%s: %s" % (c["kind"], c["line"]) for c in console))
            for row in k.get("cases", []):
                cell = row["cells"].get(name)
                if cell is None:
                    continue
                misc = {"rfm_status": cell["status"], "kernel": kernel,
                        "target": name, "case": row["case"],
                        "obs": {o: v["value"] for o, v in cell.get("obs", {}).items()}}
                if role(kernel) == CONTROL:
                    misc["negative_control"] = True
                else:
                    misc["targets"] = row["verdict"]
                for d in versus.get((kernel, row["case"], name), []):
                    misc["vs_%s" % d.get("reference", "stock")] = d["difference"] + (
                        " (deviation: %s)" % d["deviation"] if d["deviation"]
                        else " (unexpected)" if d["ok"] is False else "")
                test(kernel, t, test_path(row["case"]), CASE_STATUS[cell["status"]], bid,
                     comment=cell.get("reason"), log_excerpt=_excerpt(cell.get("diag", [])),
                     misc=misc)
    if out["checkouts"]:
        s = matrix.get("summary", {})
        out["checkouts"][0]["misc"] = dict(out["checkouts"][0].get("misc", {}), rfm_matrix={
            "exit_status": s.get("exit_status"), "failures": s.get("failures", []),
            "incomplete": s.get("incomplete", []), "control": matrix.get("control")})
    return out
