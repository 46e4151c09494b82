# robust-futex-matrix: the entry points. The work is done by scripts/rfm;
# these targets only name it. Variables (KERNELS, TARGETS, EXTRA, LIBC,
# PROGRAM_TIMEOUT, V, ACCEL, JOBS, TARGET, KERNEL, RFM_CACHE, RFM_OUT) are
# passed through the environment.
export KERNELS TARGETS EXTRA V ACCEL JOBS TARGET KERNEL RFM_CACHE RFM_OUT KSRC
export LIBC PROGRAM_TIMEOUT
export FUZZ_ITERATIONS FUZZ_SECONDS FUZZ_SEED STRESS_SECONDS
export BZIMAGE BZIMAGE32 BZIMAGE_CONFIG MUTANTS MUTANT MUTANT_SHARD SAMPLE BISECT_FROM
export JOB CI_STARTED CI_MINUTES
export DEPS_FOR DEBIAN_MIRROR DEBIAN_SECURITY_MIRROR
export RESULTS KCIDB_ORIGIN LAVA_URL_BASE LAVA_LOGS

RFM := python3 scripts/rfm

.PHONY: check-all check-more check-next mainline-check coverage ci-check lava lava-run lava-import lava-check mutate-gen mutate-gen-short distro-check sparse exec-window-check check-arm repin perf-gate-short matrix-series smp-check matrix-x86_64 exec-window-short sparse-short lava-check-short deps-arm abi-arm matrix-check-arm lava-check-arm run check bench perf-gate fuzz stress fuzz-short stress-short mutate mutate-short mutate-smp merge cache-key abi host-test checkpatch bisect-check guest-selftest matrix-check report kernels shell deps clean help knobs knobs-check interrupt-check upstream-check upstream-check-short mutate-upstream

## run: build the kernels, boot every target, print the matrix (KERNELS=series)
run:
	$(RFM) run

## check: the tests, x86 (what CI runs): the steps of scripts/rfmlib/steps.py
## in order, each timed, within a budget of 40 min cold; STEP-NAME targets
## below run one step alone
check:
	$(RFM) check

## check-all: CI's schedule, everything make check leaves out, job by job
## (scripts/rfmlib/steps.py, SCHEDULE; JOB=a,b for some), each in
## RFM_OUT/schedule/JOB, then a table of each job's result and time
check-all:
	$(RFM) check-all

## check-more: the targets beyond x86 and ARM (MIPS n64, n32, o32, little-
## and big-endian; ppc64 and ppc32; s390x and its 31-bit ABI): the ABI
## gate, series, stock and the negative control; the schedule's jobs
## "mips", "mips-be", "ppc" and "s390", in RFM_OUT/schedule/ (docs/mips.md,
## docs/ppc.md, docs/s390.md)
check-more:
	JOB=mips,mips-be,ppc,s390 $(RFM) check-all

## check-next: the one job of the schedule whose turn it is (by the commit
## count of HEAD; JOB= to choose), if its stated time fits in what is left
## of CI's 90 minutes since CI_STARTED (what .ci/run runs after make check)
check-next:
	$(RFM) check-all --next

## deps-arm, abi-arm, matrix-check-arm, lava-check-arm: its steps alone
deps-arm:
	$(RFM) check-arm --step deps-arm

abi-arm:
	$(RFM) check-arm --step abi-arm

matrix-check-arm:
	$(RFM) check-arm --step matrix-check-arm

lava-check-arm:
	$(RFM) check-arm --step lava-check-arm

## check-arm: the ARM side of the tests: the ABI gate of AAPCS64 and EABI,
## the matrix on the three ARM targets with series, stock and baseline,
## LAVA's round trip on ARM (four ARM kernels cold; CI runs it on a
## schedule), in RFM_OUT/arm
check-arm:
	$(RFM) check-arm

## repin: pin patches/trees.json to the newest linux-source-6.1 Debian
## serves, once the series and the test-only patches apply to it exactly
repin:
	$(RFM) repin

## knobs: every variable the commands read: default, meaning, who reads it
knobs:
	@$(RFM) knobs

knobs-check:
	@$(RFM) check --step knobs-check

## interrupt-check: kill `make run` at every stage (SIGINT, SIGKILL) on a
## throw-away cache and prove the next run repairs it; two runs at once
## (slow: two kernel builds; not part of make check)
interrupt-check:
	python3 scripts/interrupt-check

host-test:
	$(RFM) check --step host-test

## guest-selftest: a guest whose kernel panics must give exit 1, one that
## hangs exit 2 (the failure paths, proven on a real boot)
guest-selftest:
	$(RFM) guest-selftest

## matrix-check: the whole x86 matrix: series, stock and the negative
## control (baseline) on the five x86 targets (make check runs the series
## on all five, stock and the negative control on the x86_64 kernel's
## three; CI runs this on its schedule)
matrix-check:
	$(RFM) matrix-check

## matrix-series, matrix-x86_64: make check's matrices: the series on the
## five x86 targets (in RFM_OUT); series, stock and mainline (7.3), with
## mainline's futex selftests, on the x86_64 kernel's three ABIs (in
## RFM_OUT/x86_64)
matrix-series:
	$(RFM) check --step matrix-series

## smp-check: the whole SMP matrix: the series on the eight targets with
## two vCPUs each (CPUS=2; PREEMPT=full for full preemption, a kernel
## build of its own), in RFM_OUT/smp-all (docs/smp.md)
smp-check:
	KERNELS=$${KERNELS:-series} TARGETS=$${TARGETS:-all} CPUS=$${CPUS:-2} RFM_OUT=$${RFM_OUT:-out}/smp-all $(RFM) matrix-check

matrix-x86_64:
	$(RFM) check --step matrix-x86_64

## exec-window-check: the exec cases inside de_thread()'s race windows,
## on the exec-window test kernel (series + patches/exec-window, booted
## with exec_window_ms=1000), on the five x86 targets, in
## RFM_OUT/exec-window; exec-window-short: the same on x86_64's three
## ABIs (in make check until 2026-12-06; CI's schedule runs the whole)
exec-window-check:
	KERNELS=exec-window RFM_OUT=$${RFM_OUT:-out}/exec-window $(RFM) matrix-check

exec-window-short:
	KERNELS=exec-window TARGETS=x86_64,x86_64-ia32,x86_64-x32 RFM_OUT=$${RFM_OUT:-out}/exec-window $(RFM) matrix-check

## mainline-check: the series against stock and mainline (Debian's 7.3), with
## mainline's futex selftests, on the eight targets and x86_64 without
## CONFIG_COMPAT (docs/mainline.md)
mainline-check:
	KERNELS=series,stock,mainline TARGETS="all x86_64-noia32" RFM_OUT=$${RFM_OUT:-out}/mainline $(RFM) matrix-check

## upstream-check: the mails of upstream/ for mainline (7.3): git am,
## checkpatch --strict of 7.3, the Cc list of get_maintainer.pl, no new
## build warning, and mainline-fix (7.3 + the mails) against mainline on
## the eight targets (TARGETS), with mainline's futex selftests, in
## RFM_OUT/upstream (docs/upstream.md); upstream-check-short: make
## check's, on the x86_64 kernel's three ABIs, judging matrix-x86_64's run
upstream-check:
	RFM_OUT=$${RFM_OUT:-out}/upstream $(RFM) upstream-check

upstream-check-short:
	$(RFM) check --step upstream-check-short

## mutate-upstream: the mutants of the mails of upstream/
## (tests/mutants-upstream), each a small mistake in mainline-fix, must
## turn the matrix red against mainline-fix's own run, on the x86_64
## kernel's three ABIs with mainline's robust selftests, in
## RFM_OUT/upstream/mutate
mutate-upstream:
	MUTANTS=tests/mutants-upstream TARGETS=$${TARGETS:-x86_64,x86_64-ia32,x86_64-x32} SELFTESTS=$${SELFTESTS:-robust} RFM_OUT=$${RFM_OUT:-out}/upstream $(RFM) mutate

## distro-check: the series and stock built from Debian's own config
## (kconfig/distro.config), on the x86 targets and x86_64-la57 (5-level
## paging), in RFM_OUT/distro; then from the i386 -686-pae flavour's, on
## the i386 targets, in RFM_OUT/distro-pae. Slow: six large builds, not
## in make check
distro-check:
	KERNELS=distro,distro-stock TARGETS="x86 x86_64-la57" RFM_OUT=$${RFM_OUT:-out}/distro $(RFM) matrix-check
	KERNELS=distro-pae,distro-pae-stock TARGETS=i386,i386-pentium3 RFM_OUT=$${RFM_OUT:-out}/distro-pae $(RFM) matrix-check

## checkpatch: the tree's scripts/checkpatch.pl --strict on every patch,
## the series' names against mainline's, every mutant applying exactly
checkpatch:
	$(RFM) checkpatch

## sparse-short: make check's: sparse on the x86_64 kernel only
sparse-short:
	$(RFM) check --step sparse-short

## sparse: make C=2 on the C files the series touches, x86_64 and i386,
## series against stock: no finding stock's files lack (builds the
## kernels if they are not cached)
sparse:
	$(RFM) sparse

## bisect-check: apply the series one patch at a time and build x86_64,
## x86_64 without IA32 emulation, i386, arm64 and arm after each;
## TARGETS=x86 or TARGETS=arm for one architecture; BISECT_FROM=N to
## start at patch N when the series grew at its end (slow: run before
## resolving a series change)
bisect-check:
	$(RFM) bisect-check

## abi: the ABI gate, on the host in seconds: abi/expected.abi against the
## series and stock trees' uapi headers, /usr/include, pahole, the syscall
## tables and the kernel's compat layout (KSRC=/path/to/tree for another)
abi:
	$(RFM) abi

## bench: the seed's performance claims on every target, series vs stock
## and the one-million-lock experiment (out/bench/: json, txt, png)
bench:
	$(RFM) bench

## perf-gate: the series' walk and exit release cost no more guest
## instructions than stock's and mainline's (7.3), nor its unlock paths
## than mainline's, on every target; counted by QEMU (-icount), run twice
## to show the counts are exact; perf-gate-short: series against stock on
## the x86_64 kernel's three ABIs (in make check until 2026-12-06)
perf-gate:
	$(RFM) perf-gate

perf-gate-short:
	KERNELS=bench-exit,bench-exit-stock TARGETS=x86_64,x86_64-ia32,x86_64-x32 $(RFM) perf-gate

## fuzz: random robust lists against a model of the walk, in the guest
## (KERNELS=debug by default; FUZZ_ITERATIONS, FUZZ_SECONDS, FUZZ_SEED)
fuzz:
	$(RFM) fuzz

## fuzz-short, stress-short: make check's versions, on the series kernel
fuzz-short:
	$(RFM) check --step fuzz-short

stress-short:
	$(RFM) check --step stress-short

## ci-check: the CI files read by their runners' own tools: the GitHub
## workflows by actionlint, the GitLab pipeline by gitlab-ci-local (schema,
## extends, rules and needs resolved; the jobs the target table asks for)
ci-check:
	$(RFM) ci-check

## lava: one LAVA job per kernel and target (KERNELS=series,stock,baseline,
## TARGETS=all by default) in RFM_OUT/lava/: jobs/, artifacts/, index.json,
## every job checked by lava_common's strict schema (LAVA_URL_BASE: where a
## lab fetches the artifacts; default file://)
lava:
	$(RFM) lava

## lava-run: run make lava's jobs here, offline, with Debian's lava-run
## and the stock qemu device, as a lab would; their logs in RFM_OUT/lava/logs
lava-run:
	$(RFM) lava-run

## lava-import: the jobs' logs (LAVA_LOGS, default RFM_OUT/lava/logs,
## NAME.log for NAME.yaml) into the matrix, as a local run's
lava-import:
	$(RFM) lava-import

## lava-check-short: the jobs of the series only (in make check until
## 2026-12-06; CI's schedule runs make lava-check)
lava-check-short:
	KERNELS=series $(RFM) lava-check

## lava-check: the LAVA round trip offline, on TARGETS: the jobs of
## KERNELS (series, stock, baseline) validate; the series on one target
## of each kernel config (x86: x86_64 and i386) through Debian's lava-run
## gives the local run's verdicts case by case; a tampered log does not;
## a local target and LAVA ones merge into one matrix
lava-check:
	$(RFM) lava-check

## mutate: build every mutant of tests/mutants (MUTANTS=DIR for your own
## catalogue, MUTANT=a,b for some), boot it on every target, and fail if
## one leaves the matrix green (out/mutate/: mutate.txt, mutate.json)
mutate:
	$(RFM) mutate

## mutate-short: three mutants of the catalogue (the walk, the compat
## arithmetic, get_robust_list()), cheap to rebuild, on the x86_64
## kernel's three ABIs; mutate-smp: the walk's cmpxchg retry dropped, a
## race only two vCPUs run, on x86_64 (both in make check until
## 2026-12-06; CI's schedule runs make mutate, and the retry mutant on
## the eight targets in its smp job)
mutate-short:
	MUTANT=walk-misaligned-word-accepted,compat-offset-64-bit-sum,get-head-before-len TARGETS=x86_64,x86_64-ia32,x86_64-x32 $(RFM) mutate

mutate-smp:
	MUTANT=cmpxchg-changed-value-accepted TARGETS=x86_64 CPUS=2 RFM_OUT=$${RFM_OUT:-out}/mutate-smp $(RFM) mutate

## coverage: the series on a gcov kernel per x86 config, its guests on two
## vCPUs (CPUS=2 unless given: the walk's cmpxchg retry is a race on two
## CPUs); which lines and branches it adds the suites reach; fails on an
## added line not reached unless docs/coverage.md names it.
## out/coverage/: coverage.txt, html/
coverage:
	$(RFM) coverage

## mutate-gen: generate mutants from the series' added C lines (every
## operator of scripts/rfmlib/mutgen.py at every occurrence), build and
## boot each as make mutate does (SAMPLE=N for a fixed sample);
## out/mutate-gen/: the catalogue, mutate.txt, mutate.json
mutate-gen:
	$(RFM) mutate-gen

## mutate-gen-short: a fixed sample of two generated mutants on x86_64's
## three ABIs (in make check until 2026-12-06; CI's schedule runs them all)
mutate-gen-short:
	SAMPLE=2 TARGETS=x86_64,x86_64-ia32,x86_64-x32 $(RFM) mutate-gen

## stress: owners killed at random while others wait, processes and
## threads (KERNELS=debug by default; STRESS_SECONDS per case)
stress:
	$(RFM) stress

## report: render out/ again (matrix.txt, matrix.json, junit.xml)
report:
	$(RFM) report

## merge: join shard outputs into one matrix, as one run over their union
## (RESULTS="dir1 dir2 ...", each a run's RFM_OUT; the merge goes to RFM_OUT)
merge:
	$(RFM) merge

## cache-key: print the key of the kernels KERNELS and TARGETS select
## (for CI caches)
cache-key:
	@$(RFM) cache-key

## kernels: build (or find in the cache) the kernels only
kernels:
	$(RFM) kernels

## shell: an interactive busybox shell in a guest (TARGET=i386 KERNEL=series)
shell:
	$(RFM) shell

## deps: install the Debian packages, and download into the cache the
## kernel tree, busybox and the npm tools, that DEPS_FOR's commands (make
## check's by default) need on TARGETS (x86 by default); then they run
## offline. TARGETS=arm or all adds the ARM toolchains and QEMU
deps:
	$(RFM) deps

## clean: remove out/ (the build cache is kept; see docs/cache.md)
clean:
	rm -rf out

help:
	@sed -n 's/^## //p' Makefile
