// SPDX-License-Identifier: GPL-2.0
/*
 * robust_fuzz: random robust lists, checked against a model of the walk.
 *
 * Each iteration forks an owner that builds a robust list from a seeded
 * PRNG in a shared arena (two pages: one it can write, one it makes
 * read-only for itself) and dies by a random means. The links may point
 * anywhere: to real locks, back into the list (cycles of any length), at
 * the head, into an unmapped page, at a misaligned address, at a kernel
 * address; links carry random PI bits; futex words hold the owner's TID
 * (with or without FUTEX_WAITERS), another TID or 0; futex_offset and
 * list_op_pending are random too.
 *
 * Before the owner dies the parent runs a model of the kernel's walk over
 * a copy of the arena (the contract: which words become OWNER_DIED, where
 * the walk must stop, which words get a wake-up) and afterwards compares
 * the whole arena with the model byte for byte: a lock not released, or a
 * write anywhere else (guard words, read-only words, words of other
 * owners), is a failure, printed with its seed and the list. On some
 * iterations a waiter also sleeps on a word the walk reaches (or on
 * another one): it must be woken exactly when the model wakes that word.
 *
 * Kernel command line: rfm.fuzz_seed=N rfm.fuzz_iterations=N
 * rfm.fuzz_seconds=N. The same seed gives the same lists on every target.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <pthread.h>

#define PAGE		4096
#define ARENA		(2 * PAGE)	/* page 0 read-write, page 1 read-only */
#define SLOTS		24		/* link slots in page 0 */
#define RO_SLOTS	8		/* link slots in page 1 */
#define MAX_LEN		40		/* links built per list */
#define LIMIT		ROBUST_LIST_LIMIT
#define FUZZ_SECONDS_KEY	"rfm.fuzz_seconds="
#define FUZZ_SECONDS	60		/* without FUZZ_SECONDS_KEY */

typedef uintptr_t uptr;

/* ---- a PRNG with a published algorithm: splitmix64 ---- */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

/* ---- the arena: what the owner builds and the parent checks ---- */
static unsigned char *arena;		/* ARENA bytes, MAP_SHARED */
static unsigned char *hole;		/* a page nobody may access */
struct control {
	volatile uint32_t ready, go, tid, waiting;
};
static struct control *ctl;

static struct robust_list_head *head_of(void)
{
	return (struct robust_list_head *)arena;
}

/* Link slot @i: page 0 after the head, or page 1 (read-only) for the rest. */
static uptr slot(unsigned int i)
{
	if (i < SLOTS)
		return (uptr)arena + 64 + i * 64;
	return (uptr)arena + PAGE + (i - SLOTS) * 64;
}

/* Somewhere a link may point. */
static uptr random_target(void)
{
	unsigned int r = below(100);

	if (r < 70)
		return slot(below(SLOTS + RO_SLOTS));
	if (r < 80)
		return (uptr)&head_of()->list;
	if (r < 85)
		return (uptr)hole + 8 * below(PAGE / 8);
	if (r < 92)
		return slot(below(SLOTS)) + 1 + below(3);	/* misaligned */
	if (r < 96)
		return sizeof(long) == 8 ? (uptr)0xffff888000001000ULL : (uptr)0xc0001000UL;
	return 0;
}

/* A futex word value for the owner @tid. */
static uint32_t random_word(uint32_t tid)
{
	switch (below(6)) {
	case 0: case 1: return tid;
	case 2: return tid | FUTEX_WAITERS;
	case 3: return 0;
	case 4: return (uint32_t)rnd() & (FUTEX_TID_MASK | FUTEX_WAITERS);
	default: return tid | FUTEX_OWNER_DIED;	/* a recursive death */
	}
}

/*
 * The owner: fill the arena from the PRNG; runs in the dying task. Every
 * pointer-sized link in a slot comes from random_target(), so the walk can
 * only ever reach addresses whose fate the model knows (a garbage pointer
 * could hit memory the owner happens to have mapped).
 */
static void build_list(uint32_t tid)
{
	struct robust_list_head *h = head_of();
	unsigned int len = below(MAX_LEN);
	uptr prev = (uptr)&h->list;

	for (unsigned int i = 0; i < SLOTS + RO_SLOTS; i++) {
		uptr link = random_target() | (below(8) == 0);

		memcpy((void *)slot(i), &link, sizeof(link));
		for (unsigned int w = sizeof(uptr) / 4; w < 16; w++)
			((uint32_t *)slot(i))[w] = random_word(tid);
	}
	/* A chain of random links from the head, ending back at it. */
	for (unsigned int i = 0; i <= len; i++) {
		uptr next = i == len ? (uptr)&h->list : random_target();

		if (below(8) == 0)
			next |= 1;	/* PI */
		if (prev >= (uptr)arena && prev + sizeof(uptr) <= (uptr)arena + ARENA &&
		    prev % sizeof(uptr) == 0)
			memcpy((void *)prev, &next, sizeof(next));
		prev = next & ~(uptr)1;
		if (below(4) == 0)	/* jump elsewhere: cycles, shared tails */
			prev = slot(below(SLOTS + RO_SLOTS));
	}
	/*
	 * Multiples of 4, negative ones too: a misaligned entry stays
	 * misaligned, so its (unknowable) next link is never followed.
	 */
	switch (below(4)) {
	case 0: h->futex_offset = sizeof(uptr); break;
	case 1: h->futex_offset = 4 * (long)below(15) - 8; break;
	case 2: h->futex_offset = 4 * (long)below(16) - 32; break;
	default: h->futex_offset = 8; break;
	}
	h->list_op_pending = below(3) ? NULL :
		(struct robust_list *)(random_target() | (below(8) == 0));
}

/* ---- the model: the kernel's walk, over a copy of the arena ---- */
#define MAX_VISITS	(MAX_LEN + 8)	/* words a walk can reach, and more */

struct model {
	unsigned char mem[ARENA];
	uint32_t tid;
	unsigned int handled, stopped;
	unsigned int visits;
	uptr visited[MAX_VISITS];	/* words handed to model_death() */
	unsigned int woken[MAX_VISITS];	/* wake-ups on each of them */
};

/* Remember a word the walk looked at; count a wake-up on it if @wake. */
static void model_visit(struct model *m, uptr uaddr, int wake)
{
	unsigned int i;

	for (i = 0; i < m->visits && m->visited[i] != uaddr; i++)
		;
	if (i == m->visits) {
		if (m->visits == MAX_VISITS)
			return;
		m->visited[m->visits] = uaddr;
		m->woken[m->visits++] = 0;
	}
	m->woken[i] += wake;
}

static unsigned int model_wakes(const struct model *m, uptr uaddr)
{
	for (unsigned int i = 0; i < m->visits; i++)
		if (m->visited[i] == uaddr)
			return m->woken[i];
	return 0;
}

static int readable(uptr a, size_t n)
{
	return a >= (uptr)arena && a + n >= a && a + n <= (uptr)arena + ARENA;
}

static int writable(uptr a, size_t n)
{
	return readable(a, n) && a + n <= (uptr)arena + PAGE;
}

static int fetch(struct model *m, uptr at, uptr *entry, int *pi)
{
	uptr v;

	if (!readable(at, sizeof(v)))
		return -1;
	memcpy(&v, m->mem + (at - (uptr)arena), sizeof(v));
	*entry = v & ~(uptr)1;
	*pi = v & 1;
	return 0;
}

static int trace;	/* print the model's walk (one seed, for a report) */

static int model_death(struct model *m, uptr uaddr, int pi, int pending_op)
{
	uint32_t uval, owner;

	if (trace)
		rfm_diag("  model: %s word %p%s", pending_op ? "pending" : "entry",
			 (void *)uaddr, pi ? " (PI)" : "");
	if (uaddr % 4)
		return -1;
	if (!readable(uaddr, 4))
		return -1;
	memcpy(&uval, m->mem + (uaddr - (uptr)arena), 4);
	owner = uval & FUTEX_TID_MASK;
	if (owner != m->tid) {
		/* The pending-op rule: pass on a wake-up the owner may have taken. */
		model_visit(m, uaddr, pending_op && !pi &&
			    (!owner || !(uval & FUTEX_WAITERS)));
		return 0;
	}
	if (!writable(uaddr, 4)) {
		model_visit(m, uaddr, 0);
		return -1;	/* the cmpxchg faults and cannot be fixed */
	}
	model_visit(m, uaddr, !pi && (uval & FUTEX_WAITERS));
	uval = (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
	memcpy(m->mem + (uaddr - (uptr)arena), &uval, 4);
	m->handled++;
	return 0;
}

static void model_walk(struct model *m)
{
	struct robust_list_head *h = head_of();
	uptr entry, next = 0, pending, list = (uptr)&h->list;
	int pi, next_pi, pending_pi, rc;
	unsigned int limit = LIMIT;
	long offset;

	if (fetch(m, (uptr)&h->list.next, &entry, &pi))
		return;
	if (trace)
		rfm_diag("  model: head %p first %p", (void *)h, (void *)entry);
	memcpy(&offset, m->mem + ((uptr)&h->futex_offset - (uptr)arena), sizeof(offset));
	if (fetch(m, (uptr)&h->list_op_pending, &pending, &pending_pi))
		return;
	while (entry != list) {
		rc = fetch(m, entry, &next, &next_pi);
		if (trace)
			rfm_diag("  model: entry %p next %p rc %d", (void *)entry,
				 (void *)next, rc);
		if (entry != pending && model_death(m, entry + offset, pi, 0)) {
			m->stopped = 1;
			return;
		}
		if (rc) {
			m->stopped = 1;
			return;
		}
		entry = next;
		pi = next_pi;
		if (!--limit)
			break;
	}
	if (pending)
		model_death(m, pending + offset, pending_pi, 1);
}

/* ---- one iteration ---- */
enum death { BY_EXIT, BY_SIGKILL, BY_SIGSEGV, BY_THREAD_EXIT_GROUP, DEATHS };
static const char *const death_name[] = { "exit", "SIGKILL", "SIGSEGV",
					   "exit_group-from-another-thread" };

static void *owner_thread(void *arg)
{
	(void)arg;
	ctl->tid = (uint32_t)rfm_gettid();
	build_list(ctl->tid);
	rfm_set_robust_list(head_of(), sizeof(struct robust_list_head));
	mprotect(arena + PAGE, PAGE, PROT_READ);
	ctl->ready = 1;
	for (;;)
		pause();
	return NULL;
}

static void owner(enum death how)
{
	pthread_t t;

	if (how == BY_THREAD_EXIT_GROUP) {
		if (pthread_create(&t, NULL, owner_thread, NULL))
			_exit(3);
		while (!ctl->go)
			sched_yield();
		_exit(0);	/* the whole group dies; the thread's list is walked */
	}
	ctl->tid = (uint32_t)rfm_gettid();
	build_list(ctl->tid);
	if (rfm_set_robust_list(head_of(), sizeof(struct robust_list_head)))
		_exit(2);
	mprotect(arena + PAGE, PAGE, PROT_READ);
	ctl->ready = 1;
	while (!ctl->go)
		sched_yield();
	if (how == BY_SIGSEGV)
		*(volatile int *)hole = 1;
	if (how == BY_EXIT)
		_exit(0);
	for (;;)
		pause();
}

static void print_list(const struct model *before)
{
	const struct robust_list_head *h = (const void *)before->mem;

	rfm_diag("arena at %p, owner tid %u, futex_offset %ld, list_op_pending %p",
		 (void *)arena, before->tid, h->futex_offset, (void *)h->list_op_pending);
	for (unsigned int i = 0; i < SLOTS + RO_SLOTS; i++) {
		const unsigned char *p = before->mem + (slot(i) - (uptr)arena);
		uptr link;

		memcpy(&link, p, sizeof(link));
		rfm_diag("slot %2u %p%s: link %#lx words %08x %08x %08x", i, (void *)slot(i),
			 i >= SLOTS ? " (ro)" : "", (unsigned long)link,
			 ((const uint32_t *)p)[1], ((const uint32_t *)p)[2],
			 ((const uint32_t *)p)[3]);
	}
}

struct totals {
	unsigned long iterations, deaths, checks, released, stopped, failures;
	unsigned long wake_checks;
};

/*
 * The word a waiter sleeps on in this iteration, or 0 for none: on one
 * iteration in four, a word the walk reaches (or, now and then, any
 * aligned word of the arena), which the waiter can wait on.
 */
static uptr watched_word(const struct model *expect)
{
	uptr w;

	if (below(4))
		return 0;
	if (expect->visits && below(4))
		w = expect->visited[below(expect->visits)];
	else
		w = (uptr)arena + 4 * below(ARENA / 4);
	return w % 4 == 0 && readable(w, 4) ? w : 0;
}

/* A waiter asleep on @w; exits when woken (or, never, after a minute). */
static pid_t start_waiter(uptr w)
{
	uint32_t seen = *(volatile uint32_t *)w;
	pid_t pid;

	ctl->waiting = 0;
	pid = fork();
	if (pid == 0) {
		ctl->waiting = 1;
		rfm_futex_wait((uint32_t *)w, seen, 60000);
		_exit(0);
	}
	if (pid > 0 && !rfm_wait_sleeping(pid, &ctl->waiting)) {
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static int iteration(uint64_t seed, struct totals *t)
{
	static struct model before, expect;
	enum death how;
	pid_t pid, waiter;
	uptr watched;
	int status;

	rng_state = seed;
	how = (enum death)below(DEATHS);
	memset(arena, 0xa5, ARENA);
	memset((void *)ctl, 0, sizeof(*ctl));
	pid = fork();
	if (pid == 0) {
		owner(how);
		_exit(4);
	}
	while (!ctl->ready) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			rfm_diag("seed %#llx: the owner died before its list was ready (%#x)",
				 (unsigned long long)seed, status);
			t->failures++;
			return -1;
		}
		sched_yield();
	}
	memcpy(before.mem, arena, ARENA);
	before.tid = ctl->tid;
	expect = before;
	expect.handled = expect.stopped = expect.visits = 0;
	model_walk(&expect);
	watched = watched_word(&expect);
	waiter = watched ? start_waiter(watched) : 0;

	ctl->go = 1;
	if (how == BY_SIGKILL)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/*
	 * The walk, and its wake-ups, happen in the owner's exit, before it
	 * can be reaped: a waiter still asleep now was not woken.
	 */
	if (waiter > 0) {
		int woken = rfm_proc_state(waiter) != 'S';
		int want = model_wakes(&expect, watched) > 0;

		kill(waiter, SIGKILL);
		waitpid(waiter, NULL, 0);
		t->wake_checks++;
		if (woken != want) {
			t->failures++;
			rfm_diag("FAIL seed %#llx, death by %s: the waiter on %p was %s, "
				 "the contract says it %s", (unsigned long long)seed,
				 death_name[how], (void *)watched,
				 woken ? "woken" : "not woken",
				 want ? "must be" : "must not be");
			print_list(&before);
			return -1;
		}
	}
	t->iterations++;
	t->deaths++;
	t->checks += ARENA / 4;
	t->released += expect.handled;
	t->stopped += expect.stopped;

	if (memcmp(arena, expect.mem, ARENA)) {
		t->failures++;
		rfm_diag("FAIL seed %#llx, death by %s: the arena differs from the contract",
			 (unsigned long long)seed, death_name[how]);
		for (unsigned int off = 0; off < ARENA; off += 4) {
			uint32_t got, want, was;

			memcpy(&got, arena + off, 4);
			memcpy(&want, expect.mem + off, 4);
			memcpy(&was, before.mem + off, 4);
			if (got != want)
				rfm_diag("  %p: was %08x, now %08x, contract says %08x (%s)",
					 (void *)(arena + off), was, got, want,
					 was == want ? "unexpected write" : "not released");
		}
		print_list(&before);
		return -1;
	}
	return 0;
}

static int fuzz_lists(void)
{
	unsigned long iterations = rfm_cmdline_ulong("rfm.fuzz_iterations=", 2000);
	unsigned long seconds = rfm_cmdline_ulong(FUZZ_SECONDS_KEY, FUZZ_SECONDS);
	uint64_t base = rfm_cmdline_ulong("rfm.fuzz_seed=", 1);
	struct totals t = { 0 };
	time_t start = time(NULL);
	const char *only = getenv("RFM_FUZZ_ONLY");	/* replay one seed */

	arena = rfm_shared(ARENA);
	ctl = rfm_shared(sizeof(*ctl));
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * The hole stays mapped PROT_NONE: every access faults as if it were
	 * unmapped, and no later mmap (a thread's stack) can land there.
	 */
	RFM_CHECK(arena && ctl && hole != MAP_FAILED, "mmap");

	if (only) {
		trace = 1;
		iteration(strtoull(only, NULL, 0), &t);
		iterations = 0;
	}
	for (unsigned long i = 0; i < iterations; i++) {
		if (time(NULL) - start >= (time_t)seconds)
			break;
		iteration(base * 1000003ULL + i, &t);
		if (t.failures >= 5)
			break;
	}
	printf("# fuzz {\"seed\": %llu, \"iterations\": %lu, \"deaths\": %lu, "
	       "\"checks\": %lu, \"released\": %lu, \"walks_stopped\": %lu, "
	       "\"wake_checks\": %lu, \"failures\": %lu, \"seconds\": %ld}\n",
	       (unsigned long long)base, t.iterations, t.deaths, t.checks, t.released,
	       t.stopped, t.wake_checks, t.failures, (long)(time(NULL) - start));
	RFM_CHECK(t.failures == 0, "%lu iteration(s) broke the contract", t.failures);
	RFM_CHECK(t.iterations > 0, "no iteration ran");
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	/* It stops itself after rfm.fuzz_seconds; a hang is caught after 5 min more. */
	RFM_CASE_BUDGET(fuzz_lists, FUZZ_SECONDS_KEY, FUZZ_SECONDS, 300),
};

RFM_MAIN(cases)
