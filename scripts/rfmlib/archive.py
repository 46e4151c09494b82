"""Debian's archive, read through an apt of the project's own.

What the project downloads but never installs (the kernel trees, busybox
for the guests, Debian's prebuilt kernels, lava-server's job templates)
comes through a private apt whose sources list, state and indexes live
in RFM_CACHE/apt/<archive>-<arch>/. apt-get and apt-cache run with -o
options that point there, so the host's sources, its architectures and
its package set play no part, and nothing on the host is changed (the
host's apt.conf.d, a proxy say, still applies).

One state per Debian architecture, because apt takes each suite's
indexes as one transaction: when one of them fails to download (a
mirror in the middle of a sync: "File has unexpected size ... Mirror
sync in progress?"), it keeps none of that suite's new files. With i386
beside amd64 in one state, bookworm-security's i386 index failing on
2026-12-05 took its amd64 index, and with it the pinned linux-source,
away. A failed index is a warning that names it; a package that then
cannot be found is an error that says which indexes were missing.

Every .deb is checked against a SHA-256 before it is used: the pinned
one of patches/trees.json for a kernel tree, else the one the (signed)
index gives. A mirror given as file:// (the host tests' fake archive) is
trusted without a signature.
"""
import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import atomic, config, knobs, procs
from .log import Fatal, one_line, progress, warn

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# Archive name -> its repositories: (the knob naming the mirror, suites).
ARCHIVES = {
    "bookworm": (("DEBIAN_MIRROR", ("bookworm", "bookworm-updates")),
                 ("DEBIAN_SECURITY_MIRROR", ("bookworm-security",))),
}

# Indexes younger than this are not downloaded again before a lookup;
# a lookup that finds nothing refreshes older ones once.
FRESH_SECONDS = 6 * 3600
RETRY_SECONDS = 600
UPDATE_TIMEOUT = 900
DOWNLOAD_TIMEOUT = 1800


# ---- Debian version numbers (deb-version(7)) ----

def _order(c):
    if c == "~":
        return -1
    if c.isalpha():
        return ord(c)
    return ord(c) + 256 if c else 0


def _compare_part(a, b):
    while a or b:
        na = re.match(r"^[^0-9]*", a).group(0)
        nb = re.match(r"^[^0-9]*", b).group(0)
        for i in range(max(len(na), len(nb))):
            ca = _order(na[i]) if i < len(na) else 0
            cb = _order(nb[i]) if i < len(nb) else 0
            if ca != cb:
                return -1 if ca < cb else 1
        a, b = a[len(na):], b[len(nb):]
        da = re.match(r"^[0-9]*", a).group(0)
        db = re.match(r"^[0-9]*", b).group(0)
        if int(da or 0) != int(db or 0):
            return -1 if int(da or 0) < int(db or 0) else 1
        a, b = a[len(da):], b[len(db):]
    return 0


def _split_version(v):
    epoch, _, rest = v.rpartition(":") if ":" in v else ("0", "", v)
    upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "0")
    return int(epoch or 0), upstream, revision


def compare_versions(a, b):
    """-1, 0 or 1 as Debian version a sorts before, with or after b."""
    ea, ua, ra = _split_version(a)
    eb, ub, rb = _split_version(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return _compare_part(ua, ub) or _compare_part(ra, rb)


def upstream_version(deb_version):
    """6.1.192-3 -> 6.1.192."""
    return _split_version(deb_version)[1]


# ---- the private apt ----

@dataclass(frozen=True)
class Package:
    """One version of a package as an index lists it."""
    name: str
    version: str
    arch: str
    sha256: str
    size: int

    @property
    def file_name(self):
        return "%s_%s_%s.deb" % (self.name, self.version.split(":")[-1], self.arch)


def sources_list(archive):
    """The private sources.list of an archive: file:// mirrors trusted,
    the others checked against Debian's archive keyring."""
    lines = []
    for knob, suites in ARCHIVES[archive]:
        mirror = knobs.get(knob).rstrip("/")
        option = "trusted=yes" if mirror.startswith("file:") else "signed-by=%s" % KEYRING
        lines += ["deb [%s] %s %s main" % (option, mirror, suite) for suite in suites]
    return "\n".join(lines) + "\n"


class State:
    """The private apt state of one archive and one Debian architecture."""

    def __init__(self, archive, arch):
        self.archive, self.arch = archive, arch
        self.dir = config.cache_dir() / "apt" / ("%s-%s" % (archive, arch))

    def options(self):
        d = self.dir
        opts = {"Dir::Etc::SourceList": d / "sources.list",
                "Dir::Etc::SourceParts": d / "sources.list.d",
                "Dir::Etc::Preferences": d / "preferences",
                "Dir::Etc::PreferencesParts": d / "preferences.d",
                "Dir::State": d / "state", "Dir::State::status": d / "state" / "status",
                "Dir::Cache": d / "cache", "APT::Architecture": self.arch,
                "APT::Architectures": self.arch, "Acquire::Languages": "none",
                # As root apt would download as _apt, who cannot write here.
                "APT::Sandbox::User": "root"}
        return [a for k, v in opts.items() for a in ("-o", "%s=%s" % (k, v))]

    def _prepare(self):
        for sub in ("sources.list.d", "preferences.d", "state/lists/partial",
                    "cache/archives/partial"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "state" / "status").touch()
        want = sources_list(self.archive)
        path = self.dir / "sources.list"
        if not path.exists() or path.read_text() != want:
            atomic.write(path, want)
            (self.dir / "updated.json").unlink(missing_ok=True)   # another mirror

    def _lock(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        lock = open(self.dir / "rfm.lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        return lock

    def last_update(self):
        """{"time": seconds, "failed": [[url, why]]} of the last update, or None."""
        try:
            return json.loads((self.dir / "updated.json").read_text())
        except (OSError, ValueError):
            return None

    def has_lists(self):
        lists = self.dir / "state" / "lists"
        return lists.is_dir() and any(p.name.endswith("Packages") or "_Packages." in p.name
                                      for p in lists.iterdir())

    def update(self):
        """apt-get update into the private state. Indexes that fail are a
        warning naming them (apt keeps the old ones); no index at all is
        an error."""
        with self._lock():
            self._prepare()
            progress("archive", "apt-get update (%s, %s)" % (self.archive, self.arch))
            try:
                r = procs.run(["apt-get", "-q"] + self.options() + ["update"],
                              capture_output=True, text=True, timeout=UPDATE_TIMEOUT)
            except FileNotFoundError:
                raise Fatal("apt-get not found: this needs Debian's apt")
            except subprocess.TimeoutExpired:
                raise Fatal("apt-get update (%s, %s) took more than %d s"
                            % (self.archive, self.arch, UPDATE_TIMEOUT))
            failed = failed_fetches(r.stdout + r.stderr)
            if r.returncode != 0 and not failed:
                failed = [["(apt-get update)", one_line((r.stdout + r.stderr)[-600:])]]
            atomic.write(self.dir / "updated.json",
                         json.dumps({"time": time.time(), "failed": failed}))
            for url, why in failed:
                warn("Debian's archive (%s, %s): %s not downloaded: %s; going on "
                     "with the indexes that did" % (self.archive, self.arch, url, why))
            if not self.has_lists():
                raise Fatal("no index of Debian's %s archive (%s) could be downloaded: %s"
                            % (self.archive, self.arch, one_line(
                                (r.stdout + r.stderr)[-800:])))

    def age(self):
        last = self.last_update()
        return time.time() - last["time"] if last else None

    def ensure_lists(self):
        """Indexes to look things up in: kept while fresh, else
        downloaded again (kept as they were if that fails)."""
        age = self.age()
        if age is None or not self.has_lists():
            self.update()
        elif age > FRESH_SECONDS:
            try:
                self.update()
            except Fatal as e:
                warn("%s; using the indexes of %d h ago" % (e, age // 3600))

    def failures(self):
        return (self.last_update() or {}).get("failed", [])

    def stanzas(self, name):
        """[{field: value}] of every version of `name` the indexes list,
        newest first."""
        r = procs.run(["apt-cache"] + self.options() + ["show", name],
                      capture_output=True, text=True, timeout=120)
        found = {}
        for stanza in r.stdout.split("\n\n"):
            fields = dict(re.findall(r"^([\w-]+): ?(.*)$", stanza, re.M))
            if fields.get("Package") == name and fields.get("SHA256"):
                found.setdefault(fields["Version"], fields)
        return sorted(found.values(), key=lambda f: _VersionKey(f["Version"]), reverse=True)

    def records(self, name):
        """[Package] of every version of `name` the indexes list, newest first."""
        return [Package(name, f["Version"], f.get("Architecture", ""), f["SHA256"],
                        int(f.get("Size", "0"))) for f in self.stanzas(name)]

    def lookup(self, name, version=None):
        """[Package] of `name` (only `version`, if given), newest first;
        indexes older than RETRY_SECONDS are refreshed once when nothing
        is found."""
        self.ensure_lists()
        found = [p for p in self.records(name) if version in (None, p.version)]
        if not found and (self.age() or 0) > RETRY_SECONDS:
            self.update()
            found = [p for p in self.records(name) if version in (None, p.version)]
        return found

    def missing_note(self):
        """What the last update could not download, for an error message."""
        failed = self.failures()
        if not failed:
            return ""
        return (" (the last apt-get update of the project's own indexes could not "
                "download: %s)" % "; ".join("%s: %s" % (u, w) for u, w in failed))


class _VersionKey:
    def __init__(self, version):
        self.version = version

    def __lt__(self, other):
        return compare_versions(self.version, other.version) < 0

    def __eq__(self, other):
        return compare_versions(self.version, other.version) == 0


FETCH_RE = re.compile(r"^[EW]: Failed to fetch (\S+)\s+(.*)$")
ERR_RE = re.compile(r"^Err:\d+ (\S+)")


def failed_fetches(text):
    """[[url, why]] of the indexes an apt-get update could not download."""
    failed, seen = [], set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = FETCH_RE.match(line.strip())
        if m and m.group(1) not in seen:
            seen.add(m.group(1))
            failed.append([m.group(1), m.group(2).strip() or "failed"])
    for i, line in enumerate(lines):
        m = ERR_RE.match(line.strip())
        if m and not any(u.startswith(m.group(1).rstrip("/")) or m.group(1) in u
                         for u in seen):
            why = lines[i + 1].strip() if i + 1 < len(lines) else "failed"
            seen.add(m.group(1))
            failed.append([m.group(1), why])
    return failed


# ---- downloads ----

def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def deb_path(package, archive="bookworm"):
    return config.cache_dir() / "debs" / archive / package.file_name


def cached(package, archive="bookworm"):
    """The .deb of `package` if the cache holds it, checked (once, when it
    was stored) against its SHA-256."""
    path = deb_path(package, archive)
    ok = path.with_name(path.name + ".sha256")
    if path.is_file() and ok.is_file() and ok.read_text().strip() == package.sha256:
        return path
    return None


def download(package, archive="bookworm"):
    """The .deb of `package` (a Package: name, version, arch, SHA-256) in
    the cache, downloaded by the private apt if it is not there yet.
    Refused if its SHA-256 is not the one asked for."""
    path = cached(package, archive)
    if path:
        return path
    state = State(archive, "amd64" if package.arch == "all" else package.arch)
    path = deb_path(package, archive)
    spec = "%s:%s=%s" % (package.name, state.arch, package.version)
    progress("archive", "apt-get download %s (%d MB)" % (spec, package.size >> 20))
    with atomic.scratch_dir(path.with_name(path.name + ".download")) as dl:
        state.ensure_lists()
        r = procs.run(["apt-get", "-q"] + state.options() + ["download", spec], cwd=dl,
                      capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
        debs = list(dl.glob("*.deb"))
        if r.returncode != 0 or len(debs) != 1:
            raise Fatal("apt-get download %s failed%s: %s" % (
                spec, state.missing_note(), one_line((r.stdout + r.stderr)[-800:])))
        got = sha256_of(debs[0])
        if got != package.sha256:
            raise Fatal("%s: SHA-256 %s, expected %s: refused" % (
                debs[0].name, got, package.sha256))
        with atomic.new_file(path) as tmp:
            shutil.move(str(debs[0]), str(tmp))
    # The checksum last: a .deb without one is downloaded again.
    atomic.write(path.with_name(path.name + ".sha256"), package.sha256 + "\n")
    return path


def newest(name, arch, archive="bookworm"):
    """The newest version of package `name` for `arch` the archive
    serves, downloaded into the cache; offline, the one cached last."""
    memo = config.cache_dir() / "debs" / archive / ("%s_%s.json" % (name, arch))
    try:
        known = Package(**json.loads(memo.read_text()))
        if cached(known, archive):
            return known, cached(known, archive)
    except (OSError, ValueError, TypeError):
        pass
    state = State(archive, arch)
    found = state.lookup(name)
    if not found:
        raise Fatal("Debian's %s archive lists no %s for %s%s" % (
            archive, name, arch, state.missing_note()))
    package = found[0]
    path = download(package, archive)
    atomic.write(memo, json.dumps(package.__dict__))
    return package, path


def unpack(deb, dest):
    """dpkg-deb -x deb into a new directory dest (whole, or not at all)."""
    with atomic.new_dir(dest) as tmp:
        r = procs.run(["dpkg-deb", "-x", str(deb), str(tmp)], capture_output=True,
                      text=True, timeout=1800)
        if r.returncode != 0:
            raise Fatal("dpkg-deb -x %s failed: %s" % (deb.name, one_line(r.stderr[-500:])))
    return dest


# ---- kernel trees: the pinned linux-source, or the newest served ----

def pins():
    """patches/trees.json: {package: {archive, version, sha256, size}}, the
    Debian kernel trees the project builds from, each at the version it
    was made for."""
    try:
        return json.loads(config.TREE_PINS.read_text())
    except (OSError, ValueError) as e:
        raise Fatal("%s: %s" % (config.TREE_PINS, e))


@dataclass(frozen=True)
class KernelSource:
    """The Debian kernel tree a run builds from: the pinned version, or,
    once Debian no longer serves it, the newest it does."""
    package: Package
    deb: Path
    pinned: str          # the version patches/trees.json pins
    why: str = ""        # why not the pinned one

    @property
    def is_pinned(self):
        return self.package.version == self.pinned

    @property
    def version(self):
        return self.package.version

    @property
    def linux(self):
        return upstream_version(self.package.version)

    def describe(self):
        """linux-source-6.1 6.1.192-3 (pinned), or what replaced the pin."""
        return "%s %s (%s)" % (self.package.name, self.version, "pinned" if self.is_pinned
                               else "pinned %s is no longer served: the newest Debian "
                                    "serves" % self.pinned)

    def record(self):
        """For run.json, matrix.json and KCIDB."""
        return {"package": self.package.name, "version": self.version,
                "linux": self.linux, "sha256": self.package.sha256,
                "pinned": self.pinned, "is_pinned": self.is_pinned}


def _fallback_memo(name, archive):
    return config.cache_dir() / "debs" / archive / ("%s.newest.json" % name)


def kernel_source(name, newest=False, fetch=True):
    """The KernelSource of Debian's tree `name` (a key of patches/trees.json),
    its .deb in the cache. The pinned version if Debian still serves it
    (or the cache holds it); else the newest it serves, said in a warning.
    `newest`: that one in any case (make repin). `fetch=False`: decide
    without downloading (the cache key): the pinned one unless a run
    already fell back."""
    pin = pins().get(name)
    if pin is None:
        raise Fatal("%s names no tree %s" % (config.TREE_PINS, name))
    archive = pin["archive"]
    pinned = Package(name, pin["version"], "all", pin["sha256"], pin.get("size", 0))
    memo = _fallback_memo(name, archive)
    if not newest and cached(pinned, archive):
        return KernelSource(pinned, cached(pinned, archive), pinned.version)
    remembered = None
    try:
        remembered = Package(**json.loads(memo.read_text()))
    except (OSError, ValueError, TypeError):
        pass
    if not fetch:
        if remembered and cached(remembered, archive):
            return KernelSource(remembered, cached(remembered, archive), pinned.version)
        return KernelSource(pinned, deb_path(pinned, archive), pinned.version)
    state = State(archive, "amd64")
    found = state.lookup(name)
    served = [p for p in found if p.version == pinned.version]
    if served and not newest:
        if served[0].sha256 != pinned.sha256:
            raise Fatal("Debian's %s %s has SHA-256 %s, but %s pins %s: refused" % (
                name, pinned.version, served[0].sha256, config.TREE_PINS.name,
                pinned.sha256))
        return KernelSource(pinned, download(pinned, archive), pinned.version)
    if not found:
        raise Fatal("Debian's %s archive lists no %s%s" % (archive, name,
                                                          state.missing_note()))
    if state.failures() and not newest:
        if remembered and cached(remembered, archive):
            warn("%s; building from %s %s, chosen by an earlier run" % (
                state.missing_note().strip(" ()"), name, remembered.version))
            return KernelSource(remembered, cached(remembered, archive), pinned.version,
                                "pinned version not served")
        raise Fatal("%s %s (pinned) is not in the indexes that downloaded%s: cannot tell "
                    "whether Debian still serves it; try again later" % (
                        name, pinned.version, state.missing_note()))
    chosen = found[0]
    if not newest:
        warn("%s %s, which the series is pinned to, is no longer served by Debian's "
             "archive; building from the newest it serves, %s (`make repin` pins it once "
             "the series applies)" % (name, pinned.version, chosen.version))
    deb = download(chosen, archive)
    atomic.write(memo, json.dumps(chosen.__dict__))
    return KernelSource(chosen, deb, pinned.version,
                        "" if chosen.version == pinned.version else "pinned version not served")


def write_pin(name, package):
    """Pin tree `name` to `package` in patches/trees.json."""
    all_pins = pins()
    all_pins[name] = dict(all_pins[name], version=package.version, sha256=package.sha256,
                          size=package.size)
    atomic.write(config.TREE_PINS, json.dumps(all_pins, indent=1, sort_keys=True) + "\n")
