// SPDX-License-Identifier: GPL-2.0
/*
 * death: what the kernel does with a robust list when its owner dies.
 *
 * Every case forks an owner that takes locks in MAP_SHARED memory, lists
 * them, registers the list with the raw system call and dies; the parent
 * then reads the futex words. Several cases exist because the 2006 V1
 * patch got exactly that detail wrong; the comment says which bug the case
 * would catch. Every case name starts with "death_": the negative control
 * (a kernel without robust lists) must fail them all.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <sched.h>

#define NLOCKS 4

/* Shared between the case and its owner child: a head and some locks. */
struct arena {
	struct robust_list_head head;
	struct rfm_lock lock[NLOCKS];
	volatile uint32_t owner_tid;	/* the owner's TID, as it sees it */
	volatile uint32_t note;		/* a child's report to the case */
};

static struct arena *arena_new(void)
{
	struct arena *a = rfm_shared(sizeof(struct arena));

	if (a)
		rfm_head_init(&a->head);
	return a;
}

/* Lock @n for the calling thread (word = TID | @bits) and list it. */
static void take(struct arena *a, int n, uint32_t bits)
{
	a->lock[n].futex = (uint32_t)rfm_gettid() | bits;
	rfm_list_add(&a->head, &a->lock[n]);
}

static int register_head(struct robust_list_head *head)
{
	if (rfm_set_robust_list(head, sizeof(*head))) {
		rfm_diag("set_robust_list: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* The owner must have registered its list and exited normally. */
static int expect_child_exit(int status)
{
	RFM_CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner status %#x", status);
	return RFM_PASS;
}

/* ---- several locks: V1 handled `pending` instead of `entry` in the loop,
 * so only one lock was ever released. ---- */

static int own_all_and_exit(void *arg)
{
	struct arena *a = arg;

	for (int i = 0; i < NLOCKS; i++)
		take(a, i, 0);
	return register_head(&a->head);
}

static int death_several_locks(void)
{
	struct arena *a = arena_new();
	int released = 0;

	RFM_CHECK(a, "mmap");
	if (expect_child_exit(rfm_run_child(own_all_and_exit, a)))
		return RFM_FAIL;
	for (int i = 0; i < NLOCKS; i++) {
		rfm_obs("word", "%#x", a->lock[i].futex);
		released += a->lock[i].futex == FUTEX_OWNER_DIED;
	}
	rfm_obs("released", "%d", released);
	RFM_CHECK(released == NLOCKS, "%d of %d locks released", released, NLOCKS);
	return RFM_PASS;
}

/* ---- FUTEX_WAITERS survives the death; the TID is cleared ---- */

static int own_contended_and_exit(void *arg)
{
	struct arena *a = arg;

	take(a, 0, FUTEX_WAITERS);
	return register_head(&a->head);
}

static int death_waiters_bit_kept(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (expect_child_exit(rfm_run_child(own_contended_and_exit, a)))
		return RFM_FAIL;
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
		  "word %#x", a->lock[0].futex);
	return RFM_PASS;
}

/* ---- a bad list_op_pending must not cost the listed locks: V1 handled
 * pending first and gave up the whole walk when that failed. ---- */

static int own_with_bad_pending_and_exit(void *arg)
{
	struct arena *a = arg;
	void *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	take(a, 0, 0);
	take(a, 1, 0);
	/* Pending points into a page that cannot be read. */
	a->head.list_op_pending = hole;
	return register_head(&a->head);
}

static int death_bad_pending_keeps_list(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (expect_child_exit(rfm_run_child(own_with_bad_pending_and_exit, a)))
		return RFM_FAIL;
	rfm_obs("word0", "%#x", a->lock[0].futex);
	rfm_obs("word1", "%#x", a->lock[1].futex);
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED &&
		  a->lock[1].futex == FUTEX_OWNER_DIED,
		  "words %#x %#x", a->lock[0].futex, a->lock[1].futex);
	return RFM_PASS;
}

/* ---- a futex word we own but cannot write: V1 compared the -EFAULT of
 * the cmpxchg as a value and looped forever at exit. The walk must stop
 * and the owner must finish dying (the case timeout catches a hang). ---- */

struct ro_arena {
	struct robust_list_head head;
	struct rfm_lock *lock;		/* on its own page, mapped read-only */
};

static int own_readonly_and_exit(void *arg)
{
	struct ro_arena *ra = arg;

	rfm_head_init(&ra->head);
	ra->lock->futex = (uint32_t)rfm_gettid();
	rfm_list_add(&ra->head, ra->lock);
	/* Only this process loses write access; the case can still read. */
	if (mprotect(ra->lock, 4096, PROT_READ))
		return 2;
	return register_head(&ra->head);
}

static int death_readonly_word(void)
{
	struct ro_arena *ra = rfm_shared(sizeof(*ra));
	uint32_t tid_word;

	RFM_CHECK(ra, "mmap");
	ra->lock = rfm_shared(4096);
	RFM_CHECK(ra->lock, "mmap");
	if (expect_child_exit(rfm_run_child(own_readonly_and_exit, ra)))
		return RFM_FAIL;
	tid_word = ra->lock->futex;
	/* Untouched: still the dead owner's TID, no OWNER_DIED written. */
	rfm_obs("owner_died_set", "%d", !!(tid_word & FUTEX_OWNER_DIED));
	rfm_obs("tid_kept", "%d", (tid_word & FUTEX_TID_MASK) != 0);
	RFM_CHECK(!(tid_word & FUTEX_OWNER_DIED) && (tid_word & FUTEX_TID_MASK),
		  "word %#x", tid_word);
	return RFM_PASS;
}

/* ---- fork must not inherit the parent's list: V1 copied the pointer. ---- */

static int fork_child_takes_lock(void *arg)
{
	struct arena *a = arg;
	struct robust_list_head *inherited = (void *)1;
	size_t len;

	/* The lock is listed in the parent's list only; the child owns it. */
	a->lock[1].futex = (uint32_t)rfm_gettid();
	if (rfm_get_robust_list(0, &inherited, &len))
		return 3;
	a->note = inherited == NULL;
	return 0;
}

static int parent_forks_while_holding(void *arg)
{
	struct arena *a = arg;
	int status;
	pid_t pid;

	take(a, 0, 0);
	rfm_list_add(&a->head, &a->lock[1]);
	if (register_head(&a->head))
		return 1;
	/*
	 * The raw system call: glibc's fork() registers its own list in the
	 * child, which would hide what the kernel gave it.
	 */
	pid = (pid_t)syscall(SYS_fork);
	if (pid == 0)
		_exit(fork_child_takes_lock(a));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 5;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
}

static int death_fork_not_inherited(void)
{
	struct arena *a = arena_new();
	int status;

	RFM_CHECK(a, "mmap");
	status = rfm_run_child(parent_forks_while_holding, a);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "status %#x", status);
	rfm_obs("child_list_empty", "%u", a->note);
	/* The parent's own lock goes when the parent dies... */
	rfm_obs("parent_lock", "%#x", a->lock[0].futex);
	/* ...but the child's exit must not have walked the parent's list. */
	rfm_obs("child_lock_died", "%d", !!(a->lock[1].futex & FUTEX_OWNER_DIED));
	RFM_CHECK(a->note == 1, "the forked child inherited a robust list");
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "parent lock %#x",
		  a->lock[0].futex);
	RFM_CHECK(!(a->lock[1].futex & FUTEX_OWNER_DIED),
		  "child's exit released a lock on the parent's list: %#x",
		  a->lock[1].futex);
	return RFM_PASS;
}

/* ---- an owner in a new PID namespace: the word holds the TID the owner
 * sees (1 here), not the global one V1 compared with. ---- */

static int ns_owner(void *arg)
{
	struct arena *a = arg;

	take(a, 0, 0);
	a->owner_tid = a->lock[0].futex;
	return register_head(&a->head);
}

static int pid_ns_parent(void *arg)
{
	if (unshare(CLONE_NEWPID)) {
		rfm_diag("unshare(CLONE_NEWPID): %s", strerror(errno));
		return 4;
	}
	return WEXITSTATUS(rfm_run_child(ns_owner, arg));
}

static int death_pid_namespace(void)
{
	struct arena *a = arena_new();
	int status;

	RFM_CHECK(a, "mmap");
	status = rfm_run_child(pid_ns_parent, a);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
		return rfm_skip("no PID namespaces (CONFIG_PID_NS, or not root)");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x",
		  status);
	rfm_obs("owner_tid_in_ns", "%u", a->owner_tid);
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "word %#x",
		  a->lock[0].futex);
	return RFM_PASS;
}

/* ---- a waiter blocked in FUTEX_WAIT is woken when the owner dies ---- */

static int waiter(void *arg)
{
	struct arena *a = arg;
	uint32_t seen = a->lock[0].futex;

	a->note = 1;
	/* Bounded: a lost wakeup is a timeout, reported as 2. */
	if (rfm_futex_wait(&a->lock[0].futex, seen, 10000) == 0)
		return 0;
	return errno == ETIMEDOUT ? 2 : 3;
}

static char proc_state(pid_t pid)
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

static int death_waiter_woken(void)
{
	struct arena *a = arena_new();
	pid_t owner, sleeper;
	int status;

	RFM_CHECK(a, "mmap");
	owner = fork();
	if (owner == 0) {
		take(a, 0, FUTEX_WAITERS);
		a->owner_tid = 1;
		if (register_head(&a->head))
			_exit(1);
		for (;;)
			pause();
	}
	while (!a->owner_tid)
		sched_yield();
	sleeper = fork();
	if (sleeper == 0)
		_exit(waiter(a));
	/* Kill the owner only once the waiter sleeps in FUTEX_WAIT. */
	for (char st = '?'; !a->note || st != 'S'; ) {
		st = proc_state(sleeper);
		if (st == 'Z' || (st == '?' && a->note))
			break;	/* it already returned: reported below */
		sched_yield();
	}
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	waitpid(sleeper, &status, 0);
	rfm_obs("word", "%#x", a->lock[0].futex);
	rfm_obs("waiter", "%s", WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
		"woken" : WEXITSTATUS(status) == 2 ? "timeout" : "error");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "waiter status %#x (2: never woken)", status);
	RFM_CHECK(a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
		  "word %#x", a->lock[0].futex);
	return RFM_PASS;
}

/* ---- death of a thread while its process lives on ---- */

static void *thread_owner(void *arg)
{
	struct arena *a = arg;

	take(a, 0, 0);
	register_head(&a->head);
	return NULL;	/* thread exit: its own list is walked */
}

static int death_thread_exit(void)
{
	struct arena *a = arena_new();
	pthread_t t;

	RFM_CHECK(a, "mmap");
	RFM_CHECK(pthread_create(&t, NULL, thread_owner, a) == 0, "pthread_create");
	pthread_join(t, NULL);
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "word %#x",
		  a->lock[0].futex);
	return RFM_PASS;
}

/* ---- the list is released at execve(), not only at exit ---- */

static int death_at_exec(void)
{
	struct arena *a = arena_new();
	pid_t pid;
	int released = 0;

	RFM_CHECK(a, "mmap");
	pid = fork();
	if (pid == 0) {
		take(a, 0, 0);
		if (register_head(&a->head))
			_exit(1);
		execl("/proc/self/exe", "death", RFM_PAUSE_ARG, (char *)NULL);
		_exit(2);
	}
	/* The new image pauses: the word must change while it lives. */
	for (int i = 0; i < 500 && !released; i++) {
		released = a->lock[0].futex == FUTEX_OWNER_DIED;
		usleep(10000);
	}
	rfm_obs("released_before_exit", "%d", released);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	RFM_CHECK(released, "word %#x while the exec'd process lives",
		  a->lock[0].futex);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(death_several_locks),
	RFM_CASE(death_waiters_bit_kept),
	RFM_CASE(death_bad_pending_keeps_list),
	RFM_CASE(death_readonly_word),
	RFM_CASE(death_fork_not_inherited),
	RFM_CASE(death_pid_namespace),
	RFM_CASE(death_waiter_woken),
	RFM_CASE(death_thread_exit),
	RFM_CASE(death_at_exec),
};

RFM_MAIN(cases)
