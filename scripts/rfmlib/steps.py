"""make check, make check-arm and CI's schedule: their steps, in tables.

`rfm check` runs a table's steps in order, each as its own `rfm COMMAND`
with the knob settings the step names (the Makefile's `check` target and
every `*-check`/`*-short` target call it), prints each step's time and
the total against the budget, and stops at the first step that fails.
`make deps` installs what a table's steps need: deps.py reads each step's
command and targets from here. An "{out}" in a setting is RFM_OUT.

make check is the x86 side and must fit CHECK_BUDGET cold on a quiet
machine of two cores (README: "Measured"; docs/timing.md has how each
step came to be in or out). What does not fit is SCHEDULE: jobs that each
fit what a cold make check leaves of CI's 90 minutes, so that .ci/run
runs one of them after make check, in turn (make check-next), and make
check-all runs them all (docs/schedule.md has their measured times).
"""
from dataclasses import dataclass

CHECK_BUDGET = 40 * 60      # seconds, cold, on a quiet 2-core machine


# Programs a step may run besides scripts/rfm, and the rfm command whose
# packages each needs (make deps).
SCRIPTS = {"interrupt-check": "run"}


@dataclass(frozen=True)
class Step:
    name: str           # the Makefile target that runs it alone
    command: str        # the rfm command, or a program of SCRIPTS in scripts/
    about: str
    settings: tuple = ()    # ((KNOB, value), ...) it runs under
    args: tuple = ()

    def env(self, out):
        return {k: v.replace("{out}", str(out)) for k, v in self.settings}

    def argv(self, out):
        """Its arguments, "{out}" standing for RFM_OUT."""
        return [a.replace("{out}", str(out)) for a in self.args]

    def setting(self, name):
        return dict(self.settings).get(name)

    @property
    def needs_of(self):
        """The rfm command whose packages it needs."""
        return SCRIPTS.get(self.command, self.command)


# make check builds four kernels from scratch: the series for x86_64 and
# i386 (the main job's), stock and mainline for x86_64; the test-only
# variants and the coverage kernels are incremental builds of theirs. The
# coverage gate and the guest self-test show here that the cases can
# fail; the negative control and the mutant catalogues are SCHEDULE's.
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



@dataclass(frozen=True)
class Job:
    """One job of CI's schedule: steps run in order, every one of them
    whatever the others gave (the job fails if one does), in
    RFM_OUT/schedule/NAME ("{out}" in a step's settings; "{root}" is
    RFM_OUT). `minutes`: its time in the last measured run of make
    check-all, from a cache make check had filled (docs/schedule.md), or
    None while it has none: .ci/run starts it only if that much of CI's
    time is left (the whole ROTATION_BUDGET for a job not yet measured)."""
    name: str
    about: str
    steps: tuple
    minutes: int = None
    rotates: bool = True    # False: it needs other jobs' results (a merge)

    @property
    def needs_minutes(self):
        """What .ci/run counts on for it: its figure, else the budget."""
        return ROTATION_BUDGET if self.minutes is None else self.minutes


X86, ARM64, ARMHF = "x86", "arm64,arm64-aarch32", "armhf"
MIPS_LE, MIPS_BE = "mips64el,mips64el-n32,mips64el-o32", "mips64,mips64-n32,mips64-o32"
PPC, S390 = "ppc", "s390"
ALL_TARGETS = "all"
RETRY_MUTANT = "cmpxchg-changed-value-accepted"


def _matrix(name, about, kernels, targets, out="{out}", **more):
    return Step(name, "matrix-check", about, (("KERNELS", kernels), ("TARGETS", targets),
                                              ("RFM_OUT", out)) + tuple(more.items()))


def _shards(prefix, about, count, catalogue=None, command="mutate", minutes=None):
    """A catalogue's mutants in `count` jobs of about equal size."""
    return tuple(Job("%s-%dof%d" % (prefix, k, count), "%s, part %d of %d" % (about, k, count),
                     (Step(command, command, about, (("TARGETS", X86),
                                                     ("MUTANT_SHARD", "%d/%d" % (k, count)))
                           + ((("MUTANTS", catalogue),) if catalogue else ())),),
                     minutes[k - 1] if minutes else None)
                 for k in range(1, count + 1))


def _arm_side(name, targets, minutes):
    return Job(name, "the %s targets: series, stock and the negative control; LAVA's "
               "round trip" % name, (
                   _matrix("matrix-check", "series, stock and the negative control (two "
                           "vCPUs)", "series,stock,baseline", targets),
                   Step("lava-check", "lava-check", "LAVA's round trip",
                        (("KERNELS", "series,stock,baseline"), ("TARGETS", targets),
                         ("RFM_OUT", "{out}")))), minutes)


def _mainline_side(name, targets, minutes, *more):
    return Job(name, "series, stock and mainline (7.3) with mainline's futex selftests, "
               "and mainline with the mails of upstream/ against mainline, on %s" % targets, (
                   _matrix("mainline-check", "series, stock, mainline and mainline-fix, "
                           "mainline's futex selftests", "series,stock,mainline,mainline-fix",
                           targets),
                   Step("upstream-check", "upstream-check", "the mails of upstream/: git am, "
                        "checkpatch of 7.3, builds, and that matrix's verdict on what they "
                        "fix", (("TARGETS", targets), ("UPSTREAM_MATRIX", "{out}"),
                                ("RFM_OUT", "{out}/upstream")))) + more,
               minutes)


def _smp_side(name, targets, minutes):
    return Job(name, "two vCPUs a guest on %s: the series, then with full preemption; the "
               "walk's cmpxchg retry mutant" % targets, (
                   _matrix("smp-check", "the series on two vCPUs", "series", targets,
                           "{out}/smp", CPUS="2"),
                   _matrix("smp-check-full", "the series on two vCPUs, full preemption",
                           "series", targets, "{out}/smp-full", CPUS="2", PREEMPT="full"),
                   Step("mutate-smp", "mutate", "the retry mutant, a race only two vCPUs run",
                        (("MUTANT", RETRY_MUTANT), ("TARGETS", targets), ("CPUS", "2"),
                         ("RFM_OUT", "{out}/mutate")))), minutes)


def _more_side(name, about, abis, targets, *more, also="", minutes=None):
    """A kernel config beyond x86 and ARM (make check-more): the ABI gate
    of its ABIs, series, stock and the negative control, then `more`
    steps (`also` says what they add)."""
    return Job(name, "%s: the ABI gate; series, stock and the negative control%s" % (
        about, also), (
        Step("abi-" + name, "abi", "the ABI gate: " + abis,
             (("TARGETS", targets), ("RFM_OUT", "{out}"))),
        _matrix("matrix-check", "series, stock and the negative control",
                "series,stock,baseline", targets)) + more, minutes)


# The mutants of tests/mutants that only a big-endian compat target can
# kill (their Targets: name ppc64-ppc32).
BIG_ENDIAN_MUTANTS = "compat-offset-read-as-long,compat-pending-read-as-64-bit"
# ... and those only s390's 31-bit ABI can (Targets: s390x-s390).
S390_MUTANTS = "compat-link-cast-not-compat-ptr"


def _debug_side(name, targets, minutes):
    debug = (("KERNELS", "debug"), ("TARGETS", targets), ("CPUS", "2"), ("PREEMPT", "full"),
             ("RFM_OUT", "{out}"))
    return Job(name, "the debug kernels (lockdep, KASAN where the arch has it) on two vCPUs "
               "with full preemption, on %s: stress and fuzz" % targets, (
                   Step("stress-debug", "stress", "owners killed while others wait",
                        debug + (("STRESS_SECONDS", "10"),)),
                   Step("fuzz-debug", "fuzz", "hostile lists against the walk's model",
                        debug + (("FUZZ_SECONDS", "90"),))), minutes)


# The whole of what make check leaves out, in jobs that each fit what is
# left of CI's 90 minutes after a cold make check (ROTATION_BUDGET; a host
# test holds every job to it), so that .ci/run can run one a submission,
# in turn. make check-all runs them all, in this order (a job after the
# one that builds a kernel it shares finds it in the cache), then the
# merges that join the jobs of one question into one matrix on all targets.
SCHEDULE = (
    Job("control-x86", "the negative control, and stock, on the five x86 targets; their "
        "LAVA jobs and the round trip; sparse on x86_64 and i386", (
            _matrix("matrix-check", "series, stock and the negative control (baseline, two "
                    "vCPUs)", "series,stock,baseline", X86),
            Step("lava-check", "lava-check", "LAVA's round trip",
                 (("KERNELS", "series,stock,baseline"), ("TARGETS", X86),
                  ("RFM_OUT", "{out}"))),
            Step("sparse", "sparse", "sparse on the series' C files against stock",
                 (("TARGETS", X86),))), 28),
    _mainline_side("mainline-x86", X86, 29, Step(
        "mutate-upstream", "mutate", "the mutants of the mails (tests/mutants-upstream)",
        (("MUTANTS", "tests/mutants-upstream"), ("TARGETS", "x86_64,x86_64-ia32,x86_64-x32"),
         ("SELFTESTS", "robust"), ("RFM_OUT", "{out}/upstream")))),
    Job("x86-window-perf", "the exec cases inside de_thread()'s race windows; series "
        "against stock and mainline in exact instruction counts; the five x86 targets", (
            _matrix("exec-window-check", "the exec cases inside de_thread()'s race windows",
                    "exec-window", X86, "{out}/exec-window"),
            Step("perf-gate", "perf-gate", "the walk, exit release and unlock paths, counted "
                 "twice", (("TARGETS", X86), ("RFM_OUT", "{out}")))), 14),
    Job("mainline-noia32", "series, stock and mainline on x86_64 without CONFIG_COMPAT; the "
        "mutant only that kernel builds", (
            _matrix("mainline-check", "series, stock and mainline, mainline's futex "
                    "selftests", "series,stock,mainline", "x86_64-noia32"),
            Step("mutate-noia32", "mutate", "LIST32 refused without CONFIG_COMPAT",
                 (("MUTANT", "unlock-list32-refused-without-compat"),
                  ("TARGETS", "x86_64-noia32"), ("RFM_OUT", "{out}")))), 22),
    _smp_side("smp-x86", X86, None),
    _debug_side("debug-x86", X86, None),
    Job("arm-abi", "the ABI gate of AAPCS64 and EABI", (
        Step("abi-arm", "abi", "the ABI gate: AAPCS64, EABI", (("TARGETS", "arm"),
                                                                ("RFM_OUT", "{out}"))),), 1),
    _arm_side("arm64", ARM64, 21),
    _mainline_side("mainline-arm64", ARM64, None),
    _smp_side("smp-arm64", ARM64, None),
    _debug_side("debug-arm64", ARM64, None),
    _arm_side("armhf", ARMHF, 20),
    _mainline_side("mainline-armhf", ARMHF, None),
    _smp_side("smp-armhf", ARMHF, None),
    _debug_side("debug-armhf", ARMHF, None),
    # make check-more: the targets beyond x86 and ARM (docs/mips.md).
    _more_side("mips", "the little-endian MIPS targets (n64, n32, o32 on one kernel)",
               "n64, n32, o32", MIPS_LE, minutes=31),
    _more_side("mips-be", "the big-endian MIPS targets (n64, n32, o32 on one kernel)",
               "n64, n32, o32 (big-endian)", MIPS_BE),
    _more_side("ppc", "the big-endian ppc64 targets (ppc64 and 32-bit PowerPC on one "
               "kernel)", "ppc64, ppc32", PPC,
               Step("mutate-be", "mutate", "the mutants only a big-endian compat task shows",
                    (("MUTANT", BIG_ENDIAN_MUTANTS), ("TARGETS", PPC),
                     ("RFM_OUT", "{out}/mutate"))),
               _matrix("mainline-check", "series, stock and mainline (7.3), mainline's "
                       "futex selftests", "series,stock,mainline", PPC, "{out}/mainline"),
               also="; the mutants only a big-endian compat task shows; mainline (7.3) with "
               "its futex selftests"),
    _more_side("s390", "the s390x targets (s390x and its 31-bit ABI on one kernel)",
               "s390x, s390 (31-bit)", S390,
               Step("mutate-s390", "mutate", "the mutants only a 31-bit s390 task shows",
                    (("MUTANT", S390_MUTANTS), ("TARGETS", S390),
                     ("RFM_OUT", "{out}/mutate"))),
               # 7.3 has no 31-bit ABI: s390x shows its ENOEXEC as a row.
               _matrix("mainline-check", "series, stock and mainline (7.3), mainline's "
                       "futex selftests, on s390x", "series,stock,mainline", "s390x",
                       "{out}/mainline"),
               also="; the mutants only a 31-bit s390 task shows; mainline (7.3) with its "
               "futex selftests on s390x"),
) + _shards("mutants", "the hand-written mutant catalogue (tests/mutants) on the five x86 "
            "targets", 3, minutes=(28, 30, 36)) + (
    Job("mutants-independent", "the catalogue written blind (tests/mutants-independent) on "
        "the five x86 targets", (
            Step("mutate", "mutate", "24 mutants written by someone who never saw the cases",
                 (("MUTANTS", "tests/mutants-independent"), ("TARGETS", X86))),), 22),
) + _shards("mutants-gen", "the generated mutants (make mutate-gen) on the five x86 targets",
            6, command="mutate-gen", minutes=(None,) * 6) + (
    Job("interrupt-idle", "make run killed at every stage, on an idle machine: the next run "
        "repairs the cache", (
            Step("interrupt-check", "interrupt-check", "SIGINT and SIGKILL at every stage",
                 args=("--cache", "{out}/cache")),), None),
    Job("interrupt-loaded", "the same beside two busy processes", (
        Step("interrupt-check", "interrupt-check", "the same, two busy processes beside it",
             args=("--cache", "{out}/cache", "--load", "2")),), None),
    # The jobs of one question on all the targets, as one run over their
    # union: the ABI groups across architectures must agree (make merge).
    Job("merge-all", "each question's jobs joined into one matrix on all targets", tuple(
        Step("merge-" + name, "merge", "%s on all the targets" % about,
             (("RESULTS", " ".join("{root}/schedule/%s%s" % (j, sub) for j in jobs)),
              ("TARGETS", ALL_TARGETS), ("RFM_OUT", "{out}/" + name)))
        for name, about, jobs, sub in (
            ("control", "series, stock and the negative control",
             ("control-x86", "arm64", "armhf", "mips", "mips-be", "ppc", "s390"), ""),
            ("mainline", "series, stock, mainline and mainline-fix",
             ("mainline-x86", "mainline-arm64", "mainline-armhf"), ""),
            ("smp", "the series on two vCPUs", ("smp-x86", "smp-arm64", "smp-armhf"), "/smp"),
            ("smp-full", "the series on two vCPUs, full preemption",
             ("smp-x86", "smp-arm64", "smp-armhf"), "/smp-full"))), 1, rotates=False),
)

# CI's limit for .ci/run, and what a cold make check (with make deps and
# the apt-get before it) leaves of it: every job that rotates must fit.
CI_MINUTES = 90
ROTATION_BUDGET = 42
# .ci/run starts a job only with this much more than its minutes left.
ROTATION_MARGIN = 3
# The commit count of main when the rotation began, with the first job:
# commit N runs job (N - ROTATION_START) mod the number that rotate.
ROTATION_START = 280

TABLES = dict({"check": CHECK, "check-arm": CHECK_ARM}, **{j.name: j.steps for j in SCHEDULE})


def job(name):
    """The job called `name` of SCHEDULE."""
    for j in SCHEDULE:
        if j.name == name:
            return j
    raise KeyError(name)


def step(name):
    """The step called `name` in any table."""
    for table in TABLES.values():
        for s in table:
            if s.name == name:
                return s
    raise KeyError(name)
