// SPDX-License-Identifier: GPL-2.0
/*
 * ia32_dx_tracer: the 64-bit tracer of an ia32 task that unlock_race's
 * vdso_fixup_ignores_upper_half_of_ia32_dx runs (tests/common/
 * unlock_race.c). It is built -m64 into the ilp32 image, in /helpers.
 *
 * A 64-bit tracer reads and writes all 64 bits of an ia32 task's
 * registers, which the task itself, and any 32-bit tracer, cannot. This
 * one seizes the owner, stopped before its vDSO try-unlock, single-steps
 * it to the try-unlock's lock cmpxchg, sets bit 32 of RDX (whose low
 * half holds the slot's address), and steps the cmpxchg. The trap after
 * it finds the owner in the critical section with ZF set, and the
 * kernel's fixup has run for it; the owner is killed there, before the
 * try-unlock's own store to the slot, and the test reads the slot.
 *
 *	ia32_dx_tracer PID LOCK FN SIZE
 *
 * PID is the stopped owner; LOCK the address of its lock word, FN and
 * SIZE the try-unlock function in its vDSO (hex). Exit status: 0 the
 * owner was stopped at the instruction after the cmpxchg (the jnz, before
 * the store) and killed (the test judges the slot), 2 the tracing failed,
 * 3 the CPU did not keep RDX's upper half across the step (nothing to
 * test). Each step of the way is a "#" line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_STEPS	100000
#define EFLAGS_ZF	0x40
#define DX_HIGH_BIT	(1UL << 32)
#define IA32_USER_CS	0x23	/* __USER32_CS */
#define OPCODE_JNZ_REL8	0x75

static pid_t owner;

static void __attribute__((noreturn, format(printf, 2, 3)))
give_up(int status, const char *fmt, ...)
{
	va_list ap;

	printf("# ia32_dx_tracer: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (owner > 0)
		kill(owner, SIGKILL);
	exit(status);
}

static unsigned long hex_arg(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno || *end || end == s)
		give_up(2, "not a hex number: %s", s);
	return v;
}

/*
 * Wait for the owner's next stop, which must be @event (PTRACE_EVENT_STOP
 * for the seize of a stopped task, 0 for a single step's SIGTRAP);
 * anything else ends the tracing.
 */
static void wait_stop(const char *after, int event)
{
	int status;

	if (waitpid(owner, &status, __WALL) != owner)
		give_up(2, "waitpid after %s: %s", after, strerror(errno));
	if (!WIFSTOPPED(status))
		give_up(2, "the owner ended after %s (status %#x)", after, status);
	if (status >> 16 != event || (!event && WSTOPSIG(status) != SIGTRAP))
		give_up(2, "an unexpected stop after %s (status %#x)", after, status);
}

static void get_regs(struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, owner, NULL, regs))
		give_up(2, "PTRACE_GETREGS: %s", strerror(errno));
}

static void step(void)
{
	if (ptrace(PTRACE_SINGLESTEP, owner, NULL, NULL))
		give_up(2, "PTRACE_SINGLESTEP: %s", strerror(errno));
	wait_stop("a single step", 0);
}

/* The first bytes of the instruction at @ip, lowest first. */
static unsigned long text_at(unsigned long ip)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, owner, (void *)ip, NULL);
	if (errno)
		give_up(2, "PTRACE_PEEKTEXT at %#lx: %s", ip, strerror(errno));
	return (unsigned long)word;
}

/* Is the instruction at @ip a lock cmpxchg (F0 0F B1 /r)? */
static int at_lock_cmpxchg(unsigned long ip)
{
	return (text_at(ip) & 0xffffff) == 0xb10ff0;
}

static uint32_t lock_word(unsigned long lock)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, owner, (void *)lock, NULL);
	if (errno)
		give_up(2, "PTRACE_PEEKDATA at %#lx: %s", lock, strerror(errno));
	return (uint32_t)word;
}

int main(int argc, char **argv)
{
	struct user_regs_struct regs;
	unsigned long lock, fn, size;
	int steps;

	unsigned long cmpxchg_ip;
	char *end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 5)
		give_up(2, "usage: ia32_dx_tracer PID LOCK FN SIZE (hex addresses)");
	owner = (pid_t)strtol(argv[1], &end, 10);
	if (*end || owner <= 0)
		give_up(2, "not a pid: %s", argv[1]);
	lock = hex_arg(argv[2]);
	fn = hex_arg(argv[3]);
	size = hex_arg(argv[4]);

	/*
	 * The owner is in a group stop: the seize traps it again, and that
	 * trap is the one stop we wait for (it sends no SIGSTOP).
	 */
	if (ptrace(PTRACE_SEIZE, owner, NULL, NULL))
		give_up(2, "PTRACE_SEIZE %d: %s", owner, strerror(errno));
	wait_stop("PTRACE_SEIZE", PTRACE_EVENT_STOP);

	for (steps = 0;; steps++) {
		get_regs(&regs);
		if (regs.rip >= fn && regs.rip < fn + size && at_lock_cmpxchg(regs.rip))
			break;
		if (steps == MAX_STEPS)
			give_up(2, "no lock cmpxchg in the try-unlock after %d steps", steps);
		step();
	}
	if (regs.cs != IA32_USER_CS)
		give_up(2, "the owner's cs is %#llx, not an ia32 task's", regs.cs);
	if (lock_word(lock) == 0)
		give_up(2, "the lock was released before its cmpxchg");

	cmpxchg_ip = regs.rip;
	regs.rdx |= DX_HIGH_BIT;
	if (ptrace(PTRACE_SETREGS, owner, NULL, &regs))
		give_up(2, "PTRACE_SETREGS: %s", strerror(errno));
	printf("# ia32_dx_tracer: at the cmpxchg (%#llx) after %d steps; RDX set to %#llx\n",
	       regs.rip, steps, regs.rdx);

	step();
	get_regs(&regs);
	printf("# ia32_dx_tracer: after it: ip %#llx, ZF %d, RDX %#llx, lock %#x\n",
	       regs.rip, !!(regs.eflags & EFLAGS_ZF), regs.rdx, lock_word(lock));
	if (!(regs.rdx & DX_HIGH_BIT))
		give_up(3, "RDX's upper half did not survive the step");
	if (!(regs.eflags & EFLAGS_ZF) || lock_word(lock) != 0)
		give_up(2, "the cmpxchg did not release the lock");
	/* One instruction on, at the jnz: the try-unlock's store has not run. */
	if (regs.rip <= cmpxchg_ip || regs.rip > cmpxchg_ip + 15 || regs.rip >= fn + size ||
	    (text_at(regs.rip) & 0xff) != OPCODE_JNZ_REL8)
		give_up(2, "the step did not stop at the jnz after the cmpxchg (ip %#llx)",
			regs.rip);

	/* Before the try-unlock's own store: the slot is the fixup's doing. */
	kill(owner, SIGKILL);
	return 0;
}
