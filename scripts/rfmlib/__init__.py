"""robust-futex-matrix: build, boot and compare the robust-futex matrix.

The modules in layers. A module imports only from its own layer or the
ones above it in this list, always at the top of the file, and no two
modules import each other, even through others (tests/host/test_layers.py
checks all three):

    base        log atomic procs elf bzimage ktap targets tables
    settings    knobs config steps
    host        archive toolchain deps names sharedlibs
    build/boot  tree kbuild prebuilt sparse abi ci cilint guest kselftest qemu lava
    results     compare kcidb report merge mutgen
    pipeline    pipeline
    commands    matrix selftest shell bisect suites bench mutate checkpatch lab checkrun
                coverage
    cli         cli

base reads files and formats text and knows the target table; settings
reads the environment (knobs), says where things live (config) and what
make check runs (steps); host is what this machine has and what Debian's
archive serves (archive: the project's own apt; deps: what each command
needs; toolchain: Debian's cross gcc, unpacked); build/boot makes trees, kernels and images (and mainline's
selftests, kselftest) and boots them; results parse and compare what the guests said; pipeline is
the one path from kernels and targets to guest runs, with the boot
backend behind one seam; commands are the bodies of the commands, one
module per subject; cli parses the command line and dispatches. A few
commands small enough to be one call live with their subject below
(abi, sparse, ci's cache-key, deps, knobs). A knob whose check needs a domain module's knowledge gets
it from a module of base (bzimage reads a kernel image's header), or the
check lives with its subject (guest.extra_for for EXTRA).
"""

LAYERS = (
    ("base", ("log", "atomic", "procs", "elf", "bzimage", "ktap", "targets", "tables")),
    ("settings", ("knobs", "config", "steps")),
    ("host", ("archive", "toolchain", "deps", "names", "sharedlibs")),
    ("build/boot", ("tree", "kbuild", "prebuilt", "sparse", "abi", "ci", "cilint", "guest",
                    "kselftest", "qemu", "lava")),
    ("results", ("compare", "kcidb", "report", "merge", "mutgen")),
    ("pipeline", ("pipeline",)),
    ("commands", ("matrix", "selftest", "shell", "bisect", "suites", "bench", "mutate",
                  "checkpatch", "lab", "checkrun", "coverage", "upstream")),
    ("cli", ("cli",)),
)
