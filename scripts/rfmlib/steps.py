"""make check and make check-arm: their steps, in one table each.

`rfm check` runs a table's steps in order, each as its own `rfm COMMAND`
with the knob settings the step names (the Makefile's `check` target and
every `*-check`/`*-short` target call it), prints each step's time and
the total against the budget, and stops at the first step that fails.
`make deps` installs what a table's steps need: deps.py reads each step's
command and targets from here. An "{out}" in a setting is RFM_OUT.

make check is the x86 side and must fit CHECK_BUDGET cold on a quiet
machine of two cores (README: "Measured"); what does not fit runs by its
own command, on CI's schedule (docs/shards-and-ci.md): the ARM side
(make check-arm); the negative control (a kernel from scratch, 6 min
cold; make matrix-check), the i386 kernel's stock, exec window, sparse
and perf gate (make matrix-check, exec-window-check, sparse, perf-gate
on the five x86 targets); the whole mutant catalogues; bisect-check;
interrupt-check.

The coverage gate is in: the coverage kernels are incremental builds
of the series' (kconfig/gcov-runtime.config), a minute or two cold.
So is the second oracle on the x86_64 kernel: matrix-x86_64 holds the
series against stock and mainline (Debian's 7.3, a kernel from scratch)
with mainline's robust futex selftests on the three ABIs, and mainline
with the mails of upstream/ (an incremental build of mainline's)
against mainline, which upstream-check-short then judges; the i386 and
ARM mainline kernels, and the other selftests, are make
mainline-check's and make upstream-check's. To make room (45 min 34 s cold with it, 2026-12-06),
exec-window-short and mutate-gen-short went to CI's schedule, whose
make exec-window-check and make mutate-gen run them in full; and then
perf-gate-short (40 min 33 s cold with it, 2026-12-06), whose make
perf-gate, with mainline's column, is on the schedule too. Issue 38's
SMP steps (coverage on two vCPUs, mutate-smp) and kernels took it to
41 min 56 s cold (2026-12-06): mutate-short (2 min 38 s; make mutate on
the schedule runs its three mutants among all the others) went there
too, and make host-test runs its modules two at a time (1 min 04 s to
about 40 s cold). Measured again in one run, that was still 41 min 26 s
(the machine's pace varies by a minute between cold runs): mutate-smp
(1 min 57 s) and lava-check-short (37 s), the last two steps, went to
the schedule as well, whose smp job plants the retry mutant on the
eight targets and whose x86-whole job runs make lava-check on the five
x86 ones. The 38 min 52 s that run took to the end of
upstream-check-short is make check's cold time now.
"""
from dataclasses import dataclass

CHECK_BUDGET = 40 * 60      # seconds, cold, on a quiet 2-core machine


@dataclass(frozen=True)
class Step:
    name: str           # the Makefile target that runs it alone
    command: str        # the rfm command
    about: str
    settings: tuple = ()    # ((KNOB, value), ...) it runs under
    args: tuple = ()

    def env(self, out):
        return {k: v.replace("{out}", str(out)) for k, v in self.settings}

    def setting(self, name):
        return dict(self.settings).get(name)


# make check builds four kernels from scratch: the series for x86_64 and
# i386 (the main job's), stock and mainline for x86_64; the test-only variants, the
# coverage kernels and the mutants are incremental builds of theirs.
# The negative control, and stock on the i386 kernel, are make
# matrix-check's, on CI's schedule: with the coverage gate in, the
# negative control's kernel no longer fit the cold budget (42 min 21 s
# with it, 2026-12-05). The coverage gate and the guest self-test show
# here that the cases can fail; the mutant catalogues are the schedule's.
X86_64_ABIS = "x86_64,x86_64-ia32,x86_64-x32"

CHECK = (
    Step("knobs-check", "knobs", "every knob make check reads has a good value",
         args=("--check", "check")),
    Step("deps", "deps", "the packages, the kernel tree and the tools make check needs"),
    Step("host-test", "host-tests", "the driver's unit tests"),
    Step("ci-check", "ci-check", "the CI files read by actionlint and gitlab-ci-local"),
    Step("abi", "abi", "the ABI gate: LP64, ILP32, x32"),
    Step("checkpatch", "checkpatch", "checkpatch --strict, the names, the mutants apply"),
    Step("sparse-short", "sparse", "sparse on the series' C files against stock, x86_64",
         (("TARGETS", "x86_64"),)),
    Step("guest-selftest", "guest-selftest", "a panicking guest gives 1, a hanging one 2"),
    Step("fuzz-short", "fuzz", "hostile lists against the walk's model, short",
         (("KERNELS", "series"), ("FUZZ_ITERATIONS", "400"), ("FUZZ_SECONDS", "60"))),
    Step("stress-short", "stress", "owners killed while others wait, short",
         (("KERNELS", "series"), ("STRESS_SECONDS", "5"))),
    Step("matrix-series", "matrix-check", "the main job's matrix: the series on the five "
         "x86 targets, every case passing and agreeing", (("KERNELS", "series"),)),
    Step("coverage", "coverage", "every line the series adds reached on the five x86 "
         "targets (gcov), or named in docs/coverage.md, on two vCPUs each: every case "
         "passing there, the races only a second CPU runs among them"),
    Step("matrix-x86_64", "matrix-check", "series against stock and mainline (7.3), "
         "and mainline with upstream/ against mainline, mainline's robust futex "
         "selftests included, on the x86_64 kernel's three ABIs",
         (("KERNELS", "series,stock,mainline,mainline-fix"), ("TARGETS", X86_64_ABIS),
          ("SELFTESTS", "robust"), ("RFM_OUT", "{out}/x86_64"))),
    Step("upstream-check-short", "upstream-check", "the mails of upstream/: git am, "
         "checkpatch of 7.3, no new warning, and matrix-x86_64's verdict on what they fix",
         (("TARGETS", X86_64_ABIS), ("UPSTREAM_MATRIX", "{out}/x86_64"))),
)

# The ARM side: the ABI gate of AAPCS64 and EABI, the matrix on the three
# ARM targets with the negative control, LAVA's round trip on arm64.
CHECK_ARM = (
    Step("deps-arm", "deps", "the ARM toolchains and QEMU",
         (("TARGETS", "arm"), ("DEPS_FOR", "check-arm"))),
    Step("abi-arm", "abi", "the ABI gate: AAPCS64, EABI", (("TARGETS", "arm"),)),
    Step("matrix-check-arm", "matrix-check", "the ARM matrix: series, stock, baseline",
         (("TARGETS", "arm"), ("RFM_OUT", "{out}/arm"))),
    Step("lava-check-arm", "lava-check", "the LAVA round trip on the ARM targets",
         (("TARGETS", "arm"), ("RFM_OUT", "{out}/arm"))),
)

TABLES = {"check": CHECK, "check-arm": CHECK_ARM}

# What CI runs on its schedule instead (make targets; the scheduled jobs
# of .gitlab-ci.yml and .github/workflows/scheduled.yml, which a host test
# holds to this list): make check's steps in full.
SCHEDULED = ("make check-arm", "make matrix-check", "make exec-window-check", "make sparse",
             "make perf-gate", "make lava-check", "make mutate", "make mutate-gen", "make interrupt-check",
             "make mainline-check", "make upstream-check", "make smp-check")


def step(name):
    """The step called `name` in any table."""
    for table in TABLES.values():
        for s in table:
            if s.name == name:
                return s
    raise KeyError(name)
