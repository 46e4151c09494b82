"""The driver's modules keep to the layers of scripts/rfmlib/__init__.py:
every import at the top of its file, none upward, no cycle."""
import ast
import subprocess
import unittest
from pathlib import Path

import rfmlib

PACKAGE = Path(rfmlib.__file__).parent


def imports(path):
    """[(imported module, line, at the top level?)] of one module's
    relative imports (from . import a / from .a import b)."""
    tree = ast.parse(path.read_text())
    top = set(id(n) for n in tree.body)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            found += [(n, node.lineno, id(node) in top) for n in names]
        elif isinstance(node, ast.Import):
            found += [(a.name.split(".", 1)[1], node.lineno, id(node) in top)
                      for a in node.names if a.name.startswith("rfmlib.")]
    return found


def graph():
    return {p.stem: imports(p) for p in sorted(PACKAGE.glob("*.py")) if p.stem != "__init__"}


def layer_of():
    return {m: i for i, (_, mods) in enumerate(rfmlib.LAYERS) for m in mods}


def cycles(edges):
    """Every module that lies on a cycle of the import graph."""
    on_cycle, state = set(), {}

    def visit(m, path):
        state[m] = "open"
        for n in edges.get(m, ()):
            if state.get(n) == "open":
                on_cycle.update(path[path.index(n):])
            elif n not in state:
                visit(n, path + [n])
        state[m] = "done"

    for m in edges:
        if m not in state:
            visit(m, [m])
    return on_cycle


class Layers(unittest.TestCase):
    def test_every_module_has_one_layer(self):
        listed = [m for _, mods in rfmlib.LAYERS for m in mods]
        self.assertEqual(len(listed), len(set(listed)), "a module in two layers")
        self.assertEqual(set(graph()), set(listed))

    def test_imports_sit_at_the_top_of_the_file(self):
        tucked = ["%s:%d imports %s" % (m, line, n) for m, found in graph().items()
                  for n, line, top in found if not top]
        self.assertEqual(tucked, [])

    def test_no_import_points_up(self):
        layer = layer_of()
        up = ["%s (%s) imports %s (%s)" % (m, rfmlib.LAYERS[layer[m]][0], n,
                                            rfmlib.LAYERS[layer[n]][0])
              for m, found in graph().items() for n, _, _ in found if layer[n] > layer[m]]
        self.assertEqual(up, [])

    def test_no_import_cycle(self):
        edges = {m: sorted({n for n, _, _ in found}) for m, found in graph().items()}
        self.assertEqual(sorted(cycles(edges)), [])

    def test_the_checks_see_a_cycle_and_a_tucked_import(self):
        self.assertEqual(sorted(cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]})),
                         ["a", "b", "c"])
        self.assertEqual(cycles({"a": ["b"], "b": [], "c": ["a", "b"]}), set())
        d = Path(self.id().replace(".", "_"))
        src = PACKAGE.parent / ("_layers_probe_%s.py" % d.name[-8:])
        src.write_text("from . import a\n\ndef f():\n    from .b import c\n")
        self.addCleanup(src.unlink)
        self.assertEqual(imports(src), [("a", 1, True), ("b", 4, False)])


if __name__ == "__main__":
    unittest.main()


class Pyflakes(unittest.TestCase):
    """No unused import, undefined name or unused variable in the driver,
    its scripts and its tests: pyflakes, with Debian's python3, which has
    the python3-pyflakes that make deps installs for the host tests."""

    def test_pyflakes_is_clean(self):
        repo = PACKAGE.parents[1]
        paths = [repo / "scripts" / "rfmlib", repo / "scripts" / "rfm",
                 repo / "scripts" / "interrupt-check", repo / "tests" / "host"]
        r = subprocess.run(["/usr/bin/python3", "-m", "pyflakes"] + [str(p) for p in paths],
                           capture_output=True, text=True)
        self.assertNotIn("No module named pyflakes", r.stderr,
                         "python3-pyflakes is not installed (make deps)")
        self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))
