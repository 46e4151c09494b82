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
import os
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
    # Newer kernel trees (the mainline oracle): trixie's and its
    # backports' (7.2 and 7.3 also reach sid, but sid's Release files on
    # this machine's mirror are past their Valid-Until, 2026-12-06).
    # Only linux-source packages are taken from it.
    "trixie": (("DEBIAN_MIRROR", ("trixie", "trixie-updates", "trixie-backports")),
               ("DEBIAN_SECURITY_MIRROR", ("trixie-security",))),
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


def apt_env():
    """apt's messages in English, whatever the user's locale: the failed
    indexes are read from them."""
    return dict(os.environ, LC_ALL="C.UTF-8", LANGUAGE="", DEBIAN_FRONTEND="noninteractive")


def run_apt(cmd, what, timeout, cwd=None):
    """An apt command, its failures (missing program, a timeout) as Fatal."""
    try:
        return procs.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                         env=apt_env())
    except FileNotFoundError:
        raise Fatal("%s not found: this needs Debian's apt" % cmd[0])
    except subprocess.TimeoutExpired:
        raise Fatal("%s took more than %d s (a slow mirror or proxy?)" % (what, timeout))


# The host's proxy settings are all the project's apt takes from the host's
# apt configuration: its hooks (APT::Update::Post-Invoke: docker-clean,
# appstream, packagekit) and extra index targets (DEP-11) must not run.
PROXY_RE = re.compile(r'^(Acquire::(?:https?|ftp)::Proxy(?:::[^ ]+)?) "(.*)";$')


def host_proxies():
    r = subprocess.run(["apt-config", "dump"], capture_output=True, text=True,
                       env=apt_env())
    return [m.groups() for m in map(PROXY_RE.match, r.stdout.splitlines()) if m]


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

    def command(self, *args):
        """apt-get or apt-cache with this state's configuration only: its
        own apt.conf (APT_CONFIG, read before the host's apt.conf.d, which
        it replaces by an empty directory) and the options above."""
        return ["env", "APT_CONFIG=%s" % (self.dir / "apt.conf"), args[0], "-q"] \
            + self.options() + list(args[1:])

    def _prepare(self):
        for sub in ("sources.list.d", "preferences.d", "apt.conf.d", "state/lists/partial",
                    "cache/archives/partial"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "state" / "status").touch()
        conf = ('Dir::Etc::main "/dev/null";\nDir::Etc::parts "%s";\n'
                % (self.dir / "apt.conf.d")) + "".join(
                    '%s "%s";\n' % kv for kv in host_proxies())
        if not (self.dir / "apt.conf").exists() or (self.dir / "apt.conf").read_text() != conf:
            atomic.write(self.dir / "apt.conf", conf)
        want = sources_list(self.archive)
        path = self.dir / "sources.list"
        if not path.exists() or path.read_text() != want:
            atomic.write(path, want)
            (self.dir / "updated.json").unlink(missing_ok=True)   # another mirror

    def lock(self):
        """This state's lock (updates, downloads): held until closed."""
        self.dir.mkdir(parents=True, exist_ok=True)
        lock = open(self.dir / "rfm.lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        return lock

    def last_update(self):
        """{"tried": seconds, "ok": seconds of the last update that
        downloaded every index, "failed": [[url, why]]}, or None."""
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
        an error. An update another run made while this one waited for
        the lock is taken as this one's."""
        asked = time.time()
        with self.lock():
            if (self.last_update() or {}).get("tried", 0) > asked and self.has_lists():
                return
            self._prepare()
            progress("archive", "apt-get update (%s, %s)" % (self.archive, self.arch))
            r = run_apt(self.command("apt-get", "update"), "apt-get update (%s, %s)"
                        % (self.archive, self.arch), UPDATE_TIMEOUT)
            failed = failed_fetches(r.stdout + r.stderr)
            if r.returncode != 0 and not failed:
                failed = [["(apt-get update)", one_line((r.stdout + r.stderr)[-600:])]]
            before = self.last_update() or {}
            now = time.time()
            atomic.write(self.dir / "updated.json", json.dumps(
                {"tried": now, "ok": before.get("ok") if failed else now, "failed": failed}))
            for url, why in failed:
                warn("Debian's archive (%s, %s): %s not downloaded: %s; going on "
                     "with the indexes that did" % (self.archive, self.arch, url, why))
            if not self.has_lists():
                raise Fatal("no index of Debian's %s archive (%s) could be downloaded: %s"
                            % (self.archive, self.arch, one_line(
                                (r.stdout + r.stderr)[-800:])))

    def age(self):
        """Seconds since the last update that downloaded every index (None:
        never), and since the last one tried."""
        last = self.last_update() or {}
        return tuple(time.time() - last[k] if last.get(k) else None for k in ("ok", "tried"))

    def ensure_lists(self):
        """Indexes to look things up in: kept while fresh, else
        downloaded again (kept as they were if that fails). An update
        that failed is not tried again for RETRY_SECONDS."""
        ok, tried = self.age()
        if tried is None or not self.has_lists():
            self.update()
        elif (ok is None or ok > FRESH_SECONDS) and tried > RETRY_SECONDS:
            try:
                self.update()
            except Fatal as e:
                warn("%s; using the indexes there are" % e)

    def refresh(self):
        """Download the indexes again unless that was tried in the last
        RETRY_SECONDS: what a lookup that found too little does."""
        tried = self.age()[1]
        if tried is None or tried > RETRY_SECONDS:
            self.update()
            return True
        return False

    def failures(self):
        return (self.last_update() or {}).get("failed", [])

    def stanzas(self, name):
        """[{field: value}] of every version of `name` the indexes list,
        newest first."""
        r = run_apt(self.command("apt-cache", "show", name), "apt-cache show %s" % name, 300)
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
        """[Package] of `name` (only `version`, if given), newest first; the
        indexes are downloaded again once (RETRY_SECONDS) when they list
        nothing of it."""
        self.ensure_lists()
        found = [p for p in self.records(name) if version in (None, p.version)]
        if not found and self.refresh():
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
ERR_RE = re.compile(r"^Err:\d+ (\S+) (\S+)(.*)$")


def failed_fetches(text):
    """[[url, why]] of what an apt-get update (in the C locale) could not
    download: its "Failed to fetch" lines, and the "Err:" lines of a
    suite none of those names (an InRelease that failed)."""
    failed, lines = [], text.splitlines()
    for line in lines:
        m = FETCH_RE.match(line.strip())
        if m and m.group(1) not in [u for u, _ in failed]:
            failed.append([m.group(1), m.group(2).strip() or "failed"])
    fetched = [u for u, _ in failed]
    for i, line in enumerate(lines):
        m = ERR_RE.match(line.strip())
        if not m:
            continue
        base, suite = m.group(1).rstrip("/"), m.group(2).split("/")[0]
        if any(u.startswith("%s/dists/%s/" % (base, suite)) for u in fetched):
            continue
        what = "%s %s%s" % (base, m.group(2), m.group(3))
        if what not in [u for u, _ in failed]:
            why = lines[i + 1].strip() if i + 1 < len(lines) else "failed"
            failed.append([what, why])
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


class NotDownloaded(Fatal):
    """apt could not download a package its indexes list (gone from the
    mirror since they were downloaded?)."""


def download(package, archive="bookworm"):
    """The .deb of `package` (a Package: name, version, arch, SHA-256) in
    the cache, downloaded by the private apt if it is not there yet (one
    run at a time; the others wait and find it). Refused if its SHA-256 is
    not the one asked for."""
    path = cached(package, archive)
    if path:
        return path
    path = deb_path(package, archive)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(".%s.lock" % path.name), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cached(package, archive):
            return path
        state = State(archive, "amd64" if package.arch == "all" else package.arch)
        spec = "%s:%s=%s" % (package.name, state.arch, package.version)
        progress("archive", "apt-get download %s (%d MB)" % (spec, package.size >> 20))
        with atomic.scratch_dir(path.with_name(path.name + ".download")) as dl:
            state.ensure_lists()
            r = run_apt(state.command("apt-get", "download", spec), "apt-get download %s"
                        % spec, DOWNLOAD_TIMEOUT, cwd=dl)
            debs = list(dl.glob("*.deb"))
            if r.returncode != 0 or len(debs) != 1:
                raise NotDownloaded("apt-get download %s failed%s: %s" % (
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


def unpack(debs, dest):
    """dpkg-deb -x of a .deb, or of several in turn, into a new directory
    dest (whole, or not at all)."""
    with atomic.new_dir(dest) as tmp:
        for deb in [debs] if isinstance(debs, (str, Path)) else debs:
            deb = Path(deb)
            r = run_apt(["dpkg-deb", "-x", str(deb), str(tmp)], "dpkg-deb -x %s" % deb.name,
                        1800)
            if r.returncode != 0:
                raise Fatal("dpkg-deb -x %s failed: %s" % (deb.name,
                                                           one_line(r.stderr[-500:])))
    return dest


# ---- kernel trees: the pinned linux-source, or the newest served ----

def pins():
    """patches/trees.json: {package: {archive, version, sha256, size}}, the
    Debian kernel trees the project builds from, each at the version it
    was made for."""
    try:
        found = json.loads(config.TREE_PINS.read_text())
    except (OSError, ValueError) as e:
        raise Fatal("%s: %s" % (config.TREE_PINS, e))
    for name, pin in found.items():
        lacking = [k for k in ("archive", "version", "sha256") if not pin.get(k)]
        if lacking or pin["archive"] not in ARCHIVES:
            raise Fatal("%s: %s %s" % (config.TREE_PINS, name, "lacks %s" % ", ".join(lacking)
                                       if lacking else "names archive %s, not one of %s"
                                       % (pin["archive"], ", ".join(ARCHIVES))))
    return found


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


# Not a knob: `rfm check` decides the tree once and hands it to its steps
# in this variable, so that every step builds from the same tree.
CHOSEN_ENV = "RFM_TREE_CHOSEN"


def _source(package, pinned, archive):
    deb = cached(package, archive) or download(package, archive)
    return KernelSource(package, deb, pinned.version, "" if package.version == pinned.version
                        else "pinned version not served")


def kernel_source(name, newest=False, fetch=True):
    """The KernelSource of Debian's tree `name` (a key of patches/trees.json),
    its .deb in the cache. The pinned version if Debian still serves it
    (or the cache holds it); else the newest it serves, said in a
    warning, and only if that is newer than the pin and every index
    downloaded (an index that did not may well list the pin). `newest`:
    the newest served in any case (make repin). `fetch=False`: decide
    without downloading (the cache key): the pinned one unless a run
    already fell back."""
    pin = pins().get(name)
    if pin is None:
        raise Fatal("%s names no tree %s" % (config.TREE_PINS, name))
    archive = pin["archive"]
    pinned = Package(name, pin["version"], "all", pin["sha256"], pin.get("size", 0))
    if os.environ.get(CHOSEN_ENV) and not newest:
        try:
            chosen = Package(**json.loads(os.environ[CHOSEN_ENV]))
        except (ValueError, TypeError):
            raise Fatal("%s=%s: not a package record" % (CHOSEN_ENV, os.environ[CHOSEN_ENV]))
        if chosen.name == name and cached(chosen, archive):
            return _source(chosen, pinned, archive)
    if not newest and cached(pinned, archive):
        return _source(pinned, pinned, archive)
    memo = _fallback_memo(name, archive)
    remembered = None
    try:
        remembered = Package(**json.loads(memo.read_text()))
    except (OSError, ValueError, TypeError):
        pass
    if remembered and (compare_versions(remembered.version, pinned.version) <= 0
                       or not cached(remembered, archive)):
        remembered = None       # chosen under an older pin, or not kept
    if not fetch:
        return KernelSource(remembered or pinned, deb_path(remembered or pinned, archive),
                            pinned.version)
    state = State(archive, "amd64")
    for attempt in (1, 2):
        found = state.lookup(name)
        if not any(p.version == pinned.version for p in found) and state.refresh():
            found = state.records(name)     # the pin may be newer than the indexes
        served = [p for p in found if p.version == pinned.version]
        newer = [p for p in found if compare_versions(p.version, pinned.version) > 0]
        try:
            if served and not (newest and newer):
                if served[0].sha256 != pinned.sha256:
                    raise Fatal("Debian's %s %s has SHA-256 %s, but %s pins %s: refused" % (
                        name, pinned.version, served[0].sha256, config.TREE_PINS.name,
                        pinned.sha256))
                return _source(pinned, pinned, archive)
            if state.failures():
                if remembered and not newest:
                    warn("%s; building from %s %s, chosen by an earlier run" % (
                        state.missing_note().strip(" ()"), name, remembered.version))
                    return _source(remembered, pinned, archive)
                raise Fatal("%s %s (pinned) is not in the indexes that downloaded%s: cannot "
                            "tell whether Debian still serves it, or what replaced it; try "
                            "again later" % (name, pinned.version, state.missing_note()))
            if not newer:
                raise Fatal("Debian's %s archive serves no %s %s, the pinned version, nor a "
                            "newer one (it lists: %s)" % (
                                archive, name, pinned.version,
                                ", ".join(p.version for p in found) or "none"))
            if not newest:
                warn("%s %s, which the series is pinned to, is no longer served by Debian's "
                     "archive; building from the newest it serves, %s (`make repin` pins it "
                     "once the series applies)" % (name, pinned.version, newer[0].version))
            source = _source(newer[0], pinned, archive)
        except NotDownloaded:
            # Listed but gone: the indexes are older than the mirror.
            if attempt == 2 or not state.refresh():
                raise
            continue
        if not newest:
            atomic.write(memo, json.dumps(newer[0].__dict__))
        return source


def write_pin(name, package):
    """Pin tree `name` to `package` in patches/trees.json."""
    all_pins = pins()
    all_pins[name] = dict(all_pins[name], version=package.version, sha256=package.sha256,
                          size=package.size)
    atomic.write(config.TREE_PINS, json.dumps(all_pins, indent=1, sort_keys=True) + "\n")
