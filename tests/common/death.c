// SPDX-License-Identifier: GPL-2.0
/*
 * death: what the kernel does with a robust list when its owner dies.
 *
 * Every case forks an owner that takes locks in MAP_SHARED memory, lists
 * them, registers the list with the raw system call and dies; the parent
 * then reads the futex words. Several cases exist because the 2006 V1
 * patch got exactly that detail wrong; the comment says which bug the case
 * would catch. Every case whose name starts with "death_" needs at least
 * one lock released, so the negative control (a kernel without robust
 * lists) must fail them all; "survive_" cases only ask that the owner
 * dies cleanly with a hostile list.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>

#define NLOCKS 8

/* Shared between the case and its owner child: a head and some locks. */
struct arena {
	struct robust_list_head head;
	struct rfm_lock lock[NLOCKS];
	volatile uint32_t owner_tid;	/* the owner's TID, as it sees it */
	volatile uint32_t note;		/* a child's report to the case */
	volatile uint32_t waiting;	/* a waiter is about to sleep */
	volatile uint32_t waiting2;	/* a second one is */
	volatile uint32_t group_exit;	/* exec cases: the leader's go */
	volatile uint32_t word_at_group_exit;	/* what the leader saw */
	volatile uint32_t spin;		/* exec cases: thread and leader spin,
					 * pinned to CPUs 0 and 1, for the go */
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

/* Link the locks in @order (-1 ends) after the head, last back to it. */
static void chain(struct arena *a, const int *order)
{
	struct robust_list *prev = &a->head.list;

	for (; *order >= 0; order++) {
		prev->next = &a->lock[*order].link;
		prev = &a->lock[*order].link;
	}
	prev->next = &a->head.list;
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
 * there (a lock after it stays held) and the owner must finish dying
 * (the case timeout catches a hang). ---- */

struct ro_arena {
	struct robust_list_head head;
	struct rfm_lock after;		/* listed after the read-only one */
	struct rfm_lock *lock;		/* on its own page, mapped read-only */
};

static int own_readonly_and_exit(void *arg)
{
	struct ro_arena *ra = arg;

	rfm_head_init(&ra->head);
	ra->lock->futex = (uint32_t)rfm_gettid();
	ra->after.futex = (uint32_t)rfm_gettid();
	rfm_list_add(&ra->head, &ra->after);
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
	rfm_obs("after_untouched", "%d", ra->after.futex == tid_word);
	RFM_CHECK(!(tid_word & FUTEX_OWNER_DIED) && (tid_word & FUTEX_TID_MASK),
		  "word %#x", tid_word);
	RFM_CHECK(ra->after.futex == tid_word,
		  "the walk went on past a word it could not write: %#x",
		  ra->after.futex);
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
	 * child, which would hide what the kernel gave it. clone(SIGCHLD)
	 * with no stack is fork on every architecture, arm64 included,
	 * which has no fork system call; s390 takes the stack first
	 * (CLONE_BACKWARDS2).
	 */
#ifdef __s390__
	pid = (pid_t)syscall(SYS_clone, 0, SIGCHLD, 0, 0, 0);
#else
	pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
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

/* FUTEX_WAIT_BITSET for 5 s (an absolute CLOCK_MONOTONIC timeout). */
static long wait_bitset(uint32_t *word, uint32_t seen, uint32_t bitset)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 5;
	return syscall(SYS_futex, word, FUTEX_WAIT_BITSET, seen, &ts, NULL, bitset);
}

/*
 * Fork a waiter on lock @n and return once it sleeps: in FUTEX_WAIT, or
 * in FUTEX_WAIT_BITSET with @bitset if not 0. It exits 0 when woken, 2
 * when its bounded wait ran out (a lost wakeup), 3 on any other error.
 */
static pid_t start_sleeper_on(struct arena *a, int n, uint32_t bitset)
{
	pid_t pid;

	a->waiting = 0;
	pid = fork();
	if (pid == 0) {
		uint32_t *word = &a->lock[n].futex, seen = *word;
		long ret;

		a->waiting = 1;
		ret = bitset ? wait_bitset(word, seen, bitset) :
			       rfm_futex_wait(word, seen, 5000);
		_exit(ret == 0 ? 0 : errno == ETIMEDOUT ? 2 : 3);
	}
	if (pid > 0 && !rfm_wait_sleeping(pid, &a->waiting)) {
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static pid_t start_sleeper(struct arena *a)
{
	return start_sleeper_on(a, 0, 0);
}

/* Reap the sleeper; its verdict as an observation, and 1 if it was woken. */
static int sleeper_woken(pid_t sleeper)
{
	int status;

	waitpid(sleeper, &status, 0);
	rfm_obs("waiter", "%s", !WIFEXITED(status) ? "killed" :
		WEXITSTATUS(status) == 0 ? "woken" :
		WEXITSTATUS(status) == 2 ? "timeout" : "error");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int death_waiter_woken(void)
{
	struct arena *a = arena_new();
	pid_t owner, sleeper;
	int woken;

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
	sleeper = start_sleeper(a);
	RFM_CHECK(sleeper > 0, "the waiter never slept");
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	woken = sleeper_woken(sleeper);
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(woken, "the waiter was not woken");
	RFM_CHECK(a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
		  "word %#x", a->lock[0].futex);
	return RFM_PASS;
}

/*
 * An owner that holds lock 0 with FUTEX_WAITERS, listed after lock 1
 * whose link carries the PI bit if @pi_first, sleeps until killed; a
 * waiter sleeps on lock 0 (with @bitset, if not 0). Is it woken?
 */
static int sleeper_woken_at_death(int pi_first, uint32_t bitset)
{
	struct arena *a = arena_new();
	static const int order[] = { 1, 0, -1 };
	pid_t owner, sleeper;
	int woken;

	RFM_CHECK(a, "mmap");
	owner = fork();
	if (owner == 0) {
		take(a, 1, 0);
		take(a, 0, FUTEX_WAITERS);
		chain(a, order);
		if (pi_first)
			a->head.list.next = (void *)((uintptr_t)a->head.list.next | 1);
		a->owner_tid = 1;
		if (register_head(&a->head))
			_exit(1);
		for (;;)
			pause();
	}
	while (!a->owner_tid)
		sched_yield();
	sleeper = start_sleeper_on(a, 0, bitset);
	RFM_CHECK(sleeper > 0, "the waiter never slept");
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	woken = sleeper_woken(sleeper);
	rfm_obs("word", "%#x", a->lock[0].futex);
	rfm_obs("first_word", "%#x", a->lock[1].futex);
	RFM_CHECK(woken, "the waiter was not woken");
	RFM_CHECK(a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
		  "word %#x", a->lock[0].futex);
	RFM_CHECK(a->lock[1].futex == FUTEX_OWNER_DIED, "first word %#x",
		  a->lock[1].futex);
	return RFM_PASS;
}

/*
 * The PI bit belongs to one link: a normal lock listed after a PI entry
 * is woken as a normal lock (futex_wake), not left to a pi_state.
 */
static int death_pi_bit_is_per_entry(void)
{
	return sleeper_woken_at_death(1, 0);
}

/* A death wakes one waiter whatever bitset it waits with, not only bit 0. */
static int death_wakes_any_bitset(void)
{
	return sleeper_woken_at_death(0, 0x10);
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

/*
 * ---- execve() from a thread that is not the group leader: de_thread()
 * gives it the leader's TID before the exec-time walk, and the locks it
 * holds carry its own TID; they must be released all the same, and a
 * waiter woken ----
 */

static void *exec_from_thread(void *arg)
{
	struct arena *a = arg;

	take(a, 0, FUTEX_WAITERS);
	a->owner_tid = a->lock[0].futex;
	if (register_head(&a->head))
		return NULL;
	a->note = 1;				/* ready: start the waiter */
	while (a->note != 2)			/* the waiter sleeps */
		usleep(1000);
	execl("/proc/self/exe", "death", RFM_PAUSE_ARG, (char *)NULL);
	return NULL;
}

static int death_exec_from_thread(void)
{
	struct arena *a = arena_new();
	pid_t owner, sleeper;
	int status, woken;

	RFM_CHECK(a, "mmap");
	owner = fork();
	if (owner == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, exec_from_thread, a))
			_exit(1);
		for (;;)
			pause();	/* the leader, killed by de_thread() */
	}
	RFM_CHECK(owner > 0, "fork: %s", strerror(errno));
	while (a->note != 1) {
		if (waitpid(owner, &status, WNOHANG) == owner)
			RFM_CHECK(0, "the owner ended before its thread took the lock");
		usleep(1000);
	}
	sleeper = start_sleeper(a);
	RFM_CHECK(sleeper > 0, "the waiter never slept");
	a->note = 2;				/* now exec */
	woken = sleeper_woken(sleeper);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	if (a->lock[0].futex == a->owner_tid)
		rfm_obs("word", "unchanged");
	else
		rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(woken, "the waiter was not woken: the lock of the exec'ing thread "
		  "was not released");
	RFM_CHECK(a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
		  "word %#x, the thread's TID was %#x", a->lock[0].futex,
		  a->owner_tid & FUTEX_TID_MASK);
	return RFM_PASS;
}

/*
 * ---- execve() from a thread whose leader has already exited: the
 * leader is a zombie, so de_thread() has nothing to wait for and takes
 * its TID at once. The lock the thread lists and the one named only in
 * list_op_pending carry the thread's own TID: both are released. ----
 */

enum { NOTE_LEADER_GONE = 5, NOTE_NO_ZOMBIE, NOTE_EXEC_FAILED, NOTE_SETUP_FAILED };

/* /proc/self/exe names nothing once the leader, whose mm it reads, is gone */
static char self_exe[256];

static void *exec_after_leader_exit(void *arg)
{
	struct arena *a = arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	take(a, 0, 0);
	a->lock[1].futex = tid;			/* taken, not yet listed */
	a->head.list_op_pending = &a->lock[1].link;
	a->owner_tid = tid;
	if (register_head(&a->head)) {
		a->note = NOTE_SETUP_FAILED;
		return NULL;
	}
	for (int i = 0; i < 1000 && rfm_proc_state(getpid()) != 'Z'; i++)
		usleep(1000);
	if (rfm_proc_state(getpid()) != 'Z') {
		a->note = NOTE_NO_ZOMBIE;
		return NULL;
	}
	a->note = NOTE_LEADER_GONE;
	execl(self_exe, "death", RFM_PAUSE_ARG, (char *)NULL);
	a->note = NOTE_EXEC_FAILED;
	return NULL;
}

static const char *note_name(uint32_t note)
{
	switch (note) {
	case NOTE_LEADER_GONE:	return "done";
	case NOTE_NO_ZOMBIE:	return "leader-not-a-zombie";
	case NOTE_EXEC_FAILED:	return "execve-failed";
	case NOTE_SETUP_FAILED:	return "set-up-failed";
	default:		return "not-reached";
	}
}

static int death_exec_after_leader_exit(void)
{
	struct arena *a = arena_new();
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	int released = 0;
	pid_t owner;

	RFM_CHECK(a && n > 0, "set up: %s", strerror(errno));
	self_exe[n] = '\0';
	owner = fork();
	if (owner == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, exec_after_leader_exit, a))
			_exit(1);
		syscall(SYS_exit, 0);	/* the leader alone: a zombie */
	}
	RFM_CHECK(owner > 0, "fork: %s", strerror(errno));
	/* The walk is done before the new image runs: wait for that, then look. */
	for (int i = 0; i < 1000 && !(a->note == NOTE_LEADER_GONE && rfm_exec_done(owner)) &&
	     a->note != NOTE_NO_ZOMBIE && a->note != NOTE_SETUP_FAILED &&
	     a->note != NOTE_EXEC_FAILED; i++)
		usleep(10000);
	released = (a->lock[0].futex == FUTEX_OWNER_DIED) +
		   (a->lock[1].futex == FUTEX_OWNER_DIED);
	rfm_obs("exec", "%s", note_name(a->note));
	rfm_obs("listed", "%s", a->lock[0].futex == a->owner_tid ? "held" :
		a->lock[0].futex == FUTEX_OWNER_DIED ? "owner-died" : "other");
	rfm_obs("pending", "%s", a->lock[1].futex == a->owner_tid ? "held" :
		a->lock[1].futex == FUTEX_OWNER_DIED ? "owner-died" : "other");
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	RFM_CHECK(a->note == NOTE_LEADER_GONE, "exec: %s", note_name(a->note));
	RFM_CHECK(released == 2, "after the exec: listed %#x, pending %#x, the "
		  "thread's TID was %#x", a->lock[0].futex, a->lock[1].futex,
		  a->owner_tid);
	return RFM_PASS;
}

/*
 * ---- a word in a copy-on-write page: the owner's process forked after
 * the lock was taken, so the page is write-protected in both and the
 * walk's cmpxchg faults. It must fault the page in writable (a copy of
 * the owner's own) and retry, not give up; the child's copy keeps the
 * TID. ----
 */

struct cow_lock {
	struct robust_list_head *head;
	struct rfm_lock *lock;
	volatile uint32_t ready, go;
};

static void *cow_owner_thread(void *arg)
{
	struct cow_lock *c = arg;

	c->lock->futex = (uint32_t)rfm_gettid();
	rfm_list_add(c->head, c->lock);
	c->ready = register_head(c->head) ? 2 : 1;
	while (!c->go)
		usleep(1000);
	return NULL;	/* thread exit: the walk meets the write-protected page */
}

static int cow_owner(void *arg)
{
	struct arena *a = arg;
	struct cow_lock c = { 0 };
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t t;
	pid_t child;

	if (page == MAP_FAILED)
		return 1;
	c.head = (void *)page;
	c.lock = (void *)(page + 256);
	rfm_head_init(c.head);
	if (pthread_create(&t, NULL, cow_owner_thread, &c))
		return 1;
	while (!c.ready)
		usleep(1000);
	if (c.ready != 1)
		return 1;
	a->owner_tid = c.lock->futex;
	child = fork();
	if (child == 0) {
		while (a->note != 1)
			usleep(1000);
		a->lock[1].futex = c.lock->futex;	/* the child's copy */
		_exit(0);
	}
	if (child < 0)
		return 1;
	c.go = 1;
	pthread_join(t, NULL);
	a->lock[0].futex = c.lock->futex;		/* the owner's copy */
	a->note = 1;
	return waitpid(child, NULL, 0) == child ? 0 : 1;
}

static int death_word_in_cow_page(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (expect_child_exit(rfm_run_child(cow_owner, a)))
		return RFM_FAIL;
	rfm_obs("owner_copy", "%s", a->lock[0].futex == FUTEX_OWNER_DIED ?
		"owner-died" : a->lock[0].futex == a->owner_tid ? "held" : "other");
	rfm_obs("child_copy", "%s", a->lock[1].futex == a->owner_tid ? "held" :
		"other");
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "owner's copy %#x",
		  a->lock[0].futex);
	RFM_CHECK(a->lock[1].futex == a->owner_tid, "child's copy %#x, the owner "
		  "was %#x", a->lock[1].futex, a->owner_tid);
	return RFM_PASS;
}

/*
 * ---- execve() from a thread that is not the group leader, against the
 * PI state and the rest of its thread group ----
 *
 * On the exec-window test kernel (patches/exec-window/, exec_window_ms=
 * on the command line) such a thread sleeps twice in de_thread(): before
 * the check for a group exit, and after its robust lists are released,
 * before its TID becomes the leader's. The cases act while it sleeps
 * there; on every other kernel they act where they can without it.
 */

enum { NOTE_READY = 1, NOTE_EXEC = 2, NOTE_FAILED = 3 };

/* The exit status of an owner whose leader's exit_group() won the race. */
#define GROUP_EXIT_STATUS 7

static unsigned long exec_window_ms(void)
{
	return rfm_cmdline_ulong("exec_window_ms=", 0);
}

/* FUTEX_LOCK_PI, @ms from now (its timeout is absolute): 0 or an errno. */
static int lock_pi(uint32_t *word, long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return syscall(SYS_futex, word, FUTEX_LOCK_PI, 0, &ts, NULL, 0) ? errno : 0;
}

static int unlock_pi(uint32_t *word)
{
	return syscall(SYS_futex, word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) ? errno : 0;
}

/*
 * After an exec the task lives on, under its TID, and can own a PI futex:
 * FUTEX_LOCK_PI on a word that holds its TID blocks until its timeout; it
 * does not fail with ESRCH, as against a task whose futex state is dead.
 */
static int exec_task_owns_pi(void)
{
	uint32_t *word = rfm_shared(sizeof(*word));
	pid_t pid;
	int execd, err;

	RFM_CHECK(word, "mmap");
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "death", RFM_PAUSE_ARG, (char *)NULL);
		_exit(2);
	}
	execd = rfm_wait_exec_done(pid);
	*word = (uint32_t)pid;
	err = execd ? lock_pi(word, 200) : 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	RFM_CHECK(execd, "the new image never started");
	rfm_obs("lock_pi", "%s", err ? rfm_errno_name(err) : "0");
	RFM_CHECK(err == ETIMEDOUT, "FUTEX_LOCK_PI against the exec'd task: %s",
		  err ? rfm_errno_name(err) : "taken");
	return RFM_PASS;
}

/*
 * What the exec'ing thread takes before it execs, set before the owner
 * is forked: 0, or 1 if it failed (no robust lists on this kernel).
 */
static int (*exec_thread_takes)(struct arena *a);

static void *exec_thread(void *arg)
{
	struct arena *a = arg;

	a->owner_tid = (uint32_t)rfm_gettid();
	if (exec_thread_takes(a)) {
		a->note = NOTE_FAILED;
		return NULL;
	}
	if (a->spin && rfm_pin_cpu(0)) {
		a->note = NOTE_FAILED;
		return NULL;
	}
	a->note = NOTE_READY;
	while (a->note != NOTE_EXEC)
		if (!a->spin)
			usleep(1000);
	execl("/proc/self/exe", "death", RFM_PAUSE_ARG, (char *)NULL);
	return NULL;
}

/*
 * Fork an owner whose thread (not the leader) takes what @takes says and
 * execs on NOTE_EXEC; -1 if it could not. Its leader waits for
 * a->group_exit, then notes lock 0's word and calls exit_group().
 */
static pid_t start_exec_owner(struct arena *a, int (*takes)(struct arena *a))
{
	pid_t owner;

	exec_thread_takes = takes;
	owner = fork();

	if (owner == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, exec_thread, a) || (a->spin && rfm_pin_cpu(1)))
			_exit(1);
		while (!a->group_exit)
			if (!a->spin)
				rfm_futex_wait((uint32_t *)&a->group_exit, 0, 1000);
		a->word_at_group_exit = a->lock[0].futex;
		syscall(SYS_exit_group, GROUP_EXIT_STATUS);
	}
	while (owner > 0 && a->note != NOTE_READY) {
		if (a->note == NOTE_FAILED || waitpid(owner, NULL, WNOHANG) == owner) {
			kill(owner, SIGKILL);
			waitpid(owner, NULL, 0);
			return -1;
		}
		usleep(1000);
	}
	return owner;
}

/*
 * Tell the thread to exec, and return once it sleeps in de_thread()'s
 * first window (exec-window kernel), or at once. 1 if it was seen there.
 */
static int exec_now(struct arena *a)
{
	a->note = NOTE_EXEC;
	if (!exec_window_ms())
		return 0;
	for (int i = 0; i < 5000; i++) {
		if (rfm_proc_state(a->owner_tid) == 'D')
			return 1;
		usleep(1000);
	}
	return 0;
}

/*
 * A child that sets *@started, calls lock_pi(@word, @ms), unlocks what it
 * got, and exits with the errno.
 */
static pid_t start_pi_locker(uint32_t *word, long ms, volatile uint32_t *started)
{
	pid_t pid = fork();

	if (pid == 0) {
		int err;

		*started = 1;
		err = lock_pi(word, ms);

		if (!err && unlock_pi(word))
			_exit(100);
		_exit(err);
	}
	return pid;
}

/* The errno a start_pi_locker() child ended with, or -1. */
static int pi_locker_result(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Lock 1's word as a plain PI futex: no robust list at all. */
static int takes_pi_word(struct arena *a)
{
	a->lock[1].futex = (uint32_t)rfm_gettid();
	return 0;
}

/*
 * A PI waiter that attached before the exec is handed the lock: the PI
 * state of the old image is released when it goes, as at an exit.
 */
static int exec_pi_waiter_handed_over(void)
{
	struct arena *a = arena_new();
	pid_t owner, locker;
	int err, later;

	RFM_CHECK(a, "mmap");
	owner = start_exec_owner(a, takes_pi_word);
	RFM_CHECK(owner > 0, "the owner never got ready");
	a->waiting = 0;
	locker = start_pi_locker(&a->lock[1].futex, 10000 + 3 * exec_window_ms(),
				 &a->waiting);
	RFM_CHECK(rfm_wait_sleeping(locker, &a->waiting), "the locker never slept");
	exec_now(a);
	err = pi_locker_result(locker);
	RFM_CHECK(rfm_wait_exec_done(owner), "the new image never started");
	later = pi_locker_result(start_pi_locker(&a->lock[1].futex, 2000, &a->waiting));
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	rfm_obs("waiter", "%s", rfm_errno_name(err));
	rfm_obs("later_locker", "%s", rfm_errno_name(later));
	RFM_CHECK(err == 0, "the waiter got %s, not the lock", rfm_errno_name(err));
	RFM_CHECK(later == 0, "a later locker got %s", rfm_errno_name(later));
	return RFM_PASS;
}

/* Lock 1's word as a plain PI futex, and lock 0 on its robust list. */
static int takes_pi_word_and_lock(struct arena *a)
{
	takes_pi_word(a);
	take(a, 0, 0);
	return register_head(&a->head);
}

/*
 * A PI locker that comes while the thread is in exec, under its old TID,
 * after its robust lists were released (lock 0 shows it): it must be
 * handed the lock too, and a later locker must get it after that.
 * Released before the TID change, the PI state would stay with the new
 * image, whose TID the word does not hold: the waiter sleeps until its
 * timeout, a later one gets EINVAL. Without the exec-window kernel the
 * locker comes once the new image runs, and the old TID names no one
 * (ESRCH; PIDs are handed out cyclically, so the number is not reused
 * within the case).
 */
static int exec_pi_locker_during_exec(void)
{
	struct arena *a = arena_new();
	long window = exec_window_ms();
	pid_t owner, locker, later;
	int err, later_err;

	RFM_CHECK(a, "mmap");
	owner = start_exec_owner(a, takes_pi_word_and_lock);
	RFM_CHECK(owner > 0, "the owner never got ready");
	if (window) {
		int released = 0;

		exec_now(a);
		for (int i = 0; i < 5000 && !released; i++) {
			released = a->lock[0].futex == FUTEX_OWNER_DIED &&
				   rfm_proc_state(a->owner_tid) == 'D';
			usleep(1000);
		}
		RFM_CHECK(released, "the thread never slept in de_thread() with "
			  "its robust lists released (word %#x)", a->lock[0].futex);
		a->waiting = 0;
		locker = start_pi_locker(&a->lock[1].futex, 2 * window + 3000,
					 &a->waiting);
		RFM_CHECK(rfm_wait_sleeping(locker, &a->waiting) &&
			  rfm_proc_state(a->owner_tid) == 'D',
			  "timing: the locker did not block while the thread slept "
			  "in de_thread()");
		RFM_CHECK(rfm_wait_exec_done(owner), "the new image never started");
	} else {
		exec_now(a);
		RFM_CHECK(rfm_wait_exec_done(owner), "the new image never started");
		locker = start_pi_locker(&a->lock[1].futex, 2000, &a->waiting);
	}
	later = start_pi_locker(&a->lock[1].futex, 1000, &a->waiting);
	err = pi_locker_result(locker);
	later_err = pi_locker_result(later);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	rfm_obs("locker", "%s", rfm_errno_name(err));
	rfm_obs("later_locker", "%s", rfm_errno_name(later_err));
	RFM_CHECK(err == (window ? 0 : ESRCH), "the locker got %s",
		  rfm_errno_name(err));
	RFM_CHECK(later_err == err, "a later locker got %s",
		  rfm_errno_name(later_err));
	return RFM_PASS;
}

/* Lock 0, listed, with FUTEX_WAITERS. */
static int takes_contended_lock(struct arena *a)
{
	take(a, 0, FUTEX_WAITERS);
	return register_head(&a->head);
}

/*
 * The exec races the leader's exit_group(). Whichever wins, the lock is
 * released and its waiter woken once the thread is gone; and when the
 * group exit wins (the exec fails), the lock was still held when it
 * began: the exec released nothing before it could no longer fail. On
 * the exec-window kernel the group exit comes while the thread sleeps
 * before de_thread()'s check, so it always wins there.
 */
static int death_exec_races_group_exit(void)
{
	struct arena *a = arena_new();
	pid_t owner, sleeper;
	uint32_t held;
	int status, woken, ended, group_exit_won;

	RFM_CHECK(a, "mmap");
	owner = start_exec_owner(a, takes_contended_lock);
	RFM_CHECK(owner > 0, "the owner never got ready");
	held = a->lock[0].futex;
	sleeper = start_sleeper(a);
	RFM_CHECK(sleeper > 0, "the waiter never slept");
	exec_now(a);
	a->group_exit = 1;
	rfm_futex_wake((uint32_t *)&a->group_exit, 1);
	/* Until the new image runs, or the owner has ended. */
	ended = 0;
	for (int i = 0; i < 1000 && !ended && !rfm_exec_done(owner); i++) {
		ended = waitpid(owner, &status, WNOHANG) == owner;
		usleep(10000);
	}
	woken = sleeper_woken(sleeper);
	group_exit_won = ended && WIFEXITED(status) &&
			 WEXITSTATUS(status) == GROUP_EXIT_STATUS;
	if (!ended) {
		kill(owner, SIGKILL);
		waitpid(owner, NULL, 0);
	}
	if (exec_window_ms())
		rfm_obs("winner", "%s", group_exit_won ? "group_exit" : "exec");
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(!exec_window_ms() || group_exit_won,
		  "the exec won over a group exit that began before de_thread()");
	RFM_CHECK(!group_exit_won || a->word_at_group_exit == held,
		  "the group exit began with the word %#x, not %#x: the exec "
		  "released the lock before it could no longer fail",
		  a->word_at_group_exit, held);
	RFM_CHECK(woken, "the waiter was not woken");
	RFM_CHECK(a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
		  "word %#x", a->lock[0].futex);
	return RFM_PASS;
}

/* Lock 0, listed, with FUTEX_WAITERS; lock 1 as a plain PI futex. */
static int takes_contended_lock_and_pi_word(struct arena *a)
{
	takes_pi_word(a);
	return takes_contended_lock(a);
}

#define EXEC_RACE_ROUNDS	12

/*
 * death_exec_races_group_exit on two CPUs, without the exec-window
 * kernel's delay: the thread (CPU 0) execs and the leader (CPU 1) calls
 * exit_group() on the same go, each spinning for it, while a waiter
 * sleeps on the robust lock and a PI locker is queued on the thread's
 * PI futex. Round after round, whichever wins: the lock is released
 * with its waiter woken, the group exit (if it won) found it still held,
 * and the PI locker is handed the PI futex, never left to its timeout.
 */
static int death_exec_races_group_exit_smp(void)
{
	int won[2] = { 0, 0 };

	RFM_REQUIRE_CPUS(2);
	for (int n = 0; n < EXEC_RACE_ROUNDS; n++) {
		struct arena *a = arena_new();
		pid_t owner, sleeper, locker;
		uint32_t held, word;
		int status, sleeper_status, ended, execd, group_exit_won, err;

		RFM_CHECK(a, "mmap");
		a->spin = 1;
		owner = start_exec_owner(a, takes_contended_lock_and_pi_word);
		RFM_CHECK(owner > 0, "round %d: the owner never got ready", n);
		held = a->lock[0].futex;
		sleeper = start_sleeper(a);
		RFM_CHECK(sleeper > 0, "round %d: the waiter never slept", n);
		a->waiting2 = 0;
		locker = start_pi_locker(&a->lock[1].futex, 5000, &a->waiting2);
		RFM_CHECK(rfm_wait_sleeping(locker, &a->waiting2),
			  "round %d: the PI locker never slept", n);
		a->note = NOTE_EXEC;
		a->group_exit = 1;
		ended = 0;
		for (int i = 0; i < 1000 && !ended && !rfm_exec_done(owner); i++) {
			ended = waitpid(owner, &status, WNOHANG) == owner;
			usleep(10000);
		}
		execd = !ended && rfm_exec_done(owner);
		group_exit_won = ended && WIFEXITED(status) &&
				 WEXITSTATUS(status) == GROUP_EXIT_STATUS;
		err = pi_locker_result(locker);
		waitpid(sleeper, &sleeper_status, 0);
		if (!ended) {
			kill(owner, SIGKILL);
			waitpid(owner, NULL, 0);
		}
		word = a->lock[0].futex;
		RFM_CHECK(execd || group_exit_won,
			  "round %d: the owner %s", n, ended ? "ended otherwise than by the "
			  "group exit" : "neither exec'd nor ended in 10 s");
		RFM_CHECK(!group_exit_won || a->word_at_group_exit == held,
			  "round %d: the group exit began with the word %#x, not %#x: the "
			  "exec released the lock before it could no longer fail", n,
			  a->word_at_group_exit, held);
		RFM_CHECK(WIFEXITED(sleeper_status) && WEXITSTATUS(sleeper_status) == 0,
			  "round %d (%s won): the waiter was not woken", n,
			  group_exit_won ? "group exit" : "exec");
		RFM_CHECK(word == (FUTEX_OWNER_DIED | FUTEX_WAITERS),
			  "round %d (%s won): word %#x", n, group_exit_won ? "group exit" : "exec",
			  word);
		RFM_CHECK(err == 0, "round %d (%s won): the PI locker got %s", n,
			  group_exit_won ? "group exit" : "exec", rfm_errno_name(err));
		won[group_exit_won]++;
		munmap(a, sizeof(*a));
	}
	rfm_diag("%d rounds: the exec won %d, the group exit %d", EXEC_RACE_ROUNDS, won[0],
		 won[1]);
	return RFM_PASS;
}

/* Lock 0 as a robust PI futex: listed, bit 0 of its link set. */
static int takes_robust_pi_lock(struct arena *a)
{
	take(a, 0, 0);
	a->head.list.next = (void *)((uintptr_t)a->head.list.next | 1);
	return register_head(&a->head);
}

/*
 * A robust PI lock held across the exec, with a waiter: the waiter gets
 * it with FUTEX_OWNER_DIED set (the PI state is released when the old
 * image goes, as at an exit). On the exec-window kernel a second locker
 * comes between the walk and the TID change, and gets it after the first.
 */
static int death_exec_robust_pi_waiter(void)
{
	struct arena *a = arena_new();
	pid_t owner, locker, second = -1;
	uint32_t word;
	int err, second_err;

	RFM_CHECK(a, "mmap");
	owner = start_exec_owner(a, takes_robust_pi_lock);
	RFM_CHECK(owner > 0, "the owner never got ready");
	a->waiting = 0;
	locker = fork();
	if (locker == 0) {
		a->waiting = 1;
		err = lock_pi(&a->lock[0].futex, 10000 + 3 * exec_window_ms());
		a->lock[1].futex = a->lock[0].futex;	/* the word it got */
		a->lock[2].futex = (uint32_t)rfm_gettid();
		_exit(err);
	}
	RFM_CHECK(rfm_wait_sleeping(locker, &a->waiting), "the locker never slept");
	exec_now(a);
	if (exec_window_ms()) {
		/*
		 * After the walk (no TID in the word, FUTEX_OWNER_DIED and
		 * FUTEX_WAITERS) and before the TID change, the thread still
		 * owns the rt_mutex: a second locker queues behind the first
		 * and gets the lock after it.
		 */
		int walked = 0;

		for (int i = 0; i < 5000 && !walked; i++) {
			walked = a->lock[0].futex == (FUTEX_OWNER_DIED | FUTEX_WAITERS) &&
				 rfm_proc_state(a->owner_tid) == 'D';
			usleep(1000);
		}
		RFM_CHECK(walked, "the thread never slept in de_thread() after the "
			  "walk (word %#x)", a->lock[0].futex);
		a->waiting2 = 0;
		second = start_pi_locker(&a->lock[0].futex, 4 * exec_window_ms() + 5000,
					 &a->waiting2);
		RFM_CHECK(rfm_wait_sleeping(second, &a->waiting2),
			  "the second locker never slept");
	}
	err = pi_locker_result(locker);
	second_err = second > 0 ? pi_locker_result(second) : 0;
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	word = a->lock[1].futex;
	rfm_obs("locker", "%s", rfm_errno_name(err));
	rfm_obs("word_bits", "%#x", word & ~FUTEX_TID_MASK);
	if (second > 0)
		rfm_obs("second_locker", "%s", rfm_errno_name(second_err));
	RFM_CHECK(err == 0, "the locker got %s", rfm_errno_name(err));
	RFM_CHECK(second_err == 0, "the second locker got %s",
		  rfm_errno_name(second_err));
	RFM_CHECK((word & FUTEX_TID_MASK) == a->lock[2].futex,
		  "word %#x, the locker is %u", word, a->lock[2].futex);
	RFM_CHECK(word & FUTEX_OWNER_DIED, "word %#x: the owner's exec was "
		  "not reported as its death", word);
	return RFM_PASS;
}

/*
 * A robust PI lock held across the exec, uncontended: the walk releases
 * it (FUTEX_OWNER_DIED, no TID), and the next FUTEX_LOCK_PI takes it over
 * and sees FUTEX_OWNER_DIED. Left with the old TID, which names no task
 * once the exec is done, the lock would refuse every locker with ESRCH.
 */
static int death_exec_robust_pi_uncontended(void)
{
	struct arena *a = arena_new();
	pid_t owner;
	uint32_t released;
	int err;

	RFM_CHECK(a, "mmap");
	owner = start_exec_owner(a, takes_robust_pi_lock);
	RFM_CHECK(owner > 0, "the owner never got ready");
	exec_now(a);
	RFM_CHECK(rfm_wait_exec_done(owner), "the new image never started");
	released = a->lock[0].futex;
	err = lock_pi(&a->lock[0].futex, 2000);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	if (released == a->owner_tid)
		rfm_obs("word_after_exec", "the thread's TID");
	else
		rfm_obs("word_after_exec", "%#x", released);
	rfm_obs("locker", "%s", rfm_errno_name(err));
	rfm_obs("word_bits", "%#x", a->lock[0].futex & ~FUTEX_TID_MASK);
	RFM_CHECK(released == FUTEX_OWNER_DIED, "word %#x after the exec, the "
		  "thread's TID was %#x", released, a->owner_tid);
	RFM_CHECK(err == 0, "the next locker got %s", rfm_errno_name(err));
	RFM_CHECK((a->lock[0].futex & FUTEX_TID_MASK) == (uint32_t)rfm_gettid() &&
		  (a->lock[0].futex & FUTEX_OWNER_DIED),
		  "word %#x, the locker is %u", a->lock[0].futex, (uint32_t)rfm_gettid());
	return RFM_PASS;
}

/* ---- how the walk treats each entry ---- */

/* Run @owner in a child and require a clean exit with its list set. */
static int run_owner(int (*owner)(void *), struct arena *a)
{
	return expect_child_exit(rfm_run_child(owner, a));
}

static int owner_mixed_words(void *arg)
{
	struct arena *a = arg;
	static const int order[] = { 0, 1, 2, -1 };

	a->lock[0].futex = (uint32_t)getppid();		/* another TID */
	a->lock[1].futex = 0;				/* unlocked */
	a->lock[2].futex = (uint32_t)rfm_gettid();	/* ours */
	chain(a, order);
	return register_head(&a->head);
}

/* Only words holding the dying TID change; others and 0 stay as they are. */
static int death_only_own_entries(void)
{
	struct arena *a = arena_new();
	uint32_t other = (uint32_t)getpid();

	RFM_CHECK(a, "mmap");
	if (run_owner(owner_mixed_words, a))
		return RFM_FAIL;
	rfm_obs("other_tid_untouched", "%d", a->lock[0].futex == other);
	rfm_obs("zero_untouched", "%d", a->lock[1].futex == 0);
	rfm_obs("own", "%#x", a->lock[2].futex);
	RFM_CHECK(a->lock[0].futex == other, "other TID's word %#x", a->lock[0].futex);
	RFM_CHECK(a->lock[1].futex == 0, "zero word %#x", a->lock[1].futex);
	RFM_CHECK(a->lock[2].futex == FUTEX_OWNER_DIED, "own word %#x",
		  a->lock[2].futex);
	return RFM_PASS;
}

/*
 * ---- the TID is bits 0-29 of the word (FUTEX_TID_MASK, 0x3fffffff):
 * a word whose bit 29 is set is another thread's, even when the bits
 * below are the dying TID; a word that holds the TID and
 * FUTEX_OWNER_DIED (an owner that died during recovery) is ours ----
 */

static int owner_tid_bits(void *arg)
{
	struct arena *a = arg;
	uint32_t tid = (uint32_t)rfm_gettid();
	static const int order[] = { 0, 1, 2, -1 };

	a->lock[0].futex = tid | 0x20000000u;		/* another TID */
	a->lock[1].futex = tid | FUTEX_OWNER_DIED;	/* ours, recovered */
	a->lock[2].futex = tid;				/* ours */
	a->owner_tid = tid;
	chain(a, order);
	return register_head(&a->head);
}

static int death_tid_is_30_bits(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (run_owner(owner_tid_bits, a))
		return RFM_FAIL;
	rfm_obs("bit29_word", "%s", a->lock[0].futex == (a->owner_tid | 0x20000000u) ?
		"untouched" : "written");
	rfm_obs("owner_died_word", "%#x", a->lock[1].futex);
	rfm_obs("own", "%#x", a->lock[2].futex);
	RFM_CHECK(a->lock[0].futex == (a->owner_tid | 0x20000000u),
		  "word with bit 29 %#x", a->lock[0].futex);
	RFM_CHECK(a->lock[1].futex == FUTEX_OWNER_DIED, "word with OWNER_DIED %#x",
		  a->lock[1].futex);
	RFM_CHECK(a->lock[2].futex == FUTEX_OWNER_DIED, "own word %#x",
		  a->lock[2].futex);
	return RFM_PASS;
}

/*
 * ---- the walk reads an entry's next link before it releases the entry:
 * once released, the lock may be taken and its memory reused at once.
 * Here the reuse is built in. With futex_offset LOW_HALF each entry's
 * futex word is the low half of its own 64-bit next link (its first four
 * bytes little-endian, its last four big-endian), so releasing an entry
 * changes its link. Every address the list
 * links to ends in the dying TID (its low 32 bits), so every word is
 * the owner's: head H at 4 GiB + TID, entry C at 8 GiB + TID, entry A
 * anywhere, linked H -> A -> C -> H. A link of A read after A's release
 * is 8 GiB + FUTEX_OWNER_DIED, where nothing is mapped: that walk ends
 * there and C stays held. Only a 64-bit task's links have a high half
 * to keep the address; an ILP32 link would be the TID itself, below
 * mmap_min_addr. ----
 */

#if __SIZEOF_LONG__ == 8
#define LINK_SPAN	8192	/* a head or link may cross into a second page */
#define LOW_HALF	(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0)
#define GIB(n)		((uintptr_t)(n) << 30)

struct high_link_pages {
	char head[LINK_SPAN];	/* mapped again at 4 GiB + (TID & ~0xfff) */
	char entry[LINK_SPAN];	/* mapped again at 8 GiB + (TID & ~0xfff) */
	struct robust_list a;	/* entry A, where the case reads it */
	volatile uint32_t tid;
};

/* Map @len bytes of the shared @from again at @to, which must be free. */
static int map_again_at(void *from, uintptr_t to, size_t len)
{
	void *probe = mmap((void *)to, len, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (probe != (void *)to)
		return -1;
	munmap(probe, len);
	return mremap(from, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		      (void *)to) == (void *)to ? 0 : -1;
}

static int owner_links_end_in_tid(void *arg)
{
	struct high_link_pages *p = arg;
	uintptr_t tid = (uintptr_t)rfm_gettid();
	uintptr_t page = tid & ~(uintptr_t)0xfff;
	struct robust_list_head *h;
	struct robust_list *c;

	if (tid & 7)
		return 3;	/* links and heads 8-byte aligned (so words 4): try another */
	if (map_again_at(p->head, GIB(4) + page, LINK_SPAN) ||
	    map_again_at(p->entry, GIB(8) + page, LINK_SPAN))
		return 4;
	h = (void *)(GIB(4) + tid);
	c = (void *)(GIB(8) + tid);
	h->futex_offset = LOW_HALF;
	h->list_op_pending = NULL;
	h->list.next = &p->a;
	p->a.next = c;		/* A's word: the low half of C's address, the TID */
	c->next = &h->list;	/* C's word: the low half of H's address, the TID */
	p->tid = (uint32_t)tid;
	return register_head(h) ? 1 : 0;
}

static int death_next_read_before_release(void)
{
	struct high_link_pages *p = rfm_shared(sizeof(*p));
	uint32_t a_word, c_word;
	int status = -1;

	RFM_CHECK(p, "mmap");
	for (int i = 0; i < 16; i++) {
		status = rfm_run_child(owner_links_end_in_tid, p);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 3)
			break;
	}
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 4,
		  "4 GiB or 8 GiB plus the TID is in use here");
	if (expect_child_exit(status))
		return RFM_FAIL;
	memcpy(&a_word, (char *)&p->a.next + LOW_HALF, sizeof(a_word));
	memcpy(&c_word, p->entry + (p->tid & 0xfff) + LOW_HALF, sizeof(c_word));
	rfm_obs("first", "%#x", a_word);
	rfm_obs("second", "%s", c_word == FUTEX_OWNER_DIED ? "owner-died" :
		c_word == p->tid ? "held" : "other");
	RFM_CHECK(a_word == FUTEX_OWNER_DIED, "first entry's word %#x", a_word);
	RFM_CHECK(c_word == FUTEX_OWNER_DIED, "second entry's word %#x (the TID was "
		  "%#x): the walk read the first entry's link after releasing it",
		  c_word, p->tid);
	return RFM_PASS;
}
#endif

#if RFM_HAS_KERNEL_ADDRESS
/*
 * ---- set_robust_list() stores the pointer and checks nothing, a kernel
 * address too; the walk at exit then reads nothing through it: the
 * owner exits cleanly ----
 */

static int owner_head_kernel_address(void *arg)
{
	void *head = rfm_kernel_address(), *got = NULL;
	size_t len = 0;

	(void)arg;
	if (!head || rfm_set_robust_list(head, sizeof(struct robust_list_head)))
		return 1;
	if (rfm_get_robust_list(0, &got, &len) || got != head)
		return 2;
	return 0;
}

static int survive_head_kernel_address(void)
{
	int status = rfm_run_child(owner_head_kernel_address, NULL);

	rfm_obs("owner_exit", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	RFM_CHECK(!WIFEXITED(status) || WEXITSTATUS(status) != 1,
		  "set_robust_list() refused a kernel address");
	RFM_CHECK(!WIFEXITED(status) || WEXITSTATUS(status) != 2,
		  "get_robust_list() did not report the kernel address");
	return expect_child_exit(status);
}
#endif

/*
 * futex_offset may be negative: the word before the link. On 32-bit it
 * is a compat_long_t that the compat walk must sign-extend.
 */
struct word_first_lock {
	uint32_t futex;
	uint32_t pad;
	struct robust_list link;
};

static int owner_negative_offset(void *arg)
{
	struct word_first_lock *l = arg;
	struct robust_list_head *head = (void *)(l + 1);

	l->futex = (uint32_t)rfm_gettid();
	head->list.next = &l->link;
	l->link.next = &head->list;
	head->futex_offset = (long)offsetof(struct word_first_lock, futex) -
			     (long)offsetof(struct word_first_lock, link);
	head->list_op_pending = NULL;
	return register_head(head);
}

static int death_negative_offset(void)
{
	struct word_first_lock *l = rfm_shared(4096);

	RFM_CHECK(l, "mmap");
	if (expect_child_exit(rfm_run_child(owner_negative_offset, l)))
		return RFM_FAIL;
	rfm_obs("futex_offset", "%ld",
		(long)offsetof(struct word_first_lock, futex) -
		(long)offsetof(struct word_first_lock, link));
	rfm_obs("word", "%#x", l->futex);
	RFM_CHECK(l->futex == FUTEX_OWNER_DIED, "word %#x", l->futex);
	return RFM_PASS;
}

#if __SIZEOF_LONG__ == 8
/*
 * A native futex_offset is a long: 2 GiB and more from the link must
 * reach the word (the compat one is 32 bits and cannot say it). A page
 * for the link and head, and one 2 GiB further on for the word, both
 * shared, in a reservation that keeps the space between them free. Both
 * pages are aligned to FAR_ALIGN: MIPS refuses (EINVAL) a fixed shared
 * mapping whose address is not aligned to its SHMLBA (cache colouring).
 */
#define FAR_OFFSET	(1UL << 31)
#define FAR_LINK	64
#define FAR_ALIGN	(256UL << 10)	/* MIPS's SHMLBA, the largest there is */

static int owner_far_offset(void *arg)
{
	char *base = arg;
	struct robust_list_head *head = (void *)(base + 2048);
	struct robust_list *link = (void *)(base + FAR_LINK);
	uint32_t tid = (uint32_t)rfm_gettid();

	memcpy(base + FAR_LINK + FAR_OFFSET, &tid, sizeof(tid));
	head->list.next = link;
	link->next = &head->list;
	head->futex_offset = (long)FAR_OFFSET;
	head->list_op_pending = NULL;
	return register_head(head);
}

static void *shared_at(char *at)
{
	return mmap(at, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static int death_offset_beyond_2gib(void)
{
	size_t size = FAR_OFFSET + 4096 + FAR_ALIGN;
	char *space = mmap(NULL, size, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *base = (char *)(((uintptr_t)space + FAR_ALIGN - 1) & ~(FAR_ALIGN - 1));
	uint32_t word;
	int died;

	RFM_CHECK(space != MAP_FAILED, "reserving 2 GiB: %s", rfm_errno_name(errno));
	if (shared_at(base) != base || shared_at(base + FAR_OFFSET) != base + FAR_OFFSET) {
		munmap(space, size);
		RFM_CHECK(0, "mapping the two pages: %s", rfm_errno_name(errno));
	}
	died = expect_child_exit(rfm_run_child(owner_far_offset, base));
	memcpy(&word, base + FAR_LINK + FAR_OFFSET, sizeof(word));
	munmap(space, size);
	if (died)
		return RFM_FAIL;
	rfm_obs("word", "%#x", word);
	RFM_CHECK(word == FUTEX_OWNER_DIED, "the word 2 GiB past its link: %#x", word);
	return RFM_PASS;
}
#endif

/* Bit 0 of a link marks a PI futex: walked, and the rest still released. */
static int owner_pi_entry(void *arg)
{
	struct arena *a = arg;
	static const int order[] = { 0, 1, -1 };

	take(a, 0, 0);
	take(a, 1, 0);
	chain(a, order);
	a->head.list.next = (void *)((uintptr_t)a->head.list.next | 1);
	return register_head(&a->head);
}

static int death_pi_entry_then_more(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (run_owner(owner_pi_entry, a))
		return RFM_FAIL;
	rfm_obs("pi_word", "%#x", a->lock[0].futex);
	rfm_obs("next_word", "%#x", a->lock[1].futex);
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "PI word %#x",
		  a->lock[0].futex);
	RFM_CHECK(a->lock[1].futex == FUTEX_OWNER_DIED,
		  "the entry after a PI one was leaked: %#x", a->lock[1].futex);
	return RFM_PASS;
}

/* ---- list_op_pending ---- */

static int owner_pending_only(void *arg)
{
	struct arena *a = arg;

	/* Acquired, not yet listed: only list_op_pending knows about it. */
	a->lock[0].futex = (uint32_t)rfm_gettid();
	a->head.list_op_pending = &a->lock[0].link;
	return register_head(&a->head);
}

static int death_pending_not_listed(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (run_owner(owner_pending_only, a))
		return RFM_FAIL;
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "word %#x",
		  a->lock[0].futex);
	return RFM_PASS;
}

/* ---- ways to die ---- */

enum death_by { BY_EXIT, BY_SIGKILL, BY_SIGSEGV, BY_EXIT_GROUP_ELSEWHERE };

static void *hold_in_thread(void *arg)
{
	struct arena *a = arg;

	take(a, 0, 0);
	if (!register_head(&a->head))
		a->owner_tid = 1;
	for (;;)
		pause();
	return NULL;
}

static int die_holding(struct arena *a, enum death_by how)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		pthread_t t;

		if (how == BY_EXIT_GROUP_ELSEWHERE) {
			/* A thread holds; the main thread ends the process. */
			if (pthread_create(&t, NULL, hold_in_thread, a))
				_exit(1);
			while (!a->owner_tid)
				usleep(1000);
			_exit(0);
		}
		take(a, 0, 0);
		if (register_head(&a->head))
			_exit(1);
		a->owner_tid = 1;
		if (how == BY_SIGSEGV)
			*(volatile int *)0 = 0;
		if (how == BY_EXIT)
			_exit(0);
		for (;;)
			pause();
	}
	if (how == BY_SIGKILL) {
		while (!a->owner_tid && waitpid(pid, &status, WNOHANG) == 0)
			usleep(1000);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	rfm_obs("word", "%#x", a->lock[0].futex);
	RFM_CHECK(a->owner_tid, "the owner never registered its list");
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED, "word %#x",
		  a->lock[0].futex);
	return RFM_PASS;
}

static int die_by(enum death_by how)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	return die_holding(a, how);
}

static int death_by_exit(void) { return die_by(BY_EXIT); }
static int death_by_sigkill(void) { return die_by(BY_SIGKILL); }
static int death_by_sigsegv(void) { return die_by(BY_SIGSEGV); }
static int death_by_exit_group_elsewhere(void) { return die_by(BY_EXIT_GROUP_ELSEWHERE); }

/*
 * ---- ROBUST_LIST_LIMIT: with limit+1 held locks, how many are released;
 * list_op_pending is still handled when the walk stops at the limit ----
 */

#define LIMIT_HELD	(ROBUST_LIST_LIMIT + 1)
#define LIMIT_HEAD	LIMIT_HELD		/* the head takes two lock slots */
#define LIMIT_PENDING	(LIMIT_HELD + 2)	/* a lock only pending knows of */

static int owner_many(void *arg)
{
	struct rfm_lock *locks = arg;
	struct robust_list_head *head = (void *)(locks + LIMIT_HEAD);
	uint32_t tid = (uint32_t)rfm_gettid();

	rfm_head_init(head);
	/* Add in reverse so that list order is locks[0], locks[1], ... */
	for (int i = LIMIT_HELD - 1; i >= 0; i--) {
		locks[i].futex = tid;
		rfm_list_add(head, &locks[i]);
	}
	locks[LIMIT_PENDING].futex = tid;
	head->list_op_pending = &locks[LIMIT_PENDING].link;
	return register_head(head);
}

static int death_limit_boundary(void)
{
	int released = 0, prefix = 0;
	struct rfm_lock *locks = rfm_shared(sizeof(*locks) * (LIMIT_PENDING + 1));

	RFM_CHECK(locks, "mmap");
	if (expect_child_exit(rfm_run_child(owner_many, locks)))
		return RFM_FAIL;
	for (int i = 0; i < LIMIT_HELD; i++) {
		int dead = locks[i].futex == FUTEX_OWNER_DIED;

		released += dead;
		if (dead && prefix == i)
			prefix++;
	}
	rfm_obs("held", "%d", LIMIT_HELD);
	rfm_obs("released", "%d", released);
	rfm_obs("released_in_list_order", "%d", prefix == released);
	rfm_obs("pending", "%#x", locks[LIMIT_PENDING].futex);
	RFM_CHECK(prefix == released, "released locks are not the list's head");
	RFM_CHECK(released == ROBUST_LIST_LIMIT,
		  "%d of %d released; <linux/futex.h> says the limit is %d",
		  released, LIMIT_HELD, ROBUST_LIST_LIMIT);
	RFM_CHECK(locks[LIMIT_PENDING].futex == FUTEX_OWNER_DIED,
		  "list_op_pending not handled after the limit: %#x",
		  locks[LIMIT_PENDING].futex);
	return RFM_PASS;
}

/* ---- hostile lists: the walk must stop quietly, never hang or crash ---- */

static int owner_circular(void *arg)
{
	struct arena *a = arg;

	take(a, 0, 0);
	take(a, 1, 0);
	/* head -> 1 -> 0 -> 1 -> ...: never back to the head. */
	a->lock[0].link.next = &a->lock[1].link;
	return register_head(&a->head);
}

static int death_circular_list(void)
{
	struct arena *a = arena_new();

	RFM_CHECK(a, "mmap");
	if (run_owner(owner_circular, a))
		return RFM_FAIL;
	rfm_obs("words", "%#x,%#x", a->lock[0].futex, a->lock[1].futex);
	RFM_CHECK(a->lock[0].futex == FUTEX_OWNER_DIED &&
		  a->lock[1].futex == FUTEX_OWNER_DIED, "words %#x %#x",
		  a->lock[0].futex, a->lock[1].futex);
	return RFM_PASS;
}

/* Stop at the @bad entry: the locks before it released, the one after not. */
static int owner_with_bad_entry(struct arena *a, struct robust_list *bad)
{
	take(a, 0, 0);
	take(a, 1, 0);
	/* list order: head -> 1 -> bad -> 0 (if the walk went on) */
	a->head.list.next = &a->lock[1].link;
	a->lock[1].link.next = bad;
	a->lock[0].link.next = &a->head.list;
	return register_head(&a->head);
}

static int owner_unmapped_next(void *arg)
{
	void *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	return owner_with_bad_entry(arg, hole);
}

/*
 * A readable, 2-byte aligned entry (bit 0, the PI flag, is clear) whose
 * futex word at entry + futex_offset is therefore misaligned. Its next
 * link leads on to lock 0 and the misaligned word holds the owner's TID,
 * so a walk that went past the alignment rule would both write there and
 * release lock 0.
 */
static void *misaligned_entry(struct arena *a)
{
	return (char *)&a->lock[2].link + 2;
}

static int owner_misaligned_futex(void *arg)
{
	struct arena *a = arg;
	char *odd = misaligned_entry(a);
	uint32_t tid = (uint32_t)rfm_gettid();

	memcpy(odd, &(struct robust_list *){ &a->lock[0].link }, sizeof(void *));
	memcpy(odd + a->head.futex_offset, &tid, sizeof(tid));
	a->owner_tid = tid;
	return owner_with_bad_entry(a, (struct robust_list *)odd);
}

#if RFM_HAS_KERNEL_ADDRESS
static int owner_kernel_address(void *arg)
{
	/* Above TASK_SIZE for the x86_64 kernel; on i386 (3G/1G) and for
	 * ia32 tasks an unmapped or kernel address: faults either way. */
	return owner_with_bad_entry(arg, (void *)(sizeof(long) == 8 ?
				    (uintptr_t)0xffff880000000000ULL :
				    (uintptr_t)0xc0001000UL));
}
#endif

static int walk_stops_at_bad_entry(int (*owner)(void *), struct arena *a)
{
	RFM_CHECK(a, "mmap");
	if (run_owner(owner, a))
		return RFM_FAIL;
	rfm_obs("before", "%#x", a->lock[1].futex);
	rfm_obs("after_untouched", "%d", a->lock[0].futex != FUTEX_OWNER_DIED);
	RFM_CHECK(a->lock[1].futex == FUTEX_OWNER_DIED, "lock before: %#x",
		  a->lock[1].futex);
	RFM_CHECK(a->lock[0].futex != FUTEX_OWNER_DIED,
		  "the walk went past a bad entry");
	return RFM_PASS;
}

static int death_stops_at_unmapped_next(void)
{
	return walk_stops_at_bad_entry(owner_unmapped_next, arena_new());
}

static int death_stops_at_misaligned_futex(void)
{
	struct arena *a = arena_new();
	uint32_t word;

	RFM_CHECK(a, "mmap");
	if (walk_stops_at_bad_entry(owner_misaligned_futex, a))
		return RFM_FAIL;
	memcpy(&word, (char *)misaligned_entry(a) + a->head.futex_offset, sizeof(word));
	rfm_obs("misaligned_word_untouched", "%d", word == a->owner_tid);
	RFM_CHECK(word == a->owner_tid, "the misaligned word was written: %#x", word);
	return RFM_PASS;
}

#if RFM_HAS_KERNEL_ADDRESS
static int death_stops_at_kernel_address(void)
{
	return walk_stops_at_bad_entry(owner_kernel_address, arena_new());
}
#endif

static int owner_cycle_skipping_head(void *arg)
{
	struct arena *a = arg;

	take(a, 0, 0);
	take(a, 1, 0);
	take(a, 2, 0);
	/* head -> 0 -> 1 -> 2 -> 1 -> 2 ...: the cycle leaves the head out. */
	a->head.list.next = &a->lock[0].link;
	a->lock[0].link.next = &a->lock[1].link;
	a->lock[1].link.next = &a->lock[2].link;
	a->lock[2].link.next = &a->lock[1].link;
	return register_head(&a->head);
}

static int death_cycle_skipping_head(void)
{
	struct arena *a = arena_new();
	int released = 0;

	RFM_CHECK(a, "mmap");
	if (run_owner(owner_cycle_skipping_head, a))
		return RFM_FAIL;
	for (int i = 0; i < 3; i++)
		released += a->lock[i].futex == FUTEX_OWNER_DIED;
	rfm_obs("released", "%d", released);
	RFM_CHECK(released == 3, "%d of 3 released", released);
	return RFM_PASS;
}

/*
 * ---- lists at the edge of a page the owner cannot read: a page of
 * word-first locks (futex_offset -8), followed by a PROT_NONE page ----
 */

struct edge {
	unsigned char page[4096];	/* readable and writable */
	unsigned char hole[4096];	/* PROT_NONE in the owner */
};

/* A word-first lock whose link sits at @link_at inside edge->page. */
static struct word_first_lock *edge_lock(struct edge *e, size_t link_at)
{
	return (void *)(e->page + link_at - offsetof(struct word_first_lock, link));
}

static struct edge *edge_new(void)
{
	return rfm_shared(sizeof(struct edge));
}

/* A new edge, after @owner ran on it and exited cleanly; NULL if not. */
static struct edge *edge_after(int (*owner)(void *))
{
	struct edge *e = edge_new();

	if (!e || expect_child_exit(rfm_run_child(owner, e)))
		return NULL;
	return e;
}

/* The owner's view: @e->hole cannot be read; returns 0 on success. */
static int edge_register(struct edge *e, struct robust_list_head *head)
{
	if (mprotect(e->hole, sizeof(e->hole), PROT_NONE))
		return 2;
	return register_head(head);
}

static struct robust_list_head *edge_head(struct edge *e)
{
	struct robust_list_head *head = (void *)(e->page + 2048);

	head->list.next = &head->list;
	head->futex_offset = (long)offsetof(struct word_first_lock, futex) -
			     (long)offsetof(struct word_first_lock, link);
	head->list_op_pending = NULL;
	return head;
}

/*
 * An entry whose link is the last word before the hole: the walk reads
 * exactly one link, 4 bytes for a 32-bit list and 8 for a 64-bit one, so
 * the list goes on past it (a compat walk reading 8 bytes would fault).
 */
static int owner_link_at_page_end(void *arg)
{
	struct edge *e = arg;
	struct robust_list_head *head = edge_head(e);
	struct word_first_lock *last = edge_lock(e, sizeof(e->page) - sizeof(void *));
	struct word_first_lock *next = edge_lock(e, 64);
	uint32_t tid = (uint32_t)rfm_gettid();

	last->futex = tid;
	next->futex = tid;
	head->list.next = &last->link;
	last->link.next = &next->link;
	next->link.next = &head->list;
	return edge_register(e, head);
}

static int death_link_at_page_end(void)
{
	struct edge *e = edge_new();
	struct word_first_lock *last, *next;

	RFM_CHECK(e, "mmap");
	last = edge_lock(e, sizeof(e->page) - sizeof(void *));
	next = edge_lock(e, 64);
	if (expect_child_exit(rfm_run_child(owner_link_at_page_end, e)))
		return RFM_FAIL;
	rfm_obs("last_word", "%#x", last->futex);
	rfm_obs("next_word", "%#x", next->futex);
	RFM_CHECK(last->futex == FUTEX_OWNER_DIED, "entry at the page end: %#x",
		  last->futex);
	RFM_CHECK(next->futex == FUTEX_OWNER_DIED,
		  "the walk did not go on past the page end: %#x", next->futex);
	return RFM_PASS;
}

/*
 * An entry whose link is in the hole but whose futex word (8 bytes
 * before it) is readable: the word is released, then the walk ends on
 * the fault, and list_op_pending is not handled, as after any fault.
 */
static int owner_next_unreadable(void *arg)
{
	struct edge *e = arg;
	struct robust_list_head *head = edge_head(e);
	struct word_first_lock *first = edge_lock(e, 64);
	struct word_first_lock *pending = edge_lock(e, 128);
	struct robust_list *in_hole = (void *)e->hole;
	uint32_t tid = (uint32_t)rfm_gettid();

	first->futex = tid;
	pending->futex = tid;
	/* The word of the entry in the hole: the last 8 bytes of the page. */
	memcpy(e->page + sizeof(e->page) - 8, &tid, sizeof(tid));
	head->list.next = &first->link;
	first->link.next = in_hole;
	head->list_op_pending = &pending->link;
	return edge_register(e, head);
}

static int death_next_link_unreadable(void)
{
	struct edge *e = edge_new();
	uint32_t hole_word;

	RFM_CHECK(e, "mmap");
	if (expect_child_exit(rfm_run_child(owner_next_unreadable, e)))
		return RFM_FAIL;
	memcpy(&hole_word, e->page + sizeof(e->page) - 8, sizeof(hole_word));
	rfm_obs("first", "%#x", edge_lock(e, 64)->futex);
	rfm_obs("entry_before_hole", "%#x", hole_word);
	rfm_obs("pending_untouched", "%d",
		edge_lock(e, 128)->futex != FUTEX_OWNER_DIED);
	RFM_CHECK(edge_lock(e, 64)->futex == FUTEX_OWNER_DIED, "first: %#x",
		  edge_lock(e, 64)->futex);
	RFM_CHECK(hole_word == FUTEX_OWNER_DIED,
		  "the entry whose link faulted was not released: %#x", hole_word);
	RFM_CHECK(edge_lock(e, 128)->futex != FUTEX_OWNER_DIED,
		  "list_op_pending handled after a fault ended the walk");
	return RFM_PASS;
}

/*
 * The futex word is a u32 in the last 4 bytes before the hole (a positive
 * futex_offset from a link further down the page): the walk reads exactly
 * those 4 bytes and releases it.
 */
#define LAST_WORD_AT	(4096 - sizeof(uint32_t))
#define LAST_WORD_LINK	64

static int owner_word_at_page_end(void *arg)
{
	struct edge *e = arg;
	struct robust_list_head *head = edge_head(e);
	struct robust_list *link = (void *)(e->page + LAST_WORD_LINK);
	uint32_t tid = (uint32_t)rfm_gettid();

	memcpy(e->page + LAST_WORD_AT, &tid, sizeof(tid));
	head->futex_offset = (long)(LAST_WORD_AT - LAST_WORD_LINK);
	head->list.next = link;
	link->next = &head->list;
	return edge_register(e, head);
}

static int death_word_at_page_end(void)
{
	struct edge *e = edge_after(owner_word_at_page_end);
	uint32_t word;

	RFM_CHECK(e, "the owner did not run and exit cleanly");
	memcpy(&word, e->page + LAST_WORD_AT, sizeof(word));
	rfm_obs("word", "%#x", word);
	RFM_CHECK(word == FUTEX_OWNER_DIED, "the last word of the page: %#x", word);
	return RFM_PASS;
}

/*
 * Locks with the word right after the link (futex_offset = one link):
 * the first is released; the second's link is the last of the page, so
 * its word is in the hole: the walk stops there and the third, readable,
 * stays as the owner left it.
 */
#define WORD_AFTER	((long)sizeof(struct robust_list))
#define FIRST_LINK	64
#define THIRD_LINK	128

static int owner_word_unreadable(void *arg)
{
	struct edge *e = arg;
	struct robust_list_head *head = edge_head(e);
	struct robust_list *first = (void *)(e->page + FIRST_LINK);
	struct robust_list *second = (void *)(e->page + 4096 - WORD_AFTER);
	struct robust_list *third = (void *)(e->page + THIRD_LINK);
	uint32_t tid = (uint32_t)rfm_gettid();

	memcpy(e->page + FIRST_LINK + WORD_AFTER, &tid, sizeof(tid));
	memcpy(e->page + THIRD_LINK + WORD_AFTER, &tid, sizeof(tid));
	head->futex_offset = WORD_AFTER;
	head->list.next = first;
	first->next = second;
	second->next = third;
	third->next = &head->list;
	return edge_register(e, head);
}

static int death_stops_at_unreadable_word(void)
{
	struct edge *e = edge_after(owner_word_unreadable);
	uint32_t first, third;

	RFM_CHECK(e, "the owner did not run and exit cleanly");
	memcpy(&first, e->page + FIRST_LINK + WORD_AFTER, sizeof(first));
	memcpy(&third, e->page + THIRD_LINK + WORD_AFTER, sizeof(third));
	rfm_obs("first_word", "%#x", first);
	rfm_obs("third_released", "%d", third == FUTEX_OWNER_DIED);
	RFM_CHECK(first == FUTEX_OWNER_DIED, "first word %#x", first);
	RFM_CHECK(third != FUTEX_OWNER_DIED,
		  "the walk went on past an unreadable futex word");
	return RFM_PASS;
}

/*
 * The walk ends at the head: the word at futex_offset from the head's
 * own link is no lock, even when it holds the dying TID.
 */
#define HEAD_WORD_AT	256

static int owner_head_word_is_tid(void *arg)
{
	struct edge *e = arg;
	struct robust_list_head *head = edge_head(e);
	struct robust_list *lock = (void *)(e->page + FIRST_LINK);
	uint32_t tid = (uint32_t)rfm_gettid();

	head->futex_offset = HEAD_WORD_AT;
	memcpy((char *)&head->list + HEAD_WORD_AT, &tid, sizeof(tid));
	memcpy((char *)lock + HEAD_WORD_AT, &tid, sizeof(tid));
	head->list.next = lock;
	lock->next = &head->list;
	return edge_register(e, head);
}

static int death_head_word_untouched(void)
{
	struct edge *e = edge_after(owner_head_word_is_tid);
	uint32_t lock_word, head_word;

	RFM_CHECK(e, "the owner did not run and exit cleanly");
	memcpy(&lock_word, e->page + FIRST_LINK + HEAD_WORD_AT, sizeof(lock_word));
	memcpy(&head_word, e->page + 2048 + HEAD_WORD_AT, sizeof(head_word));
	rfm_obs("lock_word", "%#x", lock_word);
	rfm_obs("head_word_released", "%d", head_word == FUTEX_OWNER_DIED);
	RFM_CHECK(lock_word == FUTEX_OWNER_DIED, "lock word %#x", lock_word);
	RFM_CHECK(head_word != FUTEX_OWNER_DIED && head_word != 0,
		  "the head's word was taken for a lock: %#x", head_word);
	return RFM_PASS;
}

/*
 * A head whose list_op_pending field lies in the hole: the walk cannot
 * start (the kernel reads the whole head first), so nothing is released,
 * not even the listed locks.
 */
static int owner_pending_field_unreadable(void *arg)
{
	struct edge *e = arg;
	struct robust_list_head *head = (void *)(e->page + sizeof(e->page) -
						 offsetof(struct robust_list_head,
							  list_op_pending));
	struct word_first_lock *lock = edge_lock(e, 64);

	head->futex_offset = (long)offsetof(struct word_first_lock, futex) -
			     (long)offsetof(struct word_first_lock, link);
	lock->futex = (uint32_t)rfm_gettid();
	head->list.next = &lock->link;
	lock->link.next = &head->list;
	return edge_register(e, head);
}

static int survive_pending_field_unreadable(void)
{
	struct edge *e = edge_new();

	RFM_CHECK(e, "mmap");
	if (expect_child_exit(rfm_run_child(owner_pending_field_unreadable, e)))
		return RFM_FAIL;
	rfm_obs("listed_untouched", "%d", edge_lock(e, 64)->futex != FUTEX_OWNER_DIED);
	RFM_CHECK(edge_lock(e, 64)->futex != FUTEX_OWNER_DIED,
		  "the list was walked although its head could not be read");
	return RFM_PASS;
}

static int owner_head_unmapped(void *arg)
{
	struct robust_list_head *head = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	rfm_head_init(head);
	if (register_head(head))
		return 1;
	return munmap(head, 4096) ? 2 : 0;
}

/*
 * A head whose first word, list.next, is the last of an unreadable page,
 * while futex_offset and list_op_pending are readable on the next: the
 * walk must not start. Its futex_offset is the address of a lock the
 * owner holds, so that a walk going on from a zeroed entry (NULL plus
 * futex_offset) would release that lock; list_op_pending names another
 * entry, so that the NULL entry is not taken for the pending one.
 */
struct split_head {
	unsigned char hole[4096];	/* PROT_NONE in the owner */
	unsigned char page[4096];
};

#define SPLIT_LOCK_AT	64

static int owner_head_first_word_unreadable(void *arg)
{
	struct split_head *s = arg;
	struct robust_list_head *head = (void *)(s->page - sizeof(void *));
	uint32_t tid = (uint32_t)rfm_gettid();

	memcpy(s->page + SPLIT_LOCK_AT, &tid, sizeof(tid));
	head->list.next = &head->list;	/* what the owner set; then hidden */
	head->futex_offset = (long)(uintptr_t)(s->page + SPLIT_LOCK_AT);
	head->list_op_pending = (void *)(s->page + 256);
	if (register_head(head))
		return 1;
	return mprotect(s->hole, sizeof(s->hole), PROT_NONE) ? 2 : 0;
}

static int survive_head_first_word_unreadable(void)
{
	struct split_head *s = rfm_shared(sizeof(*s));
	uint32_t word;

	RFM_CHECK(s, "mmap");
	if (expect_child_exit(rfm_run_child(owner_head_first_word_unreadable, s)))
		return RFM_FAIL;
	memcpy(&word, s->page + SPLIT_LOCK_AT, sizeof(word));
	rfm_obs("lock_released", "%d", word == FUTEX_OWNER_DIED);
	RFM_CHECK(word != FUTEX_OWNER_DIED && word != 0,
		  "a walk started from a head whose list.next was unreadable: %#x", word);
	return RFM_PASS;
}

static int survive_head_unmapped(void)
{
	int status = rfm_run_child(owner_head_unmapped, NULL);

	rfm_obs("owner_exit", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return expect_child_exit(status);
}

static const struct rfm_case cases[] = {
	RFM_CASE(death_several_locks),
	RFM_CASE(death_waiters_bit_kept),
	RFM_CASE(death_bad_pending_keeps_list),
	RFM_CASE(death_readonly_word),
	RFM_CASE(death_fork_not_inherited),
	RFM_CASE(death_pid_namespace),
	RFM_CASE(death_waiter_woken),
	RFM_CASE(death_pi_bit_is_per_entry),
	RFM_CASE(death_wakes_any_bitset),
	RFM_CASE(death_thread_exit),
	RFM_CASE(death_word_in_cow_page),
	RFM_CASE(death_at_exec),
	RFM_CASE(death_exec_from_thread),
	RFM_CASE(death_exec_after_leader_exit),
	RFM_CASE(exec_pi_waiter_handed_over),
	RFM_CASE(exec_pi_locker_during_exec),
	RFM_CASE(exec_task_owns_pi),
	RFM_CASE(death_exec_races_group_exit),
	RFM_CASE_TIMEOUT(death_exec_races_group_exit_smp, 120),
	RFM_CASE(death_exec_robust_pi_waiter),
	RFM_CASE(death_exec_robust_pi_uncontended),
	RFM_CASE(death_only_own_entries),
	RFM_CASE(death_tid_is_30_bits),
	RFM_CASE(death_negative_offset),
	RFM_CASE(death_pi_entry_then_more),
	RFM_CASE(death_pending_not_listed),
	RFM_CASE(death_by_exit),
	RFM_CASE(death_by_sigkill),
	RFM_CASE(death_by_sigsegv),
	RFM_CASE(death_by_exit_group_elsewhere),
	RFM_CASE(death_limit_boundary),
	RFM_CASE(death_circular_list),
	RFM_CASE(death_cycle_skipping_head),
	RFM_CASE(death_stops_at_unmapped_next),
	RFM_CASE(death_stops_at_misaligned_futex),
#if RFM_HAS_KERNEL_ADDRESS
	RFM_CASE(death_stops_at_kernel_address),
#endif
	RFM_CASE(death_link_at_page_end),
	RFM_CASE(death_next_link_unreadable),
	RFM_CASE(death_word_at_page_end),
	RFM_CASE(death_stops_at_unreadable_word),
	RFM_CASE(death_head_word_untouched),
	RFM_CASE(survive_pending_field_unreadable),
	RFM_CASE(survive_head_unmapped),
#if RFM_HAS_KERNEL_ADDRESS
	RFM_CASE(survive_head_kernel_address),
#endif
	RFM_CASE(survive_head_first_word_unreadable),
#if __SIZEOF_LONG__ == 8
	/* Last: the cases only the 64-bit builds have. */
	RFM_CASE(death_offset_beyond_2gib),
	RFM_CASE(death_next_read_before_release),
#endif
};

RFM_MAIN(cases)
