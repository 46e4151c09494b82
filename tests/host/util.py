"""Shared fixture loading for the host tests.

A fixture is a directory under fixtures/ holding what one guest boot leaves
in out/<kernel>/<target>/: results.ktap and, when it matters, console.log.
See fixtures/README for what each one is.
"""
from pathlib import Path

from rfmlib import compare, ktap, pipeline, targets

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The targets the fixtures were captured on (the table may hold more).
FIXTURE_TARGETS = targets.select_targets("x86_64,x86_64-ia32,i386")
TARGET_NAMES = tuple(t.name for t in FIXTURE_TARGETS)
SMOKE_CASES = ("smoke.set_get_roundtrip", "smoke.set_bad_length",
               "smoke.death_one_lock")
VARIANT_PROGRAMS = ("robust_abi", "smoke")     # the programs of variants/
# The negative control, as tests/negative-control.txt states it.
CONTROL = [("*.death_*", "FAIL"), ("smoke.set_get_roundtrip", "obs set_errno=ENOSYS")]


def path(fixture, name="results.ktap"):
    return FIXTURES / fixture / name


def text(fixture, name="results.ktap"):
    return path(fixture, name).read_text()


def parse(fixture):
    """The parsed results.ktap of a fixture."""
    return ktap.parse(text(fixture))


def guest_run(target, fixture, boot="complete", programs=("smoke",), detail=""):
    """A GuestRun as pipeline.load_guest_run builds it from an out/ directory."""
    return pipeline.load_guest_run(FIXTURES / fixture, target, boot, 1.5, detail,
                                   programs)


def guest_run_from_text(target, results, boot="complete", programs=("smoke",),
                        console=()):
    """A GuestRun from results text (for a variant made inside a test)."""
    return compare.GuestRun(target=target, boot_status=boot,
                            run=ktap.parse(results), console=list(console),
                            programs=tuple(programs), seconds=1.5)


def complete_runs(set_name="complete", programs=("smoke",)):
    """{target: GuestRun} of a three-target fixture set, e.g. complete/."""
    return {t: guest_run(t, "%s/%s" % (set_name, t), programs=programs)
            for t in TARGET_NAMES}


def variant_runs():
    """variants/ (smoke + robust_abi) on every target."""
    return complete_runs("variants", programs=VARIANT_PROGRAMS)


def edited(target, fixture, old, new, **kwargs):
    """A GuestRun from a fixture's results with one piece changed."""
    results = text(fixture)
    if old not in results:
        raise AssertionError("%r is not in %s" % (old, fixture))
    return guest_run_from_text(target, results.replace(old, new), **kwargs)


def with_runs(runs, replacements):
    """A copy of {target: GuestRun} with some targets' runs replaced."""
    out = dict(runs)
    out.update(replacements)
    return out


def rows_by_case(rows):
    return {row["case"]: row for row in rows}


def statuses(row):
    """{target: status} of one matrix row."""
    return {t: cell["status"] for t, cell in row["cells"].items()}


def compare_all(runs):
    """compare_targets over every target, as {case: row}."""
    return rows_by_case(compare.compare_targets(runs, FIXTURE_TARGETS))


def matrix(runs_by_kernel, kernels=("series",), **kwargs):
    """build_matrix over every target with fixed, readable meta."""
    meta = {"tree": "linux-source-6.1 6.1.192-3", "accel": "tcg",
            "kernels": {k: "6.1.192 + 0 patch(es)" for k in kernels}}
    return compare.build_matrix(runs_by_kernel, FIXTURE_TARGETS, list(kernels),
                                meta=meta, **kwargs)


def check_matrix(**replace_by_kernel):
    """The runs of a `matrix-check` (series, stock, baseline), all as they
    should be, with replacements per kernel: {kernel: {target: GuestRun}}."""
    runs = {"series": complete_runs(), "stock": complete_runs(),
            "baseline": complete_runs("baseline")}
    for kernel, replacements in replace_by_kernel.items():
        runs[kernel] = with_runs(runs[kernel], replacements)
    return runs


# Where Debian installs python3-* packages (python3-yaml, python3-jsonschema,
# in deps.PACKAGES). `python3` may be another interpreter (pyenv, a venv)
# that does not look there; the tests that need these modules find them
# there as a last resort, after whatever the interpreter has itself.
DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def debian_module(name):
    """Import `name`, from Debian's dist-packages if the interpreter lacks it."""
    import importlib
    import sys
    try:
        return importlib.import_module(name)
    except ImportError:
        if DEBIAN_DIST_PACKAGES not in sys.path:
            sys.path.append(DEBIAN_DIST_PACKAGES)
        try:
            return importlib.import_module(name)
        except ImportError:
            raise AssertionError("Python module %s is missing: `make deps` installs "
                                 "Debian's python3-%s" % (name, name.lower())) from None


def provenance(target_names=TARGET_NAMES, kernels=("series", "stock", "baseline")):
    """What a run records of its inputs in meta["provenance"], made up: two
    patches, a kernel key per kernel and config, an initramfs per ABI."""
    patches = [{"name": "%04d-x.patch" % n, "sha256": "%064x" % n} for n in (1, 2)]
    chosen = [targets.target(t) for t in target_names]
    kconfigs = sorted({t.kconfig for t in chosen})
    users = sorted({t.userland for t in chosen})
    return {"tree": {"package": "linux-source-6.1", "version": "6.1.192-3", "linux": "6.1.192"},
            "series": {"key": "5e71e5", "patches": patches},
            "kernels": {k: {kc: {"key": "%s-%s-key" % (k, kc), "compiler": "gcc 12"}
                            for kc in kconfigs} for k in kernels},
            "patches": {"series": patches, "stock": [], "baseline": patches[:1]},
            "initramfs": {u: "%s-cpio" % u for u in users},
            "source": "c0ffee"}
