// SPDX-License-Identifier: GPL-2.0
/*
 * unlock_race: the robust unlock race gone with the 2026 ABI (the
 * series' patches 12 to 14), through each path, for this ABI's list
 * (native on x86_64 and arm64; compat on ia32, x32 and AArch32; native
 * 32-bit on i386 and armhf).
 *
 * The owner is single-stepped into every instruction of its unlock in
 * turn and killed there, with the memory reused and holding its TID
 * whenever the lock is already released (rfm_race.h; race.c shows the
 * classic unlock corrupt it). Here no step may find the lock released
 * with the slot still set, no kill may corrupt the reused memory, and
 * every kill before the release must still recover the lock:
 *
 *  - FUTEX_WAKE with FUTEX_ROBUST_UNLOCK: the system call is one step;
 *  - the vDSO try-unlock: the kernel clears the slot of a task a signal
 *    (here each single-step trap) finds after a successful cmpxchg and
 *    before the store to the slot; then each instruction of the function
 *    once more, reached by a hardware breakpoint, so that the stop there
 *    is the first signal of the unlock (a single step's stop before it
 *    has had the slot cleared already);
 *  - the vDSO try-unlock of a word with FUTEX_WAITERS: the cmpxchg fails
 *    (ZF clear inside the same instructions), the slot must stay, and
 *    the system call releases the lock.
 *
 * Nothing may be written past the slot (the kernel clears it with the
 * width of the function's list).
 *
 * The vDSO cases skip outside x86 (mainline has the vDSO part there
 * only), every case on 32-bit ARM kernels (no PTRACE_SINGLESTEP).
 */
#include "rfm_race.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#include <fcntl.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <ucontext.h>

#define NO_VDSO "no vDSO robust try-unlock on this architecture (mainline has it on x86 only)"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_VDSO_UNLOCK 1
#else
#define HAVE_VDSO_UNLOCK 0
#endif

static int expect_no_window(enum rfm_unlock_path path, uint32_t bits, void *fn)
{
	struct rfm_race_tally t;

	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(rfm_race_sweep(path, bits, fn, &t) == 0, "tracing: %s",
		  strerror(errno));
	rfm_race_report(path, &t);
	RFM_CHECK(t.runs > 0, "no run");
	RFM_CHECK(t.windows == 0, "%d of %d kills in a window (the first at k=%d)",
		  t.windows, t.runs, t.first_window);
	RFM_CHECK(t.corrupted == 0, "%d corrupted", t.corrupted);
	RFM_CHECK(t.lost == 0, "%d held locks not recovered", t.lost);
	RFM_CHECK(t.clobbered == 0, "%d runs wrote past the slot", t.clobbered);
	return RFM_PASS;
}

static int syscall_unlock_has_no_window(void)
{
	RFM_REQUIRE_ROBUST_UNLOCK();
	return expect_no_window(RFM_UNLOCK_SYSCALL, FUTEX_WAITERS, NULL);
}

static int vdso_unlock(uint32_t bits)
{
	unsigned long size = 0;
	void *fn = rfm_own_try_unlock(&size);
	int ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	if (!fn && !HAVE_VDSO_UNLOCK)
		return rfm_skip(NO_VDSO);
	RFM_CHECK(fn, "this ABI's try-unlock is not in the vDSO");
	ret = expect_no_window(RFM_UNLOCK_VDSO, bits, fn);
	if (ret != RFM_PASS)
		return ret;
#if HAVE_VDSO_UNLOCK
	{
		struct rfm_race_tally t;

		/* Each instruction of the function as the first signal's stop */
		RFM_CHECK(rfm_race_break_sweep(RFM_UNLOCK_VDSO, bits, fn, size, &t) == 0,
			  "breakpoints: %s", strerror(errno));
		rfm_diag("breakpoints in the vDSO function (%lu bytes): %d runs, "
			 "%d in a window (the first at instruction %d), %d corrupted, "
			 "%d lost, %d clobbered", size, t.runs, t.windows, t.first_window,
			 t.corrupted, t.lost, t.clobbered);
		printf("# obs breakpoint_window=%s\n", t.windows ? "found" : "none");
		RFM_CHECK(t.runs > 0, "no instruction of the function reached");
		RFM_CHECK(t.windows == 0 && t.corrupted == 0 && t.lost == 0 &&
			  t.clobbered == 0, "stopped in the function: %d in a window, "
			  "%d corrupted, %d lost, %d clobbered", t.windows, t.corrupted,
			  t.lost, t.clobbered);
	}
#endif
	return RFM_PASS;
}

static int vdso_unlock_has_no_window(void)
{
	return vdso_unlock(0);
}

static int vdso_contended_unlock_has_no_window(void)
{
	return vdso_unlock(FUTEX_WAITERS);
}

#if HAVE_VDSO_UNLOCK
/*
 * ---- the signal-time fixup, where the task or its vDSO is unusual ----
 *
 * An owner stopped by single steps at the first instruction after its
 * try-unlock released the lock: that stop is a signal, and the fixup has
 * run for it. Its head is alone on a page, the lock on the next.
 */
#define PAGE	4096

struct fixup_owner {
	struct robust_list_head head;
	char pad[PAGE - sizeof(struct robust_list_head)];
	struct rfm_lock lock;
	volatile uint32_t tid;
	volatile long moved;	/* the vDSO's new address minus its old, or -1 */
};

/* The vDSO's mapping, from /proc/self/maps: 0, or -1. */
static int vdso_range(unsigned long *start, unsigned long *end)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[vdso]") &&
			sscanf(line, "%lx-%lx", start, end) == 2;
	fclose(f);
	return found ? 0 : -1;
}

/* Move the vDSO's text (not its data pages) elsewhere: the offset, or -1. */
static long move_vdso(void)
{
	unsigned long start, end;
	void *to;

	if (vdso_range(&start, &end))
		return -1;
	to = mmap(NULL, end - start, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED ||
	    mremap((void *)start, end - start, end - start,
		   MREMAP_MAYMOVE | MREMAP_FIXED, to) != to)
		return -1;
	return (long)((unsigned long)to - start);
}

/*
 * kill(@pid, SIGSTOP) without the C library: on i386 its system calls go
 * through the vDSO's __kernel_vsyscall, at the address it had at start.
 */
static void stop_self(pid_t pid)
{
#ifdef __i386__
	long ret;

	__asm__ volatile("int $0x80" : "=a" (ret) : "a" (SYS_kill), "b" (pid),
			 "c" (SIGSTOP) : "memory");
	(void)ret;
#else
	syscall(SYS_kill, pid, SIGSTOP);
#endif
}

static void fixup_owner_main(struct fixup_owner *o, void *fn, int slot_read_only,
			     int vdso_moved)
{
	uint32_t tid = (uint32_t)rfm_gettid();
	pid_t pid = getpid();

	o->tid = tid;
	rfm_head_init(&o->head);
	o->lock.futex = tid;
	o->head.list_op_pending = &o->lock.link;
	if (rfm_set_robust_list(&o->head, sizeof(o->head)))
		_exit(1);
	if (slot_read_only && mprotect(&o->head, PAGE, PROT_READ))
		_exit(4);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(2);
	/* Last: after it, only stop_self() may enter the kernel */
	o->moved = vdso_moved ? move_vdso() : 0;
	if (o->moved == -1)
		_exit(3);
	fn = (char *)fn + o->moved;
	stop_self(pid);
	rfm_own_try_unlock_call(fn, &o->lock.futex, tid, &o->head.list_op_pending);
	for (;;)
		stop_self(pid);	/* killed here, if not before */
}

/*
 * Fork the owner and single-step it until its lock is released. Returns
 * its pid, stopped there, or -1 with *@why saying what went wrong.
 */
static pid_t stop_after_release(struct fixup_owner *o, void *fn, int slot_read_only,
				int vdso_moved, const char **why)
{
	int status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	pid = fork();
	if (pid == 0)
		fixup_owner_main(o, fn, slot_read_only, vdso_moved);
	*why = "the owner did not stop before its unlock";
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		goto fail;
	if (!WIFSTOPPED(status)) {
		static char ended[160];

		snprintf(ended, sizeof(ended), "the owner ended before its unlock (status %#x; "
			 "exit 1: set_robust_list, 2: PTRACE_TRACEME, 3: mremap, 4: mprotect)",
			 status);
		*why = ended;
		errno = 0;
		return -1;
	}
	*why = "single steps";
	for (int i = 0; i < RFM_RACE_MAX_STEPS; i++) {
		if (rfm_race_step(pid))
			goto fail;
		if (o->lock.futex == 0)
			return pid;
	}
	*why = "the lock was never released";
fail:
	if (pid > 0)
		rfm_race_kill(pid);
	return -1;
}

/*
 * A slot the fixup cannot write (the head's page read-only) is handled as
 * for FUTEX_ROBUST_UNLOCK: the list it belongs to is given up, so that
 * the exit walk cannot follow the stale slot.
 */
static int vdso_fixup_unwritable_slot_gives_up_list(void)
{
	struct fixup_owner *o = rfm_shared(sizeof(*o));
	void *fn = rfm_own_try_unlock(NULL), *got = (void *)-1;
	const char *why;
	size_t len = 0;
	pid_t pid;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(o && fn, "set up: %s", o ? "no try-unlock in the vDSO" : "mmap");
	pid = stop_after_release(o, fn, 1, 0, &why);
	RFM_CHECK(pid > 0, "%s: %s", why, strerror(errno));
	ret = rfm_get_robust_list(pid, &got, &len);
	rfm_race_kill(pid);
	rfm_obs("registered", "%s", ret ? rfm_errno_name(errno) : got ? "kept" : "given-up");
	RFM_CHECK(ret == 0, "get_robust_list(owner): %s", rfm_errno_name(errno));
	RFM_CHECK(got == NULL, "the owner's list is still registered after the fixup "
		  "could not clear its slot");
	return RFM_PASS;
}

/*
 * The vDSO moved by mremap(): the fixup finds the window where the
 * function is now, and the slot is clear at the first stop after the
 * release, as it is where the vDSO was mapped.
 */
static int vdso_fixup_after_mremap(void)
{
	struct fixup_owner *o = rfm_shared(sizeof(*o));
	void *fn = rfm_own_try_unlock(NULL);
	const char *why;
	void *slot;
	pid_t pid;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(o && fn, "set up: %s", o ? "no try-unlock in the vDSO" : "mmap");
	pid = stop_after_release(o, fn, 0, 1, &why);
	RFM_CHECK(pid > 0, "%s: %s (the vDSO moved by %ld)", why, strerror(errno),
		  o->moved);
	slot = o->head.list_op_pending;
	rfm_race_kill(pid);
	rfm_obs("vdso_moved", "%s", o->moved ? "yes" : "no");
	rfm_obs("slot", "%s", slot ? "set" : "cleared");
	RFM_CHECK(o->moved != 0, "mremap() left the vDSO where it was");
	RFM_CHECK(slot == NULL, "stopped after the release with the slot still set: "
		  "the fixup missed the moved vDSO");
	return RFM_PASS;
}

/*
 * ---- the fixup on the way back from a system call ----
 *
 * A signal handler that returns (rt_sigreturn) to registers inside the
 * window, ZF set and DX naming a slot, with a second signal pending: the
 * series runs the fixup before that signal's delivery whatever brought
 * the task into the kernel, so the slot is clear when the second handler
 * runs. Mainline (7.3) runs it only after an interrupt or exception
 * entry, and leaves it set (patch 13's changelog argues the series' way;
 * patches/deviations-mainline.txt names it). The second handler never
 * returns into the window, so the vDSO's own store never runs.
 */
#ifdef __x86_64__
#define RFM_REG_IP	REG_RIP
#define RFM_REG_DX	REG_RDX
#else
#define RFM_REG_IP	REG_EIP
#define RFM_REG_DX	REG_EDX
#endif
#define RFM_EFLAGS_ZF	0x40

struct sigreturn_owner {
	struct robust_list_head head;
	struct rfm_lock lock;
	unsigned long window_ip;	/* an instruction of the window */
	volatile unsigned long seen_ip;	/* where the second signal found it */
	volatile void *slot;		/* the slot as the second handler saw it */
};

static struct sigreturn_owner *sigreturn_owner;
static sigjmp_buf sigreturn_out;

/* First signal: return into the window, the second signal pending. */
static void sigreturn_into_window(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)info;
	uc->uc_mcontext.gregs[RFM_REG_IP] = sigreturn_owner->window_ip;
	uc->uc_mcontext.gregs[REG_EFL] |= RFM_EFLAGS_ZF;
	uc->uc_mcontext.gregs[RFM_REG_DX] =
		(unsigned long)&sigreturn_owner->head.list_op_pending;
	raise(SIGUSR2);		/* blocked until the handler returns */
}

/* Second signal: look at the slot, and never return into the window. */
static void sigreturn_look(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)info;
	sigreturn_owner->seen_ip = uc->uc_mcontext.gregs[RFM_REG_IP];
	sigreturn_owner->slot = sigreturn_owner->head.list_op_pending;
	siglongjmp(sigreturn_out, 1);
}

static void sigreturn_owner_main(struct sigreturn_owner *o)
{
	struct sigaction first = { .sa_sigaction = sigreturn_into_window,
				   .sa_flags = SA_SIGINFO };
	struct sigaction second = { .sa_sigaction = sigreturn_look,
				    .sa_flags = SA_SIGINFO };

	sigreturn_owner = o;
	rfm_head_init(&o->head);
	o->lock.futex = 0;		/* released: the window's state */
	o->head.list_op_pending = &o->lock.link;
	sigemptyset(&first.sa_mask);
	sigaddset(&first.sa_mask, SIGUSR2);
	sigemptyset(&second.sa_mask);
	if (rfm_set_robust_list(&o->head, sizeof(o->head)) ||
	    sigaction(SIGUSR1, &first, NULL) || sigaction(SIGUSR2, &second, NULL))
		_exit(2);
	if (sigsetjmp(sigreturn_out, 1) == 0) {
		raise(SIGUSR1);
		_exit(3);	/* the first handler returned here: no second signal */
	}
	_exit(0);
}

static int vdso_fixup_after_sigreturn_into_window(void)
{
	struct fixup_owner *f = rfm_shared(sizeof(*f));
	struct sigreturn_owner *o = rfm_shared(sizeof(*o));
	void *fn = rfm_own_try_unlock(NULL);
	const char *why;
	int status;
	pid_t pid;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(f && o && fn, "set up: %s", fn ? "mmap" : "no try-unlock in the vDSO");
	/* Where the window is: a single-stepped owner stopped inside it. */
	pid = stop_after_release(f, fn, 0, 0, &why);
	RFM_CHECK(pid > 0, "%s: %s", why, strerror(errno));
	o->window_ip = rfm_race_ip(pid);
	rfm_race_kill(pid);
	RFM_CHECK(o->window_ip, "PTRACE_GETREGS: %s", strerror(errno));
	o->slot = (void *)-1;
	pid = fork();
	if (pid == 0)
		sigreturn_owner_main(o);
	RFM_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork: %s", strerror(errno));
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the owner ended with status %#x (exit 2: set up, 3: no second signal)",
		  status);
	rfm_obs("slot", "%s", o->slot == NULL ? "cleared" : "set");
	RFM_CHECK(o->seen_ip == o->window_ip, "the second signal found the task at %#lx, "
		  "not in the window (%#lx)", o->seen_ip, o->window_ip);
	RFM_CHECK(o->slot == NULL, "back from rt_sigreturn() into the window with ZF set, "
		  "the slot is still set when the next signal is delivered");
	return RFM_PASS;
}

#if defined(__x86_64__) && !defined(__ILP32__)
/*
 * ---- a 64-bit task's list32 slot above 4 GiB ----
 *
 * A 64-bit program may keep 32-bit lists (an emulator's guest threads)
 * and unlock them with the list32 try-unlock, whose slot is then any
 * address of the task, here one above 4 GiB. The fixup takes all of
 * RDX from a 64-bit task: the slot is cleared there, and no word at the
 * address's low 32 bits is touched (a canary page is mapped there when
 * the address is free).
 */
struct high_slot_owner {
	struct rfm_lock lock;
	volatile uint32_t slot[3];	/* [1] is the slot; [0], [2] guards */
};

#define HIGH_SLOT_PENDING	0x5a5a5a5aU	/* a 32-bit list_op_pending */
#define HIGH_SLOT_GUARD		0xa5a5a5a5U
#define OPCODE_JNZ_REL8		0x75

static void high_slot_owner_main(struct high_slot_owner *o, void *fn)
{
	uint32_t tid = (uint32_t)rfm_gettid();

	o->lock.futex = tid;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(1);
	stop_self(getpid());
	((rfm_try_unlock32_fn)fn)(&o->lock.futex, tid, (uint32_t *)&o->slot[1]);
	for (;;)
		stop_self(getpid());	/* killed here, if not before */
}

static int vdso_fixup_list32_slot_above_4gib(void)
{
	struct high_slot_owner *o = rfm_shared(sizeof(*o));
	unsigned long size = 0, ip = 0;
	void *fn = rfm_vdso_func(RFM_TRY_UNLOCK32, RFM_VDSO_VERSION, &size);
	volatile uint32_t *canary = MAP_FAILED;
	int status, steps = 0;
	pid_t pid;

	RFM_REQUIRE_ROBUST_UNLOCK();
	if (!fn && !rfm_kernel_has_compat())
		return rfm_skip("no CONFIG_COMPAT: the vDSO has no list32 try-unlock");
	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(o && fn, "set up: %s", o ? "no list32 try-unlock in the vDSO" : "mmap");
	RFM_CHECK((unsigned long)&o->slot[1] > 0xffffffffUL,
		  "the slot is at %p, not above 4 GiB", (void *)&o->slot[1]);
	o->slot[0] = o->slot[2] = HIGH_SLOT_GUARD;
	o->slot[1] = HIGH_SLOT_PENDING;
	{
		unsigned long alias = (uint32_t)(unsigned long)&o->slot[1];

		canary = mmap((void *)(alias & ~4095UL), 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (canary != MAP_FAILED) {
			memset((void *)canary, 0xa5, 4096);
			canary = (volatile uint32_t *)alias;
		}
	}
	pid = fork();
	if (pid == 0)
		high_slot_owner_main(o, fn);
	RFM_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFSTOPPED(status),
		  "the owner did not stop before its unlock: %s", strerror(errno));
	while (o->lock.futex != 0 && steps < RFM_RACE_MAX_STEPS) {
		if (rfm_race_step(pid))
			break;
		steps++;
	}
	if (o->lock.futex == 0)
		ip = rfm_race_ip(pid);
	rfm_race_kill(pid);
	RFM_CHECK(o->lock.futex == 0, "the lock was never released (%d steps)", steps);
	/* The stop is at the jnz after the cmpxchg: the store has not run. */
	RFM_CHECK(ip > (unsigned long)fn && ip < (unsigned long)fn + size &&
		  *(const uint8_t *)ip == OPCODE_JNZ_REL8,
		  "the release was seen at %#lx, not at the jnz after the cmpxchg", ip);
	if (canary != MAP_FAILED)
		RFM_CHECK(*canary == HIGH_SLOT_GUARD, "the word at the slot's low 32 bits "
			  "(%p) was written: %#x", (void *)canary, *canary);
	rfm_diag("the slot's low 32 bits (%#lx): %s", (unsigned long)(uint32_t)(unsigned long)
		 &o->slot[1], canary != MAP_FAILED ? "a canary, untouched" : "in use, not checked");
	rfm_obs("slot", "%s", o->slot[1] == 0 ? "cleared" : "set");
	RFM_CHECK(o->slot[1] == 0, "stopped after the release with a list32 slot at %p "
		  "still set (%#x): the fixup did not use all of a 64-bit task's RDX",
		  (void *)&o->slot[1], o->slot[1]);
	RFM_CHECK(o->slot[0] == HIGH_SLOT_GUARD && o->slot[2] == HIGH_SLOT_GUARD,
		  "written past the 4-byte slot: %#x %#x", o->slot[0], o->slot[2]);
	return RFM_PASS;
}
#endif

#ifdef __i386__
/*
 * ---- an ia32 task's DX, as a 64-bit tracer sets it ----
 *
 * An ia32 task on a 64-bit kernel has 64-bit registers it cannot see:
 * its code and its 32-bit tracers read and write the low halves, but a
 * 64-bit tracer (PTRACE_SETREGS of struct user_regs_struct) sets all of
 * RDX, and the CPU keeps the upper half while the task runs code that
 * never writes EDX, such as the try-unlock's cmpxchg. The slot is what
 * the task's own store would use: the low half. Here the tracer
 * (helpers64/ia32_dx_tracer.c, built -m64 into this image) sets bit 32
 * of RDX at the cmpxchg and steps it; the fixup runs for the trap, in
 * the window with ZF set, and the slot must be clear. The series reads
 * 32 bits of an ia32 task's DX (patch 14); mainline (7.3) reads all 64,
 * writes to an address the task has not mapped, and leaves the slot
 * (patches/deviations-mainline.txt names it).
 */
#define IA32_DX_TRACER	"/helpers/ia32_dx_tracer"

struct dx_owner {
	struct robust_list_head head;
	struct rfm_lock lock;
};

static void dx_owner_main(struct dx_owner *o, void *fn)
{
	uint32_t tid = (uint32_t)rfm_gettid();

	rfm_head_init(&o->head);
	o->lock.futex = tid;
	o->head.list_op_pending = &o->lock.link;
	if (rfm_set_robust_list(&o->head, sizeof(o->head)))
		_exit(1);
	/* The tracer is a sibling: let it attach whatever Yama says. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	stop_self(getpid());	/* the tracer seizes it here */
	rfm_own_try_unlock_call(fn, &o->lock.futex, tid, &o->head.list_op_pending);
	_exit(2);		/* the tracer kills it before its store */
}

static int vdso_fixup_ignores_upper_half_of_ia32_dx(void)
{
	struct dx_owner *o = rfm_shared(sizeof(*o));
	unsigned long size = 0;
	void *fn = rfm_own_try_unlock(&size);
	char pid_arg[16], lock_arg[24], fn_arg[24], size_arg[24];
	int status = 0, traced;
	pid_t pid, tracer;

	RFM_REQUIRE_ROBUST_UNLOCK();
	if (rfm_kernel_64bit() == 0)
		return rfm_skip("a 32-bit kernel: no 64-bit tracer, no upper half");
	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(o && fn, "set up: %s", o ? "no try-unlock in the vDSO" : "mmap");
	pid = fork();
	if (pid == 0)
		dx_owner_main(o, fn);
	RFM_CHECK(pid > 0, "fork: %s", strerror(errno));
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
		rfm_race_kill(pid);
		RFM_CHECK(0, "the owner did not stop before its unlock (status %#x; "
			  "exit 1: set_robust_list)", status);
	}
	snprintf(pid_arg, sizeof(pid_arg), "%d", pid);
	snprintf(lock_arg, sizeof(lock_arg), "%lx", (unsigned long)&o->lock.futex);
	snprintf(fn_arg, sizeof(fn_arg), "%lx", (unsigned long)fn);
	snprintf(size_arg, sizeof(size_arg), "%lx", size);
	fflush(stdout);
	tracer = fork();
	if (tracer == 0) {
		execl(IA32_DX_TRACER, "ia32_dx_tracer", pid_arg, lock_arg, fn_arg, size_arg,
		      (char *)NULL);
		printf("# exec %s: %s\n", IA32_DX_TRACER, strerror(errno));
		_exit(127);
	}
	traced = tracer > 0 && waitpid(tracer, &status, 0) == tracer;
	rfm_race_kill(pid);
	RFM_CHECK(traced, "the tracer: %s", strerror(errno));
	/* The upper halves are undefined in compatibility mode (TCG keeps them) */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		return rfm_skip("the CPU did not keep RDX's upper half across a step");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the tracer failed (status %#x; exit 2: tracing, 127: exec)", status);
	rfm_obs("slot", "%s", o->head.list_op_pending == NULL ? "cleared" : "set");
	RFM_CHECK(o->lock.futex == 0, "the lock is %#x, not released", o->lock.futex);
	RFM_CHECK(o->head.list_op_pending == NULL, "stopped in the window with bit 32 of "
		  "RDX set by a 64-bit tracer, the slot is still set: the fixup used the "
		  "whole RDX of an ia32 task");
	return RFM_PASS;
}
#endif
#else
static int vdso_fixup_after_sigreturn_into_window(void)
{
	return rfm_skip(NO_VDSO);
}

static int vdso_fixup_unwritable_slot_gives_up_list(void)
{
	return rfm_skip(NO_VDSO);
}

static int vdso_fixup_after_mremap(void)
{
	return rfm_skip(NO_VDSO);
}
#endif

#ifdef __i386__
/*
 * ---- a task without a vDSO ----
 *
 * The fixup looks at the task's vDSO image first. A task whose exec found
 * the vDSO turned off has none (i386's vm.vdso_enabled; on a 64-bit
 * kernel, abi.vsyscall32 for ia32 tasks), and a signal to it must leave
 * its slot alone, even with ZF set and DX naming the slot, as they are
 * here when kill() returns and the signal is delivered. A 64-bit or x32
 * task can lose its vDSO only by the boot's vdso=0.
 */
static const char *const vdso_switches[] = {
	"/proc/sys/abi/vsyscall32",	/* an ia32 task on a 64-bit kernel */
	"/proc/sys/vm/vdso_enabled",	/* i386 */
};

static volatile sig_atomic_t no_vdso_signals;

/* Write @text to the sysctl at @path: 0, or -1 with errno. */
static int write_sysctl(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void count_no_vdso_signal(int sig)
{
	(void)sig;
	no_vdso_signals++;
}

/*
 * The exec'd image tells the case it has read the sysctl by a byte on
 * this descriptor, inherited across the exec: closing a CLOEXEC pipe
 * would say it too early, since begin_new_exec() closes those before
 * the vDSO is (or is not) mapped.
 */
#define NO_VDSO_READY_FD	"RFM_NO_VDSO_READY_FD"

/* The exec'd image's part: 0, or the step that went wrong (the parent names it). */
static int no_vdso_owner(void)
{
	static struct robust_list_head head;
	static struct rfm_lock lock;
	const char *ready = getenv(NO_VDSO_READY_FD);
	uint32_t tid = (uint32_t)rfm_gettid();
	long ret;

	if (!ready || write(atoi(ready), "r", 1) != 1)
		return 14;
	close(atoi(ready));
	if (getauxval(AT_SYSINFO_EHDR))
		return 10;
	if (signal(SIGUSR1, count_no_vdso_signal) == SIG_ERR)
		return 11;
	rfm_head_init(&head);
	lock.futex = tid;
	head.list_op_pending = &lock.link;
	if (rfm_set_robust_list(&head, sizeof(head)))
		return 11;
	/* ZF set by the cmp (EAX is SYS_kill both sides), DX the slot */
	__asm__ volatile("cmp %%eax, %%eax\n\tint $0x80"
			 : "=a" (ret)
			 : "a" (SYS_kill), "b" (getpid()), "c" (SIGUSR1),
			   "d" (&head.list_op_pending)
			 : "memory", "cc");
	if (ret || no_vdso_signals != 1)
		return 12;
	return head.list_op_pending == &lock.link ? 0 : 13;
}

static int signal_without_vdso_keeps_slot(void)
{
	static const char *const why[] = {
		[10] = "the exec'd image still has a vDSO (AT_SYSINFO_EHDR)",
		[11] = "set up (signal(), set_robust_list())",
		[12] = "kill() did not return once with the handler run",
		[13] = "the slot was cleared: the fixup took a task without a vDSO "
		       "for one in a try-unlock",
		[14] = "the exec'd image could not say it had started",
	};
	const char *path = NULL;
	char was[16] = "", fd[16], got;
	int status, ready[2], restored;
	ssize_t n = 0;
	pid_t pid;
	FILE *f;

	if (rfm_exec_mode)
		return no_vdso_owner();
	for (size_t i = 0; !path && i < RFM_ARRAY_SIZE(vdso_switches); i++)
		if (!access(vdso_switches[i], W_OK))
			path = vdso_switches[i];
	if (!path)
		return rfm_skip("no sysctl turns the vDSO off for this task (%s, %s)",
				vdso_switches[0], vdso_switches[1]);
	f = fopen(path, "r");
	RFM_CHECK(f && fgets(was, sizeof(was), f), "read %s: %s", path, strerror(errno));
	fclose(f);
	RFM_CHECK(!pipe(ready), "pipe: %s", strerror(errno));
	snprintf(fd, sizeof(fd), "%d", ready[1]);
	RFM_CHECK(!setenv(NO_VDSO_READY_FD, fd, 1), "setenv: %s", strerror(errno));
	RFM_CHECK(!write_sysctl(path, "0"), "write 0 to %s: %s", path, strerror(errno));
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		execl("/proc/self/exe", "unlock_race", RFM_EXEC_ARG,
		      "signal_without_vdso_keeps_slot", (char *)NULL);
		_exit(126);
	}
	close(ready[1]);
	/* A byte: the exec'd image has read the sysctl. EOF: it died first. */
	if (pid > 0)
		n = read(ready[0], &got, 1);
	close(ready[0]);
	restored = !write_sysctl(path, was);
	RFM_CHECK(pid > 0, "fork: %s", strerror(errno));
	RFM_CHECK(restored, "restore %s to %s: %s", path, was, strerror(errno));
	RFM_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	rfm_diag("vDSO turned off by %s", path);	/* its name differs by kernel */
	rfm_obs("exit", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	RFM_CHECK(n == 1, "the exec'd image never said it had started (exit status %#x)",
		  status);
	RFM_CHECK(WIFEXITED(status), "the exec'd image died of signal %d",
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	RFM_CHECK(WEXITSTATUS(status) == 0, "%s (exit %d)",
		  WEXITSTATUS(status) < (int)RFM_ARRAY_SIZE(why) && why[WEXITSTATUS(status)] ?
		  why[WEXITSTATUS(status)] : "the exec failed", WEXITSTATUS(status));
	return RFM_PASS;
}
#else
static int signal_without_vdso_keeps_slot(void)
{
	return rfm_skip("only a 32-bit x86 task can lose its vDSO without a reboot "
			"(vm.vdso_enabled, abi.vsyscall32)");
}
#endif

static const struct rfm_case cases[] = {
	RFM_CASE_TIMEOUT(syscall_unlock_has_no_window, 120),
	RFM_CASE_TIMEOUT(vdso_unlock_has_no_window, 120),
	RFM_CASE_TIMEOUT(vdso_contended_unlock_has_no_window, 120),
	RFM_CASE(vdso_fixup_unwritable_slot_gives_up_list),
	RFM_CASE(vdso_fixup_after_mremap),
	RFM_CASE(vdso_fixup_after_sigreturn_into_window),
#if defined(__x86_64__) && !defined(__ILP32__)
	RFM_CASE(vdso_fixup_list32_slot_above_4gib),
#endif
#ifdef __i386__
	RFM_CASE(vdso_fixup_ignores_upper_half_of_ia32_dx),
#endif
	RFM_CASE(signal_without_vdso_keeps_slot),
};

RFM_MAIN(cases)
