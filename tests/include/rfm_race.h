/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rfm_race.h - the robust unlock race (glibc bug 14485), made
 * deterministic, for race.c (the hazard) and unlock_race.c (the 2026 ABI
 * without it).
 *
 * A robust unlock names the lock in list_op_pending, releases the word,
 * and clears list_op_pending. An owner that dies between the last two
 * leaves its exit walk the released lock; by then the memory may hold
 * something else, and if that happens to equal the dead owner's TID the
 * walk writes FUTEX_OWNER_DIED into it.
 *
 * The owner is a child the case traces. For every k, a fresh child sets
 * up the unlock, stops, and is single-stepped k instructions into it;
 * then, if the word is released, the memory is "reused" with the owner's
 * TID in it, and the child is killed. Afterwards the word says what the
 * exit walk did:
 *
 *  - released, and now FUTEX_OWNER_DIED: corrupted, the walk wrote into
 *    memory that was no longer the lock;
 *  - still held at the kill, and not FUTEX_OWNER_DIED: lost, a lock the
 *    dead owner held was not recovered.
 *
 * Every k is tried, from the first instruction after the stop to the end
 * of the unlock. 32-bit ARM kernels have no PTRACE_SINGLESTEP: the cases
 * skip there.
 */
#ifndef RFM_RACE_H
#define RFM_RACE_H

#include "rfm_unlock.h"

#include <sys/ptrace.h>

#define RFM_RACE_MAX_STEPS	4000	/* far more than any unlock path here */

#define RFM_RACE_GUARD	0x5a5a5a5au

struct rfm_race_owner {
	struct robust_list_head head;
	uint32_t guard;		/* right after the slot: never written */
	struct rfm_lock lock;
	volatile uint32_t tid;
	volatile uint32_t done;	/* the unlock has returned */
};

/*
 * The classic robust unlock of a lock without waiters: release the word,
 * then clear the slot. A store-release, not glibc's cmpxchg: single
 * steps never get through an ARM load/store-exclusive loop (each step
 * clears the exclusive monitor), and the window is the same.
 */
static inline void rfm_race_classic_unlock(struct rfm_race_owner *o)
{
	__atomic_store_n(&o->lock.futex, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&o->head.list_op_pending, NULL, __ATOMIC_RELAXED);
}

/* The vDSO try-unlock for this ABI's list, and the system call if it fails. */
static inline void rfm_race_vdso_unlock(struct rfm_race_owner *o, uint32_t tid,
					void *fn)
{
	void *slot = &o->head.list_op_pending;

	if (rfm_own_try_unlock_call(fn, &o->lock.futex, tid, slot) != tid)
		rfm_robust_unlock_wake(&o->lock.futex, slot, 1);
}

/* The traced owner: register the list, name the lock, stop, unlock, exit. */
static inline void rfm_race_owner_main(struct rfm_race_owner *o,
				       enum rfm_unlock_path path, uint32_t bits,
				       void *fn)
{
	uint32_t tid = (uint32_t)rfm_gettid();

	o->tid = tid;
	o->guard = RFM_RACE_GUARD;
	rfm_head_init(&o->head);
	/* Taken off the list already, as an unlock does first */
	o->lock.futex = tid | bits;
	o->head.list_op_pending = &o->lock.link;
	if (rfm_set_robust_list(&o->head, sizeof(o->head)))
		_exit(1);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(2);
	/* Not raise(): no lock of libc's to step through after the stop */
	syscall(SYS_kill, getpid(), SIGSTOP);
	switch (path) {
	case RFM_UNLOCK_CLASSIC:
		rfm_race_classic_unlock(o);
		break;
	case RFM_UNLOCK_SYSCALL:
		rfm_robust_unlock_wake(&o->lock.futex, &o->head.list_op_pending, 1);
		break;
	case RFM_UNLOCK_VDSO:
		rfm_race_vdso_unlock(o, tid, fn);
		break;
	}
	o->done = 1;
	/* Stop again: a tracer waiting for a breakpoint learns it missed */
	syscall(SYS_kill, getpid(), SIGSTOP);
	for (;;)
		pause();	/* killed here, once the tracer sees done */
}

struct rfm_race_tally {
	int runs, windows, corrupted, lost, steps_to_done;
	int clobbered;		/* runs that wrote past the slot */
	int first_window;	/* k of the first window seen, or -1 */
};

/* Fork the owner and wait for its stop before the unlock: its pid, or -1. */
static inline pid_t rfm_race_start(struct rfm_race_owner *o,
				   enum rfm_unlock_path path, uint32_t bits,
				   void *fn)
{
	int status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		rfm_race_owner_main(o, path, bits, fn);
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	return pid;
}

static inline void rfm_race_kill(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* One single step of a stopped tracee: 0, or -1 (errno set). */
static inline int rfm_race_step(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
		return -1;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		errno = ECHILD;
		return -1;
	}
	/* Anything but the step's trap: the owner is off its path */
	if (WSTOPSIG(status) != SIGTRAP) {
		rfm_diag("a single step stopped with signal %d", WSTOPSIG(status));
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/*
 * The owner is stopped where the case wants it (run @k): look, reuse the
 * memory if the lock is released, kill it, and count what its exit walk
 * did.
 */
static inline void rfm_race_judge(struct rfm_race_owner *o, pid_t pid, int k,
				  struct rfm_race_tally *t)
{
	int released = (o->lock.futex & FUTEX_TID_MASK) != o->tid;
	int in_window = released && o->head.list_op_pending != NULL;

	if (released)
		o->lock.futex = o->tid;		/* the memory, reused */
	rfm_race_kill(pid);

	t->runs++;
	if (in_window && t->first_window < 0)
		t->first_window = k;
	t->windows += in_window;
	t->corrupted += released && (o->lock.futex & FUTEX_OWNER_DIED);
	t->lost += !released && !(o->lock.futex & FUTEX_OWNER_DIED);
	t->clobbered += o->guard != RFM_RACE_GUARD;
}

/*
 * One child: @k single steps after its stop, then judged. Returns 1 if
 * it ran, 0 once k is past the end of the unlock, -1 on a tracing error
 * (errno set).
 */
static inline int rfm_race_one_run(struct rfm_race_owner *o,
				   enum rfm_unlock_path path, uint32_t bits,
				   void *fn, int k, struct rfm_race_tally *t)
{
	pid_t pid = rfm_race_start(o, path, bits, fn);

	if (pid < 0)
		return -1;
	for (int i = 0; i < k && !o->done; i++) {
		if (rfm_race_step(pid)) {
			int err = errno;

			rfm_race_kill(pid);
			errno = err;
			return -1;
		}
	}
	if (o->done) {
		rfm_race_kill(pid);
		return 0;
	}
	rfm_race_judge(o, pid, k, t);
	return 1;
}

static inline void rfm_race_tally_init(struct rfm_race_tally *t)
{
	memset(t, 0, sizeof(*t));
	t->first_window = -1;
}

/* Every k from 0 to the end of the unlock. */
static inline int rfm_race_sweep(enum rfm_unlock_path path, uint32_t bits,
				 void *fn, struct rfm_race_tally *t)
{
	struct rfm_race_owner *o = rfm_shared(sizeof(*o));

	rfm_race_tally_init(t);
	if (!o)
		return -1;
	for (int k = 0; k < RFM_RACE_MAX_STEPS; k++) {
		int r = rfm_race_one_run(o, path, bits, fn, k, t);

		if (r < 0)
			return -1;
		if (r == 0) {
			t->steps_to_done = k;
			return 0;
		}
	}
	errno = E2BIG;
	return -1;
}

#if defined(__x86_64__) || defined(__i386__)
/*
 * Single steps stop the owner at every instruction, but each stop is a
 * signal, and the kernel's fixup runs at each: stopped at the store of a
 * vDSO try-unlock, the owner has already had the slot cleared at the
 * stop before, and a window that left the store out would not show. So
 * the instructions of the vDSO function are also reached with a hardware
 * breakpoint (DR0, execute), one child each: the first signal the owner
 * gets in the unlock is at that instruction.
 */
#include <sys/user.h>

#define RFM_RACE_MAX_IPS	64

static inline unsigned long rfm_race_ip(pid_t pid)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return 0;
#ifdef __x86_64__
	return regs.rip;
#else
	return regs.eip;
#endif
}

static inline int rfm_race_debugreg(pid_t pid, int n, unsigned long value)
{
	return ptrace(PTRACE_POKEUSER, pid,
		      (void *)offsetof(struct user, u_debugreg[n]), (void *)value);
}

/*
 * The addresses of the instructions in [@start, @start + @len) the
 * unlock executes, in order, from one single-stepped run: their number,
 * or -1 (errno set).
 */
static inline int rfm_race_ips_in(struct rfm_race_owner *o, enum rfm_unlock_path path,
				  uint32_t bits, void *fn, unsigned long start,
				  unsigned long len, unsigned long *ips)
{
	pid_t pid = rfm_race_start(o, path, bits, fn);
	int n = 0;

	if (pid < 0)
		return -1;
	for (int i = 0; i < RFM_RACE_MAX_STEPS && !o->done; i++) {
		unsigned long ip;

		if (rfm_race_step(pid)) {
			int err = errno;

			rfm_race_kill(pid);
			errno = err;
			return -1;
		}
		ip = rfm_race_ip(pid);
		if (ip - start < len && n < RFM_RACE_MAX_IPS)
			ips[n++] = ip;
	}
	rfm_race_kill(pid);
	return n;
}

/*
 * One child per instruction of the vDSO function at @fn (@len bytes):
 * stopped there by a breakpoint, then judged. 0, or -1 (errno set).
 */
static inline int rfm_race_break_sweep(enum rfm_unlock_path path, uint32_t bits,
				       void *fn, unsigned long len,
				       struct rfm_race_tally *t)
{
	struct rfm_race_owner *o = rfm_shared(sizeof(*o));
	unsigned long ips[RFM_RACE_MAX_IPS];
	int n;

	rfm_race_tally_init(t);
	if (!o)
		return -1;
	n = rfm_race_ips_in(o, path, bits, fn, (unsigned long)fn, len, ips);
	if (n <= 0) {
		errno = n ? errno : ENOENT;
		return -1;
	}
	for (int k = 0; k < n; k++) {
		pid_t pid = rfm_race_start(o, path, bits, fn);
		int status;

		if (pid < 0)
			return -1;
		errno = 0;
		/* DR7 bit 0: DR0 enabled, as an execute breakpoint (RW0 = LEN0 = 0) */
		if (rfm_race_debugreg(pid, 0, ips[k]) || rfm_race_debugreg(pid, 7, 1) ||
		    ptrace(PTRACE_CONT, pid, NULL, NULL) ||
		    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
		    WSTOPSIG(status) != SIGTRAP || rfm_race_ip(pid) != ips[k]) {
			int err = errno ? errno : EPROTO;

			rfm_race_kill(pid);
			errno = err;
			return -1;
		}
		rfm_race_judge(o, pid, k, t);
	}
	t->steps_to_done = n;
	return 0;
}
#endif

/*
 * Can a tracer single-step a child from a stop to its exit, each step a
 * SIGTRAP? 1 if so; 0 if PTRACE_SINGLESTEP is refused (32-bit ARM
 * kernels: EIO); -1 if a step strays: stops with another signal, or the
 * child never gets to its exit. The way to the exit returns from a
 * function, a taken branch: QEMU 7.2's TCG resumes an s390x task after a
 * single-stepped taken branch at the next instruction in memory instead
 * of the target.
 */
static inline int rfm_can_single_step(void)
{
	int status = 0, result = 1;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		syscall(SYS_kill, getpid(), SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		result = -1;
	for (int i = 0; result > 0 && i < RFM_RACE_MAX_STEPS; i++) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL)) {
			result = i ? -1 : 0;
			break;
		}
		if (waitpid(pid, &status, 0) != pid) {
			result = -1;
			break;
		}
		if (WIFEXITED(status))
			break;
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
			rfm_diag("single step %d stopped the child with status %#x", i, status);
			result = -1;
			break;
		}
		if (i == RFM_RACE_MAX_STEPS - 1)
			result = -1;
	}
	if (!WIFEXITED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return result;
}

/* Is the guest emulated by QEMU's TCG (rfm.accel=tcg on the command line)? */
static inline int rfm_under_tcg(void)
{
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return strstr(line, "rfm.accel=tcg") != NULL;
}

#define RFM_NO_SINGLESTEP "no PTRACE_SINGLESTEP on this kernel (32-bit ARM and MIPS have none)"
#define RFM_STRAY_SINGLESTEP "single steps stray here: QEMU 7.2's TCG loses taken branches on s390x"

/*
 * Only a 32-bit ARM kernel (AArch32 tasks under arm64 have them) and a
 * MIPS one (no arch_has_single_step(), any ABI) may refuse single steps,
 * and only on s390 under QEMU's TCG may they stray: anywhere else
 * either is a failure, not a skip (on KVM or real s390 too).
 */
#if defined(__arm__) || defined(__mips__)
#define RFM_SINGLESTEP_OPTIONAL	1
#else
#define RFM_SINGLESTEP_OPTIONAL	0
#endif
#ifdef __s390__
#define RFM_SINGLESTEP_STRAY_OK	1
#else
#define RFM_SINGLESTEP_STRAY_OK	0
#endif

#define RFM_REQUIRE_SINGLESTEP_OR_SKIP() do {				\
	int can_step_ = rfm_can_single_step();				\
									\
	if (!can_step_) {						\
		RFM_CHECK(RFM_SINGLESTEP_OPTIONAL, "PTRACE_SINGLESTEP refused"); \
		return rfm_skip(RFM_NO_SINGLESTEP);			\
	}								\
	if (can_step_ < 0) {						\
		RFM_CHECK(RFM_SINGLESTEP_STRAY_OK && rfm_under_tcg(),	\
			  "single steps stray off the program");	\
		return rfm_skip(RFM_STRAY_SINGLESTEP);			\
	}								\
} while (0)

static inline void rfm_race_report(enum rfm_unlock_path path,
				   const struct rfm_race_tally *t)
{
	rfm_diag("%s: %d runs, unlock done after %d steps, window at k=%d, "
		 "%d in a window, %d corrupted, %d lost, %d clobbered",
		 rfm_unlock_path_names[path], t->runs, t->steps_to_done,
		 t->first_window, t->windows, t->corrupted, t->lost, t->clobbered);
	rfm_obs("window", "%s", t->windows ? "found" : "none");
	rfm_obs("corrupted", "%s", t->corrupted ? "yes" : "no");
	rfm_obs("lost", "%d", t->lost);
	rfm_obs("clobbered", "%d", t->clobbered);
}

#endif /* RFM_RACE_H */
