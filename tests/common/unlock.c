// SPDX-License-Identifier: GPL-2.0
/*
 * unlock: FUTEX_ROBUST_UNLOCK and FUTEX_ROBUST_LIST32, the system call
 * side of the 2026 robust-unlock ABI (mainline v7.2; the series' patch
 * 12 on 6.1).
 *
 * A robust unlock in user space is three steps: point list_op_pending at
 * the lock, release the word, clear list_op_pending. A thread that dies
 * between the last two leaves the exit walk a pointer to a lock it no
 * longer holds, whose memory may be reused by then. With the modifier,
 * FUTEX_WAKE, FUTEX_WAKE_BITSET and FUTEX_UNLOCK_PI do the last two in
 * the kernel. The contract checked here, from mainline's do_futex(),
 * futex_wake(), futex_unlock_pi() and futex_robust_list_clear_pending():
 *
 *  - WAKE and WAKE_BITSET store 0 to the word, then 0 to the slot at
 *    uaddr2, then wake as without the modifier and return the number
 *    woken; UNLOCK_PI clears the slot only if the unlock succeeded;
 *  - the slot is a 64-bit word unless FUTEX_ROBUST_LIST32 makes it a
 *    32-bit one; a 32-bit kernel has no 64-bit slot (-EFAULT; the series
 *    refuses it before the word is touched, mainline after);
 *  - the modifier on any other operation is -ENOSYS; LIST32 alone
 *    changes nothing;
 *  - a store that faults is -EFAULT: a word that cannot be written
 *    leaves the slot as it was, a slot that cannot be written after the
 *    word was released gives up the caller's registered list if it is
 *    that list's list_op_pending of the same width.
 *
 * Every case first checks that the kernel has the modifier: a kernel
 * without it (stock, Debian's) fails every case, one named deviation.
 */
#include "rfm_unlock.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#include <limits.h>
#include <pthread.h>

#define OTHER_TID	0x2bcdef01u	/* an owner that is not the caller */
#define SENTINEL	0x5a5a5a5au	/* memory the kernel must not write */
#define PAGE		4096

/* ---- observations ---- */

static void obs_ret(const char *what, long ret, int err)
{
	if (ret < 0)
		printf("# obs %s=%s\n", what, rfm_errno_name(err));
	else
		printf("# obs %s=%ld\n", what, ret);
}

/* A pointer slot: cleared, still what it was, or something else. */
static const char *slot_state(void *slot, void *was)
{
	return !slot ? "cleared" : slot == was ? "kept" : "changed";
}

/* ---- memory ---- */

static void *page(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The address of a page that was mapped and no longer is. Take it after
 * the case's other mappings: the next mmap() may reuse it.
 */
static void *unmapped_page(void)
{
	void *p = page();

	if (p)
		munmap(p, PAGE);
	return p;
}

/*
 * A registered list whose list_op_pending names @lock, which the caller
 * holds: the moment of a robust unlock. The head is alone on its page,
 * so a case can make the page read-only.
 */
struct held {
	struct robust_list_head *head;
	struct rfm_lock *lock;
};

static int hold(struct held *h)
{
	h->head = page();
	h->lock = page();
	if (!h->head || !h->lock)
		return 0;
	rfm_head_init(h->head);
	h->lock->futex = (uint32_t)rfm_gettid();
	h->head->list_op_pending = &h->lock->link;
	return rfm_set_robust_list(h->head, sizeof(*h->head)) == 0;
}

static struct robust_list_head *registered_head(void)
{
	struct robust_list_head *got = NULL;
	size_t len = 0;

	if (rfm_get_robust_list(0, &got, &len))
		return (void *)-1;
	return got;
}

/*
 * futex(@op) on the held lock's word, its slot the head's list_op_pending;
 * the result is the case's "ret" observation. errno is kept.
 */
static long unlock_held(struct held *h, int op, uint32_t val3)
{
	long ret = rfm_futex_op(&h->lock->futex, op, 1,
				&h->head->list_op_pending, val3);
	int err = errno;

	obs_ret("ret", ret, err);
	errno = err;
	return ret;
}

/* ---- waiters, in their own processes ---- */

struct waiter {
	volatile uint32_t started;
	volatile long ret;
	volatile int err;
};

/* Fork a process that waits on the shared @word (value @val) with @bitset. */
static pid_t start_waiter(uint32_t *word, uint32_t val, uint32_t bitset,
			  struct waiter *w)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* No timeout: the harness kills what a case leaves asleep. */
		w->started = 1;
		w->ret = syscall(SYS_futex, word, FUTEX_WAIT_BITSET, val, NULL,
				 NULL, bitset);
		w->err = errno;
		_exit(0);
	}
	if (pid > 0 && !rfm_wait_sleeping(pid, &w->started))
		return -1;
	return pid;
}

/* Has the waiter returned? It writes ret before it exits. */
static int waiter_done(pid_t pid)
{
	for (int i = 0; i < 200; i++) {
		if (rfm_proc_state(pid) == 'Z')
			return 1;
		usleep(5000);
	}
	return 0;
}

/* ---- waiters on a private word: threads of this process ---- */

struct thread_waiter {
	pthread_t thread;
	uint32_t *word;
	uint32_t val;
	int op;			/* FUTEX_WAIT_PRIVATE or FUTEX_LOCK_PI_PRIVATE */
	volatile uint32_t started;
	volatile pid_t tid;
	volatile long ret;
	volatile int err;
	volatile uint32_t done;
};

static void *thread_waiter_run(void *arg)
{
	struct thread_waiter *t = arg;

	t->tid = rfm_gettid();
	t->started = 1;
	t->ret = syscall(SYS_futex, t->word, t->op, t->val, NULL, NULL, 0);
	t->err = errno;
	t->done = 1;
	return NULL;
}

/* Start a thread that calls futex(@op, @val) on @word; 1 once it sleeps. */
static int thread_waiter_start(struct thread_waiter *t, uint32_t *word,
			       int op, uint32_t val)
{
	memset(t, 0, sizeof(*t));
	t->word = word;
	t->op = op;
	t->val = val;
	if (pthread_create(&t->thread, NULL, thread_waiter_run, t))
		return 0;
	while (!t->tid)
		sched_yield();
	return rfm_wait_sleeping(t->tid, &t->started);
}

/* Has the thread's futex() returned? Up to a second. */
static int thread_waiter_done(struct thread_waiter *t)
{
	for (int i = 0; i < 200 && !t->done; i++)
		usleep(5000);
	return t->done;
}

/* ---- the operations that take the modifier ---- */

static int wake_releases_word_and_slot(void)
{
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_WAKE_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("word", "%#x", h.lock->futex);
	rfm_obs("slot", "%s", slot_state(h.head->list_op_pending, &h.lock->link));
	RFM_CHECK(ret == 0, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0, "word %#x", h.lock->futex);
	RFM_CHECK(h.head->list_op_pending == NULL, "slot %p",
		  (void *)h.head->list_op_pending);
	/* The rest of the head is the list's, not the unlock's. */
	RFM_CHECK(h.head->list.next == &h.head->list, "list.next %p",
		  (void *)h.head->list.next);
	RFM_CHECK(registered_head() == h.head, "list no longer registered");
	return RFM_PASS;
}

/*
 * A shared word, two waiters, nr_wake 1: the word is released, the slot
 * cleared, one waiter woken (the return says 1), the other still asleep.
 */
static int wake_shared_wakes_one(void)
{
	uint32_t *word = rfm_shared(PAGE);
	struct waiter *w = rfm_shared(PAGE);
	struct robust_list_head head;
	uint32_t held;
	pid_t a, b;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(word && w, "no shared memory");
	held = (uint32_t)rfm_gettid() | FUTEX_WAITERS;
	*word = held;
	rfm_head_init(&head);
	head.list_op_pending = (void *)word;
	a = start_waiter(word, held, FUTEX_BITSET_MATCH_ANY, &w[0]);
	b = start_waiter(word, held, FUTEX_BITSET_MATCH_ANY, &w[1]);
	RFM_CHECK(a > 0 && b > 0, "waiters did not start");

	ret = rfm_futex_op(word, FUTEX_WAKE | RFM_ROBUST_UNLOCK_OWN, 1,
			   &head.list_op_pending, 0);
	obs_ret("ret", ret, errno);
	rfm_obs("word", "%#x", *word);
	rfm_obs("slot", "%s", slot_state(head.list_op_pending, word));
	RFM_CHECK(ret == 1, "woke %ld (%s)", ret, rfm_errno_name(errno));
	RFM_CHECK(*word == 0, "word %#x", *word);
	RFM_CHECK(head.list_op_pending == NULL, "slot not cleared");
	RFM_CHECK(waiter_done(a) + waiter_done(b) >= 1, "no waiter returned");
	usleep(20000);
	RFM_CHECK(rfm_proc_state(a) == 'Z' || rfm_proc_state(b) == 'Z', "none woke");
	RFM_CHECK(rfm_proc_state(a) != 'Z' || rfm_proc_state(b) != 'Z',
		  "both woke for nr_wake 1");
	rfm_futex_wake(word, INT_MAX);
	return RFM_PASS;
}

/*
 * WAKE_BITSET: the word is released and the slot cleared whether or not
 * a waiter's bitset matches; only a matching one is woken.
 */
static int bitset_wakes_matching_only(void)
{
	uint32_t *word = rfm_shared(PAGE);
	struct waiter *w = rfm_shared(PAGE);
	struct robust_list_head head;
	uint32_t held;
	pid_t a;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(word && w, "no shared memory");
	held = (uint32_t)rfm_gettid() | FUTEX_WAITERS;
	*word = held;
	rfm_head_init(&head);
	head.list_op_pending = (void *)word;
	a = start_waiter(word, held, 0x1, &w[0]);
	RFM_CHECK(a > 0, "waiter did not start");

	ret = rfm_futex_op(word, FUTEX_WAKE_BITSET | RFM_ROBUST_UNLOCK_OWN, 1,
			   &head.list_op_pending, 0x2);
	obs_ret("ret_other_bits", ret, errno);
	rfm_obs("word", "%#x", *word);
	rfm_obs("slot", "%s", slot_state(head.list_op_pending, word));
	RFM_CHECK(ret == 0, "ret %ld (%s)", ret, rfm_errno_name(errno));
	RFM_CHECK(*word == 0 && head.list_op_pending == NULL,
		  "word %#x slot %p", *word, (void *)head.list_op_pending);
	RFM_CHECK(rfm_proc_state(a) == 'S', "a waiter of other bits woke");

	/* The next unlock of the same lock, with the waiter's bit. */
	*word = held;
	head.list_op_pending = (void *)word;
	ret = rfm_futex_op(word, FUTEX_WAKE_BITSET | RFM_ROBUST_UNLOCK_OWN, 1,
			   &head.list_op_pending, 0x1);
	obs_ret("ret_same_bit", ret, errno);
	RFM_CHECK(ret == 1, "ret %ld (%s)", ret, rfm_errno_name(errno));
	RFM_CHECK(waiter_done(a) && w[0].ret == 0, "waiter: %ld", w[0].ret);
	return RFM_PASS;
}

/* A zero bitset is refused before anything is written. */
static int bitset_zero_changes_nothing(void)
{
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_WAKE_BITSET_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("slot", "%s", slot_state(h.head->list_op_pending, &h.lock->link));
	RFM_CHECK(ret == -1 && errno == EINVAL, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == (uint32_t)rfm_gettid(), "word %#x", h.lock->futex);
	RFM_CHECK(h.head->list_op_pending == &h.lock->link, "slot written");
	return RFM_PASS;
}

static int unlock_pi_releases_and_clears(void)
{
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_UNLOCK_PI_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("word", "%#x", h.lock->futex);
	rfm_obs("slot", "%s", slot_state(h.head->list_op_pending, &h.lock->link));
	RFM_CHECK(ret == 0, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0, "word %#x", h.lock->futex);
	RFM_CHECK(h.head->list_op_pending == NULL, "slot not cleared");
	return RFM_PASS;
}

/* A PI waiter in another process: the lock goes to it, the slot is ours. */
static int pi_waiter_gets_lock_slot_cleared(void)
{
	uint32_t *word = rfm_shared(PAGE);
	struct waiter *w = rfm_shared(PAGE);
	struct robust_list_head head;
	pid_t child;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(word && w, "no shared memory");
	*word = (uint32_t)rfm_gettid();
	rfm_head_init(&head);
	head.list_op_pending = (void *)word;
	child = fork();
	if (child == 0) {
		w->started = 1;
		w->ret = syscall(SYS_futex, word, FUTEX_LOCK_PI, 0, NULL, NULL, 0);
		w->err = errno;
		if (w->ret == 0)
			syscall(SYS_futex, word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0);
		_exit(0);
	}
	RFM_CHECK(child > 0 && rfm_wait_sleeping(child, &w->started),
		  "PI waiter did not block");
	RFM_CHECK(*word & FUTEX_WAITERS, "word %#x without FUTEX_WAITERS", *word);

	ret = rfm_futex_op(word, FUTEX_UNLOCK_PI | RFM_ROBUST_UNLOCK_OWN, 0,
			   &head.list_op_pending, 0);
	obs_ret("ret", ret, errno);
	rfm_obs("slot", "%s", slot_state(head.list_op_pending, word));
	RFM_CHECK(ret == 0, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(head.list_op_pending == NULL, "slot not cleared");
	RFM_CHECK(waiter_done(child), "the waiter did not get the lock");
	rfm_obs("waiter", "%s", w->ret == 0 ? "locked" : rfm_errno_name(w->err));
	RFM_CHECK(w->ret == 0, "waiter's FUTEX_LOCK_PI: %s", rfm_errno_name(w->err));
	return RFM_PASS;
}

/* An unlock that fails leaves the slot: the lock is not ours. */
static int unlock_pi_not_owner_keeps_slot(void)
{
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	h.lock->futex = OTHER_TID;
	ret = unlock_held(&h, FUTEX_UNLOCK_PI_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("slot", "%s", slot_state(h.head->list_op_pending, &h.lock->link));
	RFM_CHECK(ret == -1 && errno == EPERM, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == OTHER_TID, "word %#x", h.lock->futex);
	RFM_CHECK(h.head->list_op_pending == &h.lock->link, "slot written");
	return RFM_PASS;
}

/* Without the modifier uaddr2 means nothing to these operations. */
static int plain_ops_leave_the_slot(void)
{
	static const int ops[] = { FUTEX_WAKE_PRIVATE, FUTEX_WAKE_BITSET_PRIVATE,
				   FUTEX_UNLOCK_PI_PRIVATE };
	struct held h;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	for (size_t i = 0; i < RFM_ARRAY_SIZE(ops); i++) {
		uint32_t tid = (uint32_t)rfm_gettid();
		long ret;

		h.lock->futex = tid;
		ret = rfm_futex_op(&h.lock->futex, ops[i], 1,
				   &h.head->list_op_pending, FUTEX_BITSET_MATCH_ANY);
		RFM_CHECK(ret == 0, "op %#x: ret %ld %s", ops[i], ret,
			  rfm_errno_name(errno));
		/* UNLOCK_PI releases the word; the wakes never touch it. */
		RFM_CHECK(h.lock->futex == (ops[i] == FUTEX_UNLOCK_PI_PRIVATE ? 0 : tid),
			  "op %#x: word %#x", ops[i], h.lock->futex);
		RFM_CHECK(h.head->list_op_pending == &h.lock->link,
			  "op %#x wrote the slot", ops[i]);
	}
	return RFM_PASS;
}

/*
 * A count of 0 wakes one waiter, as FUTEX_WAKE always has on 6.1
 * (futex_wake() counts a waiter before it compares): the modifier does
 * not change what the count means. Mainline's FLAGS_STRICT early return
 * for 0 belongs to futex2 calls, which 6.1 does not have.
 */
static int count_zero_wakes_one(void)
{
	static const int ops[] = { FUTEX_WAKE, FUTEX_WAKE_BITSET };
	uint32_t *word = rfm_shared(PAGE);
	struct waiter *w = rfm_shared(PAGE);
	struct robust_list_head head;
	uint32_t held;
	pid_t pid[2];

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(word && w, "no shared memory");
	held = (uint32_t)rfm_gettid() | FUTEX_WAITERS;
	*word = held;
	pid[0] = start_waiter(word, held, FUTEX_BITSET_MATCH_ANY, &w[0]);
	pid[1] = start_waiter(word, held, FUTEX_BITSET_MATCH_ANY, &w[1]);
	RFM_CHECK(pid[0] > 0 && pid[1] > 0, "waiters did not start");
	rfm_head_init(&head);
	for (size_t i = 0; i < RFM_ARRAY_SIZE(ops); i++) {
		const char *name = i ? "bitset" : "wake";
		long ret;
		int asleep = 0;

		*word = held;
		head.list_op_pending = (void *)word;
		ret = rfm_futex_op(word, ops[i] | RFM_ROBUST_UNLOCK_OWN, 0,
				   &head.list_op_pending, FUTEX_BITSET_MATCH_ANY);
		obs_ret(name, ret, errno);
		RFM_CHECK(ret == 1, "%s, count 0: ret %ld %s", name, ret,
			  rfm_errno_name(errno));
		RFM_CHECK(*word == 0 && head.list_op_pending == NULL,
			  "%s: word %#x slot %p", name, *word,
			  (void *)head.list_op_pending);
		/* A woken waiter is runnable at once, then a zombie. */
		for (int t = 0; t < 200 && (rfm_proc_state(pid[0]) == 'Z') +
		     (rfm_proc_state(pid[1]) == 'Z') <= (int)i; t++)
			usleep(5000);
		for (int k = 0; k < 2; k++)
			asleep += rfm_proc_state(pid[k]) == 'S';
		RFM_CHECK(asleep == 1 - (int)i, "%s: %d waiter(s) still asleep",
			  name, asleep);
	}
	return RFM_PASS;
}

/*
 * FUTEX_PRIVATE_FLAG names the key, with the modifier as without it: a
 * robust unlock of a private word wakes its FUTEX_WAIT_PRIVATE waiter
 * and hands a PI lock to its FUTEX_LOCK_PI_PRIVATE waiter, and without
 * the flag it looks for waiters of a shared word, which a private waiter
 * is not (the word is released and the slot cleared all the same).
 */
static int private_flag_finds_private_waiters(void)
{
	struct thread_waiter t;
	struct held h;
	uint32_t tid = (uint32_t)rfm_gettid();
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));

	h.lock->futex = tid | FUTEX_WAITERS;
	RFM_CHECK(thread_waiter_start(&t, &h.lock->futex, FUTEX_WAIT_PRIVATE,
				      tid | FUTEX_WAITERS), "waiter did not sleep");
	ret = unlock_held(&h, FUTEX_WAKE | RFM_ROBUST_UNLOCK_OWN, 0);
	RFM_CHECK(ret == 0, "shared-key unlock: ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0 && h.head->list_op_pending == NULL,
		  "shared-key unlock: word %#x slot %p", h.lock->futex,
		  (void *)h.head->list_op_pending);
	usleep(20000);
	RFM_CHECK(!t.done, "a shared-key unlock woke a private waiter");

	h.lock->futex = tid | FUTEX_WAITERS;
	h.head->list_op_pending = &h.lock->link;
	ret = rfm_futex_op(&h.lock->futex, FUTEX_WAKE_PRIVATE | RFM_ROBUST_UNLOCK_OWN,
			   1, &h.head->list_op_pending, 0);
	obs_ret("wake_private", ret, errno);
	RFM_CHECK(ret == 1, "private unlock: ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(thread_waiter_done(&t) && t.ret == 0, "waiter: ret %ld %s",
		  t.ret, rfm_errno_name(t.err));
	RFM_CHECK(h.lock->futex == 0 && h.head->list_op_pending == NULL,
		  "private unlock: word %#x slot %p", h.lock->futex,
		  (void *)h.head->list_op_pending);
	pthread_join(t.thread, NULL);

	h.lock->futex = tid;
	h.head->list_op_pending = &h.lock->link;
	RFM_CHECK(thread_waiter_start(&t, &h.lock->futex, FUTEX_LOCK_PI_PRIVATE, 0),
		  "PI waiter did not block");
	RFM_CHECK(h.lock->futex == (tid | FUTEX_WAITERS), "word %#x", h.lock->futex);
	ret = unlock_held(&h, FUTEX_UNLOCK_PI_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	RFM_CHECK(ret == 0, "private PI unlock: ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(thread_waiter_done(&t) && t.ret == 0, "PI waiter: ret %ld %s",
		  t.ret, rfm_errno_name(t.err));
	rfm_obs("pi_owner", "%s", (h.lock->futex & FUTEX_TID_MASK) == (uint32_t)t.tid ?
		"waiter" : "other");
	RFM_CHECK((h.lock->futex & FUTEX_TID_MASK) == (uint32_t)t.tid,
		  "word %#x, the waiter is %d", h.lock->futex, (int)t.tid);
	RFM_CHECK(h.head->list_op_pending == NULL, "slot not cleared");
	return RFM_PASS;
}

/* ---- operand rules ---- */

/*
 * The modifier with any other operation: -ENOSYS, nothing written. The
 * operands are such that an operation that ran anyway would return at
 * once (a waiter's value that does not match, a PI lock already ours).
 */
static int other_ops_enosys(void)
{
	static const struct { const char *name; int op; } ops[] = {
		{ "WAIT", FUTEX_WAIT }, { "FD", 2 }, { "REQUEUE", FUTEX_REQUEUE },
		{ "CMP_REQUEUE", FUTEX_CMP_REQUEUE }, { "WAKE_OP", FUTEX_WAKE_OP },
		{ "LOCK_PI", FUTEX_LOCK_PI }, { "TRYLOCK_PI", FUTEX_TRYLOCK_PI },
		{ "WAIT_BITSET", FUTEX_WAIT_BITSET },
		{ "WAIT_REQUEUE_PI", FUTEX_WAIT_REQUEUE_PI },
		{ "CMP_REQUEUE_PI", FUTEX_CMP_REQUEUE_PI },
		{ "LOCK_PI2", FUTEX_LOCK_PI2 }, { "14", 14 },
		/* CLOCK_REALTIME is for waits: refused before the modifier */
		{ "WAKE|CLOCK_REALTIME", FUTEX_WAKE | FUTEX_CLOCK_REALTIME },
	};
	static const int mods[] = { FUTEX_ROBUST_UNLOCK,
				    FUTEX_ROBUST_UNLOCK | FUTEX_ROBUST_LIST32 };
	uint32_t tid = (uint32_t)rfm_gettid();
	struct timespec zero = { 0, 0 };
	struct held h;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	for (size_t i = 0; i < RFM_ARRAY_SIZE(ops); i++) {
		for (size_t m = 0; m < RFM_ARRAY_SIZE(mods); m++) {
			int op = ops[i].op | mods[m] | FUTEX_PRIVATE_FLAG;
			long ret = syscall(SYS_futex, &h.lock->futex, op, tid + 1,
					   &zero, &h.head->list_op_pending, 0);

			RFM_CHECK(ret == -1 && errno == ENOSYS, "%s|%s: ret %ld %s",
				  ops[i].name, m ? "ROBUST_UNLOCK|LIST32" : "ROBUST_UNLOCK",
				  ret, rfm_errno_name(errno));
			RFM_CHECK(h.lock->futex == tid && h.head->list_op_pending ==
				  &h.lock->link, "%s wrote: word %#x", ops[i].name,
				  h.lock->futex);
		}
	}
	rfm_obs("refused", "%zu", RFM_ARRAY_SIZE(ops) * RFM_ARRAY_SIZE(mods));
	return RFM_PASS;
}

/* FUTEX_ROBUST_LIST32 without FUTEX_ROBUST_UNLOCK: the plain operation. */
static int list32_alone_is_plain(void)
{
	struct held h;
	uint32_t tid;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	tid = h.lock->futex;
	ret = rfm_futex_op(&h.lock->futex, FUTEX_WAKE_PRIVATE | FUTEX_ROBUST_LIST32,
			   1, &h.head->list_op_pending, 0);
	obs_ret("wake", ret, errno);
	RFM_CHECK(ret == 0, "WAKE|LIST32: ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == tid && h.head->list_op_pending == &h.lock->link,
		  "WAKE|LIST32 wrote: word %#x", h.lock->futex);
	ret = syscall(SYS_futex, &h.lock->futex,
		      FUTEX_WAIT_PRIVATE | FUTEX_ROBUST_LIST32, tid + 1, NULL, NULL, 0);
	obs_ret("wait_other_value", ret, errno);
	RFM_CHECK(ret == -1 && errno == EAGAIN, "WAIT|LIST32: ret %ld %s", ret,
		  rfm_errno_name(errno));
	return RFM_PASS;
}

/* ---- the slot's width ---- */

/*
 * Release *@word into a slot at the first of three 32-bit words, 8-byte
 * aligned. Returns the call's result; the words say how many bytes were
 * cleared.
 */
static long unlock_into(uint32_t *word, uint32_t slot[3], int list32, int *err)
{
	long ret;

	*word = (uint32_t)rfm_gettid();
	slot[0] = slot[1] = slot[2] = SENTINEL;
	ret = rfm_futex_op(word, FUTEX_WAKE_PRIVATE | FUTEX_ROBUST_UNLOCK |
			   (list32 ? FUTEX_ROBUST_LIST32 : 0), 1, slot, 0);
	*err = errno;
	return ret;
}

static const char *cleared(const uint32_t slot[3])
{
	if (slot[2] != SENTINEL)
		return "past-8-bytes";
	if (!slot[0] && !slot[1])
		return "8-bytes";
	if (!slot[0] && slot[1] == SENTINEL)
		return "4-bytes";
	return slot[0] == SENTINEL && slot[1] == SENTINEL ? "none" : "other";
}

/* LIST32: four bytes, on every ABI and kernel. */
static int slot_list32_is_4_bytes(void)
{
	uint64_t buf[2];
	uint32_t *slot = (uint32_t *)buf, word;
	long ret;
	int err;

	RFM_REQUIRE_ROBUST_UNLOCK();
	ret = unlock_into(&word, slot, 1, &err);
	obs_ret("ret", ret, err);
	rfm_obs("cleared", "%s", cleared(slot));
	RFM_CHECK(ret == 0, "ret %ld %s", ret, rfm_errno_name(err));
	RFM_CHECK(word == 0, "word %#x", word);
	RFM_CHECK(!strcmp(cleared(slot), "4-bytes"), "cleared %s", cleared(slot));
	return RFM_PASS;
}

/*
 * Without LIST32: eight bytes on a 64-bit kernel, whatever the caller's
 * ABI (a 32-bit task that leaves LIST32 out loses the 4 bytes after its
 * slot); a 32-bit kernel has no 64-bit slot and refuses, the lock still
 * held.
 */
static int slot_list64_is_8_bytes(void)
{
	uint64_t buf[2];
	uint32_t *slot = (uint32_t *)buf, word;
	int k64 = rfm_kernel_64bit(), err;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(k64 >= 0, "uname: %s", strerror(errno));
	ret = unlock_into(&word, slot, 0, &err);
	printf("# obs ret=%s [target: a 32-bit kernel has no 64-bit slot]\n",
	       ret < 0 ? rfm_errno_name(err) : ret ? "?" : "0");
	printf("# obs cleared=%s [target: a 32-bit kernel has no 64-bit slot]\n",
	       cleared(slot));
	printf("# obs word=%s [target: a 32-bit kernel has no 64-bit slot]\n",
	       word ? "held" : "released");
	if (!k64) {
		RFM_CHECK(ret == -1 && err == EFAULT, "ret %ld %s", ret,
			  rfm_errno_name(err));
		RFM_CHECK(!strcmp(cleared(slot), "none"), "cleared %s", cleared(slot));
		RFM_CHECK(word == (uint32_t)rfm_gettid(), "word %#x", word);
		return RFM_PASS;
	}
	RFM_CHECK(ret == 0, "ret %ld %s", ret, rfm_errno_name(err));
	RFM_CHECK(word == 0, "word %#x", word);
	RFM_CHECK(!strcmp(cleared(slot), "8-bytes"), "cleared %s", cleared(slot));
	return RFM_PASS;
}

/* ---- faults ---- */

/*
 * The word cannot be written: -EFAULT, and the slot still names the lock.
 * Private, so that the store is what faults: a shared futex's key already
 * refuses a read-only anonymous page (get_futex_key()), before anything.
 */
static int word_read_only_keeps_slot(void)
{
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	RFM_CHECK(!mprotect(h.lock, PAGE, PROT_READ), "mprotect: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_WAKE_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("slot", "%s", slot_state(h.head->list_op_pending, &h.lock->link));
	RFM_CHECK(ret == -1 && errno == EFAULT, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == (uint32_t)rfm_gettid(), "word %#x", h.lock->futex);
	RFM_CHECK(h.head->list_op_pending == &h.lock->link, "slot cleared");
	RFM_CHECK(registered_head() == h.head, "list given up");
	return RFM_PASS;
}

/* A word that is no futex word: refused before anything is written. */
static int word_bad_address_keeps_slot(void)
{
	struct held h;
	uint32_t *gone;
	long misaligned, unmapped;
	int err_mis, err_unm;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	gone = unmapped_page();
	RFM_CHECK(gone, "set up: %s", strerror(errno));
	misaligned = rfm_robust_unlock_wake((uint32_t *)((char *)&h.lock->futex + 1),
					    &h.head->list_op_pending, 1);
	err_mis = errno;
	unmapped = rfm_robust_unlock_wake(gone, &h.head->list_op_pending, 1);
	err_unm = errno;
	obs_ret("misaligned", misaligned, err_mis);
	obs_ret("unmapped", unmapped, err_unm);
	RFM_CHECK(misaligned == -1 && err_mis == EINVAL, "misaligned: %s",
		  rfm_errno_name(err_mis));
	RFM_CHECK(unmapped == -1 && err_unm == EFAULT, "unmapped: %s",
		  rfm_errno_name(err_unm));
	RFM_CHECK(h.head->list_op_pending == &h.lock->link, "slot cleared");
	RFM_CHECK(h.lock->futex == (uint32_t)rfm_gettid(), "word %#x", h.lock->futex);
	return RFM_PASS;
}

/*
 * A slot that cannot be written, and is not the registered one: -EFAULT
 * after the word was released; the list stays registered.
 */
static int slot_bad_address_efault(void)
{
	static const char *const names[] = { "unmapped", "read_only", "null" };
	void *slots[3] = { NULL, NULL, NULL };
	struct held h;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	slots[1] = page();
	slots[0] = unmapped_page();
	RFM_CHECK(slots[0] && slots[1], "set up: %s", strerror(errno));
	RFM_CHECK(!mprotect(slots[1], PAGE, PROT_READ), "mprotect: %s", strerror(errno));
	for (int i = 0; i < 3; i++) {
		long ret;

		h.lock->futex = (uint32_t)rfm_gettid();
		ret = rfm_robust_unlock_wake(&h.lock->futex, slots[i], 1);
		obs_ret(names[i], ret, errno);
		RFM_CHECK(ret == -1 && errno == EFAULT, "%s: ret %ld %s", names[i],
			  ret, rfm_errno_name(errno));
		RFM_CHECK(h.lock->futex == 0, "%s: word %#x", names[i], h.lock->futex);
	}
	RFM_CHECK(registered_head() == h.head, "list given up");
	RFM_CHECK(h.head->list_op_pending == &h.lock->link, "registered slot written");
	return RFM_PASS;
}

/*
 * A store that faults wakes nobody: the call fails before it looks for
 * waiters, whichever store it was. The word's store (a private word on
 * a read-only page, a thread waiting on it) leaves the lock held and its
 * waiter queued; the slot's (a shared word, its waiter in another
 * process) leaves the word released and the waiter queued all the same.
 * A plain FUTEX_WAKE afterwards finds each waiter still there.
 */
static int fault_wakes_nobody(void)
{
	uint32_t *word = rfm_shared(PAGE);
	struct waiter *w = rfm_shared(PAGE);
	uint32_t tid = (uint32_t)rfm_gettid();
	struct thread_waiter t;
	struct held h;
	void *gone;
	pid_t pid;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(word && w && hold(&h), "set up: %s", strerror(errno));

	h.lock->futex = tid | FUTEX_WAITERS;
	RFM_CHECK(!mprotect(h.lock, PAGE, PROT_READ), "mprotect: %s", strerror(errno));
	RFM_CHECK(thread_waiter_start(&t, &h.lock->futex, FUTEX_WAIT_PRIVATE,
				      tid | FUTEX_WAITERS), "waiter did not sleep");
	ret = unlock_held(&h, FUTEX_WAKE_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	RFM_CHECK(ret == -1 && errno == EFAULT, "read-only word: ret %ld %s", ret,
		  rfm_errno_name(errno));
	usleep(20000);
	RFM_CHECK(!t.done, "read-only word: the waiter was woken");
	ret = syscall(SYS_futex, &h.lock->futex, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	obs_ret("word_fault_then_wake", ret, errno);
	RFM_CHECK(ret == 1, "read-only word: %ld waiter(s) left queued", ret);

	*word = tid | FUTEX_WAITERS;
	pid = start_waiter(word, tid | FUTEX_WAITERS, FUTEX_BITSET_MATCH_ANY, &w[0]);
	RFM_CHECK(pid > 0, "waiter did not start");
	gone = unmapped_page();
	RFM_CHECK(gone, "set up: %s", strerror(errno));
	ret = rfm_robust_unlock_wake(word, gone, 1);
	obs_ret("slot_fault", ret, errno);
	RFM_CHECK(ret == -1 && errno == EFAULT, "unmapped slot: ret %ld %s", ret,
		  rfm_errno_name(errno));
	RFM_CHECK(*word == 0, "unmapped slot: word %#x", *word);
	usleep(20000);
	RFM_CHECK(rfm_proc_state(pid) == 'S', "unmapped slot: the waiter was woken");
	ret = rfm_futex_wake(word, 1);
	obs_ret("slot_fault_then_wake", ret, errno);
	RFM_CHECK(ret == 1, "unmapped slot: %ld waiter(s) left queued", ret);
	return RFM_PASS;
}

#if RFM_HAS_KERNEL_ADDRESS
/*
 * Both addresses are user addresses (rfm_kernel_address(): a kernel one
 * an unchecked store would write, or a compat task's top page). The word
 * is refused before anything is written, the slot after the word was
 * released, each with -EFAULT.
 */
static int kernel_addresses_efault(void)
{
	void *kaddr = rfm_kernel_address();
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(kaddr && hold(&h), "set up: %s", strerror(errno));

	ret = rfm_robust_unlock_wake(kaddr, &h.head->list_op_pending, 1);
	obs_ret("word", ret, errno);
	RFM_CHECK(ret == -1 && errno == EFAULT, "word at %p: ret %ld %s", kaddr,
		  ret, rfm_errno_name(errno));
	RFM_CHECK(h.head->list_op_pending == &h.lock->link, "slot written");

	ret = rfm_robust_unlock_wake(&h.lock->futex, kaddr, 1);
	obs_ret("slot", ret, errno);
	RFM_CHECK(ret == -1 && errno == EFAULT, "slot at %p: ret %ld %s", kaddr,
		  ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0, "word %#x", h.lock->futex);
	RFM_CHECK(registered_head() == h.head, "list given up");
	return RFM_PASS;
}
#endif

/*
 * No list registered at all: a slot that cannot be written is -EFAULT
 * after the word was released, and there is nothing to give up.
 */
static int slot_fault_without_a_list(void)
{
	uint32_t word = (uint32_t)rfm_gettid();
	void *gone = unmapped_page();
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(gone, "set up: %s", strerror(errno));
	RFM_CHECK(rfm_set_robust_list(NULL, sizeof(struct robust_list_head)) == 0,
		  "set_robust_list(NULL): %s", rfm_errno_name(errno));
	ret = rfm_robust_unlock_wake(&word, gone, 1);
	obs_ret("ret", ret, errno);
	RFM_CHECK(ret == -1 && errno == EFAULT, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(word == 0, "word %#x", word);
	RFM_CHECK(registered_head() == NULL, "a list appeared");
	return RFM_PASS;
}

/*
 * The registered head's own slot cannot be written: the kernel gives the
 * list up, so that the exit walk cannot follow the stale slot to a lock
 * that is free (and perhaps reused) by then.
 */
static int registered_slot_fault_gives_up_list(void)
{
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	RFM_CHECK(!mprotect(h.head, PAGE, PROT_READ), "mprotect: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_WAKE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("registered", "%s", registered_head() ? "kept" : "given-up");
	RFM_CHECK(ret == -1 && errno == EFAULT, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0, "word %#x", h.lock->futex);
	RFM_CHECK(registered_head() == NULL, "list still registered");
	return RFM_PASS;
}

/*
 * FUTEX_UNLOCK_PI: the unlock succeeds, then the slot cannot be written:
 * -EFAULT, the lock released all the same (the unlock is not undone),
 * and, for the registered head's own slot, the list given up as for the
 * wakes.
 */
static int unlock_pi_slot_fault(void)
{
	uint32_t tid = (uint32_t)rfm_gettid();
	struct held h;
	void *gone;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	gone = unmapped_page();
	RFM_CHECK(gone, "set up: %s", strerror(errno));
	ret = rfm_futex_op(&h.lock->futex, FUTEX_UNLOCK_PI_PRIVATE | RFM_ROBUST_UNLOCK_OWN,
			   0, gone, 0);
	obs_ret("unmapped_slot", ret, errno);
	RFM_CHECK(ret == -1 && errno == EFAULT, "unmapped slot: ret %ld %s", ret,
		  rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0, "unmapped slot: word %#x", h.lock->futex);
	RFM_CHECK(registered_head() == h.head, "unmapped slot: list given up");

	h.lock->futex = tid;
	RFM_CHECK(!mprotect(h.head, PAGE, PROT_READ), "mprotect: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_UNLOCK_PI_PRIVATE | RFM_ROBUST_UNLOCK_OWN, 0);
	rfm_obs("registered", "%s", registered_head() ? "kept" : "given-up");
	RFM_CHECK(ret == -1 && errno == EFAULT, "registered slot: ret %ld %s", ret,
		  rfm_errno_name(errno));
	RFM_CHECK(h.lock->futex == 0, "registered slot: word %#x", h.lock->futex);
	RFM_CHECK(registered_head() == NULL, "registered slot: list still registered");
	return RFM_PASS;
}

/*
 * A list given up is not walked: the owner holds a listed lock, gives
 * its list up through a robust unlock of another lock whose slot is the
 * head's own, unwritable, and exits. The listed lock keeps its TID.
 */
struct given_up {
	struct robust_list_head head;	/* alone on its page */
	char pad[PAGE - sizeof(struct robust_list_head)];
	struct rfm_lock listed, other;
	volatile long ret;
	volatile int err;
	volatile uint32_t tid;
};

static int owner_gives_up_and_exits(void *arg)
{
	struct given_up *g = arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	g->tid = tid;
	rfm_head_init(&g->head);
	g->listed.futex = tid;
	rfm_list_add(&g->head, &g->listed);
	g->other.futex = tid;
	g->head.list_op_pending = &g->other.link;
	if (rfm_set_robust_list(&g->head, sizeof(g->head)) ||
	    mprotect(&g->head, PAGE, PROT_READ))
		return 1;
	g->ret = rfm_robust_unlock_wake(&g->other.futex, &g->head.list_op_pending, 1);
	g->err = errno;
	return registered_head() == NULL ? 0 : 2;
}

static int given_up_list_not_walked(void)
{
	struct given_up *g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(g != MAP_FAILED, "mmap: %s", strerror(errno));
	status = rfm_run_child(owner_gives_up_and_exits, g);
	obs_ret("unlock", g->ret, g->err);
	rfm_obs("listed", "%s", g->listed.futex == g->tid ? "held" :
		g->listed.futex & FUTEX_OWNER_DIED ? "owner-died" : "other");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner %#x (2: the list was not given up)", status);
	RFM_CHECK(g->ret == -1 && g->err == EFAULT, "the unlock: ret %ld %s", g->ret,
		  rfm_errno_name(g->err));
	RFM_CHECK(g->other.futex == 0, "the unlocked word %#x", g->other.futex);
	RFM_CHECK(g->listed.futex == g->tid, "listed word %#x: the given-up list was "
		  "walked", g->listed.futex);
	return RFM_PASS;
}

/*
 * The same slot named with the other width is not the registered slot
 * of that width (a 64-bit slot for a 32-bit list, a 32-bit one for a
 * 64-bit list): the list stays. A 32-bit kernel refuses the 64-bit slot
 * before it writes anything.
 */
static int registered_slot_other_width_keeps_list(void)
{
	int other = RFM_OWN_SLOT ? FUTEX_ROBUST_UNLOCK :
				   FUTEX_ROBUST_UNLOCK | FUTEX_ROBUST_LIST32;
	int k64 = rfm_kernel_64bit();
	struct held h;
	long ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(hold(&h), "set up: %s", strerror(errno));
	RFM_CHECK(!mprotect(h.head, PAGE, PROT_READ), "mprotect: %s", strerror(errno));
	ret = unlock_held(&h, FUTEX_WAKE_PRIVATE | other, 0);
	rfm_obs("registered", "%s", registered_head() ? "kept" : "given-up");
	printf("# obs word=%s [target: a 32-bit kernel refuses a 64-bit slot first]\n",
	       h.lock->futex ? "held" : "released");
	RFM_CHECK(ret == -1 && errno == EFAULT, "ret %ld %s", ret, rfm_errno_name(errno));
	RFM_CHECK(registered_head() == h.head, "list given up");
	RFM_CHECK(h.lock->futex == (RFM_OWN_SLOT && !k64 ? (uint32_t)rfm_gettid() : 0),
		  "word %#x", h.lock->futex);
	return RFM_PASS;
}

/* ---- what it is for ---- */

/*
 * The point of the ABI: after a robust unlock the exit walk no longer
 * finds the lock. The owner releases it with the modifier, then the
 * memory is "reused" with a value equal to the owner's TID (here: the
 * owner writes it back, outside any lock operation), and the owner
 * exits. The word must keep that value: no FUTEX_OWNER_DIED in memory
 * that is no longer the dead thread's lock.
 */
struct reuse {
	struct robust_list_head head;
	struct rfm_lock lock;
	volatile long ret;
};

static int owner_unlocks_then_exits(void *arg)
{
	struct reuse *r = arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	rfm_head_init(&r->head);
	r->lock.futex = tid;
	r->head.list_op_pending = &r->lock.link;
	if (rfm_set_robust_list(&r->head, sizeof(r->head)))
		return 1;
	r->ret = rfm_robust_unlock_wake(&r->lock.futex, &r->head.list_op_pending, 1);
	r->lock.futex = tid;	/* the memory, reused */
	return 0;
}

static int exit_after_unlock_spares_reused_word(void)
{
	struct reuse *r = rfm_shared(PAGE);
	int status;

	RFM_REQUIRE_ROBUST_UNLOCK();
	RFM_CHECK(r, "no shared memory");
	status = rfm_run_child(owner_unlocks_then_exits, r);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	obs_ret("unlock", r->ret, 0);
	rfm_obs("word", "%s", r->lock.futex & FUTEX_OWNER_DIED ? "owner-died" : "untouched");
	RFM_CHECK(r->ret == 0, "the owner's unlock failed");
	RFM_CHECK(!(r->lock.futex & FUTEX_OWNER_DIED), "word %#x: the walk wrote it",
		  r->lock.futex);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(wake_releases_word_and_slot),
	RFM_CASE(wake_shared_wakes_one),
	RFM_CASE(bitset_wakes_matching_only),
	RFM_CASE(bitset_zero_changes_nothing),
	RFM_CASE(unlock_pi_releases_and_clears),
	RFM_CASE(pi_waiter_gets_lock_slot_cleared),
	RFM_CASE(unlock_pi_not_owner_keeps_slot),
	RFM_CASE(plain_ops_leave_the_slot),
	RFM_CASE(count_zero_wakes_one),
	RFM_CASE(private_flag_finds_private_waiters),
	RFM_CASE(other_ops_enosys),
	RFM_CASE(list32_alone_is_plain),
	RFM_CASE(slot_list32_is_4_bytes),
	RFM_CASE(slot_list64_is_8_bytes),
	RFM_CASE(word_read_only_keeps_slot),
	RFM_CASE(word_bad_address_keeps_slot),
	RFM_CASE(slot_bad_address_efault),
	RFM_CASE(fault_wakes_nobody),
	RFM_CASE(slot_fault_without_a_list),
#if RFM_HAS_KERNEL_ADDRESS
	RFM_CASE(kernel_addresses_efault),
#endif
	RFM_CASE(registered_slot_fault_gives_up_list),
	RFM_CASE(registered_slot_other_width_keeps_list),
	RFM_CASE(unlock_pi_slot_fault),
	RFM_CASE(given_up_list_not_walked),
	RFM_CASE(exit_after_unlock_spares_reused_word),
};

RFM_MAIN(cases)
