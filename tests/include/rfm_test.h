/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rfm_test.h - the KTAP test harness shared by every test program.
 *
 * One source, built for each word size (-m64, -m32). A program lists its
 * cases in a table and calls rfm_main(); each case runs in its own child
 * process and process group, with its own timeout, so a case that hangs,
 * crashes or leaks children cannot take the others with it.
 *
 * Output is KTAP version 1 on stdout:
 *
 *	KTAP version 1
 *	1..2
 *	# obs errno=EINVAL
 *	ok 1 set_bad_length
 *	# obs head_len=24 [abi]
 *	ok 2 set_get_roundtrip
 *
 * Under init the program is a subtest: init prints "KTAP version 1" and
 * "# Subtest: NAME" before it starts, in KUnit's order, and drops the
 * program's own version line, so the program's output reads the same
 * run alone (`make shell`) and nested.
 *
 * "# obs key=value" lines are observations the host compares across
 * targets and kernels; a trailing "[abi]" says the value depends on the
 * word size (24 vs 12 bytes), "[target: why]" names a difference that is
 * expected between targets. Diagnostics go to "# " lines too.
 */
#ifndef RFM_TEST_H
#define RFM_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum rfm_result { RFM_PASS = 0, RFM_FAIL = 1, RFM_SKIP = 4 };

struct rfm_case {
	const char *name;
	int (*fn)(void);
	unsigned int timeout_s;	/* 0: RFM_DEFAULT_TIMEOUT_S */
	/*
	 * A case that runs for as long as the kernel command line says
	 * (fuzz, stress): its budget is the value of budget_key (or
	 * budget_default_s) plus timeout_s.
	 */
	const char *budget_key;
	unsigned int budget_default_s;
};

#define RFM_CASE(fn)			{ #fn, fn, 0, NULL, 0 }
#define RFM_CASE_TIMEOUT(fn, secs)	{ #fn, fn, secs, NULL, 0 }
#define RFM_CASE_BUDGET(fn, key, default_s, margin_s) \
	{ #fn, fn, margin_s, key, default_s }
#define RFM_DEFAULT_TIMEOUT_S		20
/* argv[1] that makes a test program just wait to be killed (exec cases). */
#define RFM_PAUSE_ARG			"--rfm-pause"
/*
 * argv[1] that runs one case (argv[2]) in the program image a case
 * exec'd, with rfm_exec_mode set: its exit status is the case's return.
 */
#define RFM_EXEC_ARG			"--rfm-exec"
#define RFM_ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Where a case leaves its SKIP reason: shared with the harness parent. */
static char *rfm_skip_reason;
/* Set in a program image a case exec'd with RFM_EXEC_ARG. */
static int rfm_exec_mode;

static inline void rfm_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void rfm_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* An observation every target must agree on. */
#define rfm_obs(key, fmt, ...) \
	printf("# obs " key "=" fmt "\n", ##__VA_ARGS__)
/* An observation whose value depends on the word size of the ABI. */
#define rfm_obs_abi(key, fmt, ...) \
	printf("# obs " key "=" fmt " [abi]\n", ##__VA_ARGS__)

/* Fail the running case with a located diagnostic unless @cond holds. */
#define RFM_CHECK(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		rfm_diag("FAIL %s:%d: %s: " fmt, __FILE__, __LINE__,	\
			 #cond, ##__VA_ARGS__);				\
		return RFM_FAIL;					\
	}								\
} while (0)

static inline int rfm_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline int rfm_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rfm_skip_reason, 256, fmt, ap);
	va_end(ap);
	return RFM_SKIP;
}

/* errno as its symbolic name, so observations read the same everywhere. */
static inline const char *rfm_errno_name(int err)
{
	switch (err) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EFAULT: return "EFAULT";
	case EAGAIN: return "EAGAIN";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOMEM: return "ENOMEM";
	case EOWNERDEAD: return "EOWNERDEAD";
	case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
	default: {
		static char buf[16];

		snprintf(buf, sizeof(buf), "E%d", err);
		return buf;
	}
	}
}

/*
 * The number after @key ("rfm.fuzz_seed=") on the kernel command line, or
 * @def: how the host passes knobs to programs in the guest.
 */
static inline unsigned long rfm_cmdline_ulong(const char *key, unsigned long def)
{
	char buf[2048] = "", *p;
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	p = strstr(buf, key);
	return p ? strtoul(p + strlen(key), NULL, 0) : def;
}

/* ---- raw system calls: the kernel interface under test, not glibc's ---- */

static inline long rfm_set_robust_list(void *head, size_t len)
{
	return syscall(SYS_set_robust_list, head, len);
}

static inline long rfm_get_robust_list(int pid, void *head_ptr, void *len_ptr)
{
	return syscall(SYS_get_robust_list, pid, head_ptr, len_ptr);
}

static inline pid_t rfm_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* FUTEX_WAIT on a shared word with a relative timeout in milliseconds. */
static inline long rfm_futex_wait(uint32_t *uaddr, uint32_t val, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return syscall(SYS_futex, uaddr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static inline long rfm_futex_wake(uint32_t *uaddr, int nr)
{
	return syscall(SYS_futex, uaddr, FUTEX_WAKE, nr, NULL, NULL, 0);
}

/*
 * Does a 64-bit kernel run this task? A compat task (ia32, x32, AArch32, n32, o32,
 * ppc32, s390) sees the 64-bit kernel's machine in uname(): nothing sets PER_LINUX32.
 */
static inline int rfm_kernel_64bit(void)
{
	struct utsname u;

	if (uname(&u))
		return -1;
	return !strcmp(u.machine, "x86_64") || !strcmp(u.machine, "aarch64") ||
	       !strcmp(u.machine, "mips64") || !strcmp(u.machine, "ppc64") ||
	       !strcmp(u.machine, "s390x");
}

#ifdef __x86_64__
static void rfm_probe_fault(int sig)
{
	(void)sig;
	_exit(1);
}

/*
 * Does this x86_64 kernel have IA32 emulation: does int $0x80 enter the
 * ia32 table? Probed in a child: without it int $0x80 is a #GP (SIGSEGV,
 * caught there so that the kernel does not log an unhandled fault): 0.
 * 1 if getpid() through it answers right; -1 for anything else (a wrong
 * answer, a failed fork), which is no reason to skip: callers fail.
 */
static inline int rfm_ia32_emulation(void)
{
	static int known = -2;
	int status;
	pid_t pid;

	if (known != -2)
		return known;
	pid = fork();
	if (pid == 0) {
		long ret;

		signal(SIGSEGV, rfm_probe_fault);	/* exit status 1 */
		__asm__ volatile("int $0x80" : "=a" (ret) : "a" (20L) : "memory"); /* getpid */
		_exit(ret == (long)getpid() ? 0 : 2);
	}
	if (pid <= 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		known = -1;
	else
		known = WEXITSTATUS(status) == 0 ? 1 : WEXITSTATUS(status) == 1 ? 0 : -1;
	return known;
}

/*
 * Does this x86_64 kernel have CONFIG_COMPAT (IA32 emulation, or x32)?
 * Without it a 64-bit kernel has no 32-bit robust list, and its vDSO no
 * list32 try-unlock. x32 is probed with its getpid (-ENOSYS without x32,
 * or with it turned off).
 */
static inline int rfm_kernel_has_compat(void)
{
	return rfm_ia32_emulation() == 1 || syscall(0x40000000L | 39) > 0;
}
#endif

#if defined(__s390__) && !defined(__s390x__)
/*
 * A 31-bit s390 pointer names no address above its address space: the
 * kernel's compat_ptr() clears bit 31, and the other 31 bits are all
 * the task's 2 GiB (high_memory.head_with_bit31_set has that edge).
 */
#define RFM_HAS_KERNEL_ADDRESS	0
#else
#define RFM_HAS_KERNEL_ADDRESS	1
#endif

/*
 * An address no user pointer may reach. Where a kernel address fits in a
 * pointer of the caller (a task of the kernel's own word size), the start
 * of the kernel's direct map: a kernel address that is mapped and
 * writable, so that an unchecked user access (__put_user() for
 * put_user()) would succeed there. A compat task's pointers cannot reach
 * the kernel; its highest page, above its address space (TASK_SIZE),
 * stands in. NULL if uname() fails. The direct map is there on the
 * tinyconfig kernels (4-level paging, no memory KASLR); on a kernel that
 * moves it (Debian's, 5-level paging) the address is still the kernel's
 * and refused all the same, but may be unmapped, which an unchecked
 * store would not get through either.
 */
static inline void *rfm_kernel_address(void)
{
	struct utsname u;

	if (uname(&u))
		return NULL;
	if (rfm_kernel_64bit() && sizeof(void *) == 4)
		return (void *)(uintptr_t)0xfffff000u;
	if (!strcmp(u.machine, "x86_64"))
		return (void *)(uintptr_t)0xffff888000000000ull; /* page_offset_base */
	if (!strcmp(u.machine, "aarch64"))
		return (void *)(uintptr_t)0xffff000000000000ull; /* PAGE_OFFSET, 48-bit VA */
	if (!strcmp(u.machine, "mips64"))
		return (void *)(uintptr_t)0x9800000000000000ull; /* PAGE_OFFSET, XKPHYS cached */
	if (!strcmp(u.machine, "ppc64"))
		return (void *)(uintptr_t)0xc000000000000000ull; /* PAGE_OFFSET */
	/*
	 * s390 has no kernel address in a task's address space: the kernel
	 * has one of its own. 2^63 is past every user page table a task
	 * gets without asking (TASK_SIZE grows on demand). Not the last page:
	 * 6.1 oopses in the GUP of a shared futex there (docs/known-gaps.md).
	 */
	if (!strcmp(u.machine, "s390x"))
		return (void *)(uintptr_t)0x8000000000000000ull;
	return (void *)(uintptr_t)0xc0000000u;	/* PAGE_OFFSET, VMSPLIT_3G */
}

/* ---- robust locks in shared memory ---- */

/*
 * The simplest lock layout user space can register: the list link first,
 * the futex word after it. futex_offset is relative to the link.
 */
struct rfm_lock {
	struct robust_list link;
	uint32_t futex;
};

/* Anonymous shared memory: survives the death of the child that used it. */
static inline void *rfm_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* An empty list: the head's link points back to the head itself. */
static inline void rfm_head_init(struct robust_list_head *head)
{
	head->list.next = &head->list;
	head->futex_offset = offsetof(struct rfm_lock, futex) -
			     offsetof(struct rfm_lock, link);
	head->list_op_pending = NULL;
}

/* Put @lock at the front of the list, as glibc's list_add does. */
static inline void rfm_list_add(struct robust_list_head *head,
				struct rfm_lock *lock)
{
	lock->link.next = head->list.next;
	head->list.next = &lock->link;
}

/*
 * Fork a child that runs @fn(@arg) and exits with its return value.
 * Returns the child's wait status, or -1 if it could not be run.
 */
static inline int rfm_run_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* ---- other processes ---- */

/*
 * Has @pid exec'd into a test program's pause mode (argv[1] is
 * RFM_PAUSE_ARG)? Read from /proc/PID/cmdline.
 */
static inline int rfm_exec_done(pid_t pid)
{
	char path[64], buf[128];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
	}
	return n > 0 && memmem(buf, n, RFM_PAUSE_ARG, strlen(RFM_PAUSE_ARG));
}

/* Wait up to 10 s for @pid's new image; 1 if it started. */
static inline int rfm_wait_exec_done(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		if (rfm_exec_done(pid))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* The state letter of /proc/PID/stat ('S' sleeping, 'Z' zombie), or '?'. */
static inline char rfm_proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p && p[1] == ' ' ? p[2] : '?';
}

/*
 * Wait until @pid, which sets *@started just before it blocks, sleeps in
 * the kernel. Returns 0 if it ended instead.
 */
static inline int rfm_wait_sleeping(pid_t pid, volatile uint32_t *started)
{
	for (;;) {
		char st = rfm_proc_state(pid);

		if (*started && st == 'S')
			return 1;
		if (st == 'Z' || st == '?')
			return 0;
		sched_yield();
	}
}

/* ---- CPUs: the races only a second CPU runs (CPUS=2) ---- */

static inline int rfm_cpus_online(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* Run the calling thread on CPU @cpu only: 0 or -1 (errno). */
static inline int rfm_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Skip a case that needs @n CPUs online. The host holds each guest to
 * the CPUS= it booted (the matrix fails a guest with fewer online), so
 * this skips only where fewer were asked for.
 */
#define RFM_REQUIRE_CPUS(n)						\
	do {								\
		if (rfm_cpus_online() < (n))				\
			return rfm_skip("%d CPU(s) online: the race needs %d " \
					"(CPUS=%d)", rfm_cpus_online(), (n), (n)); \
	} while (0)

/* ---- the harness ---- */

static inline void rfm_on_alarm(int sig)
{
	(void)sig;	/* only here to interrupt waitpid() */
}

static inline int rfm_run_case(const struct rfm_case *c)
{
	unsigned int timeout = c->timeout_s ? c->timeout_s : RFM_DEFAULT_TIMEOUT_S;
	struct sigaction sa = { .sa_handler = rfm_on_alarm };
	int status, err;
	pid_t pid, r;

	if (c->budget_key)
		timeout += rfm_cmdline_ulong(c->budget_key, c->budget_default_s);

	rfm_skip_reason[0] = '\0';
	pid = fork();
	if (pid < 0) {
		rfm_diag("fork: %s", strerror(errno));
		return RFM_FAIL;
	}
	if (pid == 0) {
		/* Own process group: the harness can kill all it leaves. */
		setpgid(0, 0);
		_exit(c->fn());
	}
	setpgid(pid, pid);

	/* No SA_RESTART: the alarm breaks the wait when time is up. */
	sigaction(SIGALRM, &sa, NULL);
	alarm(timeout);
	r = waitpid(pid, &status, 0);
	err = errno;
	alarm(0);
	if (r != pid) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (err == EINTR)
			rfm_diag("TIMEOUT after %u s", timeout);
		else
			rfm_diag("waitpid: %s", strerror(err));
		return RFM_FAIL;
	}
	/* Nothing a case started may outlive it. */
	kill(-pid, SIGKILL);

	if (WIFSIGNALED(status)) {
		rfm_diag("case killed by signal %d", WTERMSIG(status));
		return RFM_FAIL;
	}
	switch (WEXITSTATUS(status)) {
	case RFM_PASS:
		return RFM_PASS;
	case RFM_SKIP:
		return RFM_SKIP;
	default:
		return RFM_FAIL;
	}
}

/*
 * Run @cases, print KTAP, and exit 0 if none failed. With arguments, run
 * only the cases named (for a quick look in `make shell`).
 */
static inline int rfm_main(int argc, char **argv, const struct rfm_case *cases,
		    size_t n)
{
	size_t i, planned = 0, number = 0;
	int failed = 0;

	if (argc > 1 && !strcmp(argv[1], RFM_PAUSE_ARG)) {
		for (;;)
			pause();
	}
	rfm_skip_reason = rfm_shared(4096);
	if (argc > 2 && !strcmp(argv[1], RFM_EXEC_ARG)) {
		rfm_exec_mode = 1;
		for (i = 0; i < n && rfm_skip_reason; i++)
			if (!strcmp(argv[2], cases[i].name))
				return cases[i].fn();
		return 127;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!rfm_skip_reason) {
		printf("KTAP version 1\n1..0 # SKIP no shared memory\n");
		return 1;
	}

	for (i = 0; i < n; i++) {
		int wanted = argc < 2;

		for (int a = 1; a < argc; a++)
			wanted |= !strcmp(argv[a], cases[i].name);
		planned += wanted;
	}
	printf("KTAP version 1\n1..%zu\n", planned);

	for (i = 0; i < n; i++) {
		int wanted = argc < 2, r;

		for (int a = 1; a < argc; a++)
			wanted |= !strcmp(argv[a], cases[i].name);
		if (!wanted)
			continue;
		number++;
		r = rfm_run_case(&cases[i]);
		if (r == RFM_SKIP)
			printf("ok %zu %s # SKIP %s\n", number, cases[i].name,
			       rfm_skip_reason[0] ? rfm_skip_reason : "no reason given");
		else
			printf("%s %zu %s\n", r == RFM_PASS ? "ok" : "not ok",
			       number, cases[i].name);
		failed |= r == RFM_FAIL;
	}
	return failed;
}

#define RFM_MAIN(cases)							\
int main(int argc, char **argv)						\
{									\
	return rfm_main(argc, argv, cases, RFM_ARRAY_SIZE(cases));	\
}

#endif /* RFM_TEST_H */
