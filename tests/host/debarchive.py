"""A fake Debian archive for the host tests: real .deb files, Packages
and Release files in a directory, which the project's own apt reads
through a file:// mirror (trusted without a signature, as archive.py
trusts file:// mirrors). Nothing here touches the host's apt."""
import hashlib
import subprocess
import tarfile
import io
from pathlib import Path

ARCHES = ("amd64", "i386", "arm64", "armhf")


def make_deb(where, name, version, arch, files):
    """A .deb of `name` holding `files` ({path: bytes}), built by dpkg-deb."""
    root = Path(where) / ("%s_%s_%s" % (name, version, arch))
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: rfm tests <t@example.org>\n"
        "Description: a package of the host tests' fake archive\n" % (name, version, arch))
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    deb = Path(where) / ("%s_%s_%s.deb" % (name, version.split(":")[-1], arch))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root),
                    str(deb)], check=True, capture_output=True)
    return deb


def tree_tarball(sublevel, files=None):
    """linux-source-6.1.tar.xz bytes: a Makefile saying 6.1.<sublevel>, and
    `files` ({relative path: text})."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        members = dict(files or {})
        members["Makefile"] = ("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = %d\nEXTRAVERSION =\n"
                               % sublevel)
        for rel, text in sorted(members.items()):
            data = text.encode()
            info = tarfile.TarInfo("linux-source-6.1/" + rel)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def linux_source_deb(where, version, files=None):
    """A linux-source-6.1 .deb of Debian version `version` (6.1.N-R)."""
    sublevel = int(version.split("-")[0].split(".")[2])
    return make_deb(where, "linux-source-6.1", version, "all",
                    {"usr/src/linux-source-6.1.tar.xz": tree_tarball(sublevel, files)})


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class FakeArchive:
    """dists/SUITE/main/binary-ARCH/Packages and dists/SUITE/Release for
    each suite given, with the .debs in pool/."""

    def __init__(self, root, suites=("bookworm", "bookworm-updates", "bookworm-security")):
        self.root = Path(root)
        self.suites = {suite: [] for suite in suites}

    @property
    def url(self):
        return "file://%s" % self.root

    def add(self, suite, deb, arch):
        """List `deb` (of architecture `arch`, or "all") in `suite`."""
        self.suites.setdefault(suite, []).append((Path(deb), arch))

    def write(self, broken=()):
        """Write the indexes; for each (suite, arch) in `broken` (a suite
        alone: its amd64 index) the Release gives a wrong size of that
        index, as in a mirror sync."""
        broken = {(b, "amd64") if isinstance(b, str) else tuple(b) for b in broken}
        pool = self.root / "pool"
        pool.mkdir(parents=True, exist_ok=True)
        for suite, debs in self.suites.items():
            dist = self.root / "dists" / suite
            entries = []
            for arch in ARCHES:
                stanzas = []
                for deb, deb_arch in debs:
                    if deb_arch not in (arch, "all"):
                        continue
                    target = pool / deb.name
                    if not target.exists():
                        target.write_bytes(deb.read_bytes())
                    name, version = subprocess.run(
                        ["dpkg-deb", "-f", str(deb), "Package", "Version"], check=True,
                        capture_output=True, text=True).stdout.split("\n")[:2]
                    name, version = name.split(": ", 1)[1], version.split(": ", 1)[1]
                    stanzas.append(
                        "Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: t\n"
                        "Filename: pool/%s\nSize: %d\nSHA256: %s\nDescription: fake\n"
                        % (name, version, deb_arch, deb.name, target.stat().st_size,
                           sha256(target)))
                index = dist / "main" / ("binary-%s" % arch) / "Packages"
                index.parent.mkdir(parents=True, exist_ok=True)
                index.write_text("\n".join(stanzas))
                size = index.stat().st_size + (7 if (suite, arch) in broken else 0)
                entries.append(" %s %d main/binary-%s/Packages" % (
                    sha256(index), size, arch))
            (dist / "Release").write_text(
                "Origin: rfm-tests\nSuite: %s\nCodename: %s\nDate: Sat, 05 Dec 2026 "
                "00:00:00 UTC\nArchitectures: %s\nComponents: main\nSHA256:\n%s\n"
                % (suite, suite, " ".join(ARCHES), "\n".join(entries)))
        return self
