"""The one pipeline and its boot seam, and cli.py as dispatch only."""
import ast
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from rfmlib import cli, compare, pipeline, qemu, targets
from tests.host import util

PACKAGE = Path(pipeline.__file__).parent


class FixtureBackend:
    """A backend that boots nothing: it copies a recorded guest's files
    into each Guest's out directory, as a lab backend copies a job's log
    back, and says how the guest ended."""
    name = "fixture"

    def __init__(self, fixtures, status="complete", lose=()):
        self.fixtures, self.status, self.lose, self.asked = fixtures, status, lose, []

    def run(self, guests, ended):
        for g in guests:
            self.asked.append(g)
            if g.target.name in self.lose:
                continue            # a job the lab lost
            g.out.mkdir(parents=True, exist_ok=True)
            for f in self.fixtures[g.target.name].iterdir():
                shutil.copy(f, g.out / f.name)
            ended(g, qemu.Boot(self.status, 2.0, ""))


class Seam(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.targets = tuple(targets.target(n) for n in ("x86_64", "x86_64-ia32", "i386"))

    def pipeline(self):
        """A pipeline whose images were 'built' (no kernel is needed to
        boot through a backend that boots nothing)."""
        p = pipeline.Pipeline(("series",), self.targets)
        p.images = {("series", t.kconfig): self.dir / "kernel" / t.kconfig
                    for t in self.targets}
        p.initrds = {t.userland: (self.dir / ("%s.cpio" % t.userland), ("smoke",))
                     for t in self.targets}
        return p

    def test_another_backend_gives_the_same_runs_as_the_recorded_guests(self):
        fixtures = {t.name: util.FIXTURES / "complete" / t.name for t in self.targets}
        backend = FixtureBackend(fixtures)
        p = self.pipeline()
        runs = pipeline.boot_all(backend, p.guests(self.dir / "out"))
        self.assertEqual([g.target.name for g in backend.asked],
                         [t.name for t in self.targets])
        for t in self.targets:
            want = util.guest_run(t.name, "complete/%s" % t.name, programs=("smoke",))
            got = runs["series"][t.name]
            self.assertEqual(got.run.cases().keys(), want.run.cases().keys())
            self.assertEqual(got.boot_status, "complete")
        m = compare.build_matrix(runs, self.targets, ("series",))
        self.assertEqual(m["summary"]["exit_status"], 0)

    def test_a_guest_names_its_column_its_files_and_its_command_line(self):
        p = self.pipeline()
        g = p.guest("series", self.targets[0], self.dir, append="rfm.timeout=5",
                    run_timeout=7)
        self.assertEqual(g.out, self.dir / "series" / "x86_64")
        self.assertEqual(g.append, "rfm.timeout=5")
        self.assertEqual(g.run_timeout, 7)
        self.assertEqual(g.programs, ("smoke",))
        # A variant's own command line follows the caller's.
        p.kernels = ("exec-window",)
        p.images[("exec-window", "x86_64")] = self.dir
        g = p.guest("exec-window", self.targets[0], self.dir, append="rfm.timeout=5")
        self.assertEqual(g.append, "rfm.timeout=5 " + targets.kernel_append("exec-window"))

    def test_a_guest_the_backend_lost_is_a_failed_cell_not_a_pass(self):
        fixtures = {t.name: util.FIXTURES / "panic" for t in self.targets}
        runs = pipeline.boot_all(FixtureBackend(fixtures, status="incomplete"),
                                 self.pipeline().guests(self.dir / "out"))
        m = compare.build_matrix(runs, self.targets, ("series",))
        self.assertNotEqual(m["summary"]["exit_status"], 0)

    def test_a_guest_the_backend_never_reported_is_not_a_pass(self):
        fixtures = {t.name: util.FIXTURES / "complete" / t.name for t in self.targets}
        runs = pipeline.boot_all(FixtureBackend(fixtures, lose=("i386",)),
                                 self.pipeline().guests(self.dir / "out"))
        self.assertEqual(runs["series"]["i386"].boot_status, "boot-timeout")
        m = compare.build_matrix(runs, self.targets, ("series",))
        self.assertEqual(m["summary"]["exit_status"], 2)

    def test_local_qemu_is_the_default_backend(self):
        p = self.pipeline()
        with mock.patch.object(qemu, "choose_accel", return_value="tcg") as choose:
            b = p.backend()
        self.assertIsInstance(b, pipeline.LocalQemu)
        self.assertEqual(b.accel, "tcg")
        choose.assert_called_once()
        # Instruction counts need TCG: no probe.
        with mock.patch.object(qemu, "choose_accel") as choose:
            self.assertEqual(p.backend(icount=True).accel, "tcg")
        choose.assert_not_called()


def calls_to(module, attribute):
    """Modules of rfmlib whose code calls module.attribute(...)."""
    found = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == attribute
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == module):
                found.add(path.stem)
    return found


class OnePipeline(unittest.TestCase):
    def test_only_the_pipeline_boots_guests_and_builds_initramfs_images(self):
        # (qemu.py's KVM probe calls its own boot() directly.)
        self.assertEqual(calls_to("qemu", "boot"), {"pipeline"})
        self.assertEqual(calls_to("guest", "build_initramfs"), {"pipeline"})

    def test_cli_holds_no_command_body(self):
        ap = cli.parser()
        sub = next(a for a in ap._actions if a.dest == "cmd")
        for name, p in sub.choices.items():
            fn = p.get_default("fn")
            self.assertIsNotNone(fn, name)
            self.assertNotEqual(fn.__module__, "rfmlib.cli", name)
        defined = [n.name for n in ast.parse((PACKAGE / "cli.py").read_text()).body
                   if isinstance(n, ast.FunctionDef)]
        self.assertEqual(sorted(defined), ["main", "out_dir_lock", "parser"])


if __name__ == "__main__":
    unittest.main()
