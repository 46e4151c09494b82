// SPDX-License-Identifier: GPL-2.0
/*
 * wake: which deaths wake a waiter, and what the futex word becomes.
 *
 * One table, one row per state of a futex word at the moment its owner's
 * list is walked: where the kernel found the word (on the list, in
 * list_op_pending, or both), whether the link to it carries the PI bit,
 * and the value of the word. Every row runs at once: an owner process per
 * row registers its list and waits, two waiters per row sleep on the
 * row's word, then all owners are killed. The first to sleep waits in
 * FUTEX_WAIT_BITSET with a bitset without bit 0, the second in
 * FUTEX_WAIT: the one waiter a death wakes is the first in the queue,
 * whatever bitset it waits with, so where a row wants one woken it must
 * be the first. A woken
 * waiter is one whose FUTEX_WAIT returned 0 before the walk of its owner
 * was over (the wake-up happens inside the owner's exit, before it can be
 * reaped, so a waiter still asleep then was not woken).
 *
 * The expected values are the contract, written out row by row
 * (Documentation/locking/robust-futex-ABI.rst and the comment on
 * handle_futex_death() in kernel/futex/core.c of 6.1.192):
 *  - a word the dying thread owns becomes FUTEX_OWNER_DIED, keeping
 *    FUTEX_WAITERS; one waiter is woken if FUTEX_WAITERS was set and the
 *    entry is not PI;
 *  - a word it does not own is never written; if it came from
 *    list_op_pending and is not PI, one waiter is woken when the word is
 *    0, has no owner (OWNER_DIED, FUTEX_WAITERS alone) or has an owner
 *    without FUTEX_WAITERS: the dying thread may have taken the one
 *    wake-up meant for them (the lost-wakeup rule of 6.1.187+, which
 *    before woke only for 0);
 *  - an entry that is both listed and pending is handled once.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#define WAITERS_PER_ROW	2
#define OTHER_TID	0x2bcdef01u	/* an owner that is not the dying task */
#define OWNER		0xffffffffu	/* row.word: the dying owner's TID */
#define UNCHANGED	0xffffffffu	/* row.want_word: as the owner left it */
#define WAIT_MS		10000		/* no wake-up takes this long */
#define FIRST_BITSET	0x10		/* the first waiter's: not bit 0 */

enum where { LISTED, PENDING, BOTH };

struct row {
	const char *name;
	enum where where;
	int pi;			/* the PI bit on the link to the entry */
	uint32_t word;		/* OWNER, OTHER_TID or 0 */
	uint32_t bits;		/* ORed into the word */
	uint32_t want_word;	/* the word after the walk, or UNCHANGED */
	int want_woken;
};

static const struct row rows[] = {
	{ "listed_owned_waiters", LISTED, 0, OWNER, FUTEX_WAITERS,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, 1 },
	{ "listed_owned", LISTED, 0, OWNER, 0, FUTEX_OWNER_DIED, 0 },
	{ "listed_owned_died_waiters", LISTED, 0, OWNER,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, FUTEX_OWNER_DIED | FUTEX_WAITERS, 1 },
	{ "listed_pi_owned_waiters", LISTED, 1, OWNER, FUTEX_WAITERS,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, 0 },
	{ "listed_other_waiters", LISTED, 0, OTHER_TID, FUTEX_WAITERS, UNCHANGED, 0 },
	{ "listed_other", LISTED, 0, OTHER_TID, 0, UNCHANGED, 0 },
	{ "listed_zero", LISTED, 0, 0, 0, UNCHANGED, 0 },
	{ "pending_owned_waiters", PENDING, 0, OWNER, FUTEX_WAITERS,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, 1 },
	{ "pending_owned", PENDING, 0, OWNER, 0, FUTEX_OWNER_DIED, 0 },
	{ "pending_zero", PENDING, 0, 0, 0, UNCHANGED, 1 },
	{ "pending_other", PENDING, 0, OTHER_TID, 0, UNCHANGED, 1 },
	{ "pending_other_waiters", PENDING, 0, OTHER_TID, FUTEX_WAITERS, UNCHANGED, 0 },
	{ "pending_owner_died", PENDING, 0, 0, FUTEX_OWNER_DIED, UNCHANGED, 1 },
	{ "pending_owner_died_waiters", PENDING, 0, 0,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, UNCHANGED, 1 },
	{ "pending_waiters_only", PENDING, 0, 0, FUTEX_WAITERS, UNCHANGED, 1 },
	{ "pending_pi_zero", PENDING, 1, 0, 0, UNCHANGED, 0 },
	{ "pending_pi_other", PENDING, 1, OTHER_TID, 0, UNCHANGED, 0 },
	{ "pending_pi_owned_waiters", PENDING, 1, OWNER, FUTEX_WAITERS,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, 0 },
	{ "both_owned_waiters", BOTH, 0, OWNER, FUTEX_WAITERS,
	  FUTEX_OWNER_DIED | FUTEX_WAITERS, 1 },
	{ "both_zero", BOTH, 0, 0, 0, UNCHANGED, 1 },
};

#define ROWS RFM_ARRAY_SIZE(rows)

/* One row's memory, shared by its owner, its waiters and the case. */
struct row_arena {
	struct robust_list_head head;
	struct rfm_lock lock;
	volatile uint32_t ready;	/* the owner registered its list */
	volatile uint32_t waiting[WAITERS_PER_ROW];
	uint32_t start_word;		/* the word as the owner set it */
};

static struct robust_list *tagged(struct rfm_lock *lock, int pi)
{
	return (struct robust_list *)((uintptr_t)&lock->link | (pi ? 1 : 0));
}

static void own_row(const struct row *r, struct row_arena *a)
{
	uint32_t tid = (uint32_t)rfm_gettid();

	rfm_head_init(&a->head);
	a->lock.futex = (r->word == OWNER ? tid : r->word) | r->bits;
	a->start_word = a->lock.futex;
	if (r->where != PENDING) {
		a->head.list.next = tagged(&a->lock, r->pi);
		a->lock.link.next = &a->head.list;
	}
	if (r->where != LISTED)
		a->head.list_op_pending = tagged(&a->lock, r->pi);
	if (rfm_set_robust_list(&a->head, sizeof(a->head)))
		_exit(1);
	a->ready = 1;
	for (;;)
		pause();
}

/*
 * Sleep on the row's word, waiter 0 in FUTEX_WAIT_BITSET with FIRST_BITSET
 * (an absolute CLOCK_MONOTONIC timeout), the others in FUTEX_WAIT: exit 0
 * if woken, 2 on timeout, 3 otherwise.
 */
static void wait_row(struct row_arena *a, int n)
{
	uint32_t seen = a->lock.futex;
	struct timespec ts;
	long ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	a->waiting[n] = 1;
	ret = n == 0 ? syscall(SYS_futex, &a->lock.futex, FUTEX_WAIT_BITSET, seen, &ts,
			       NULL, FIRST_BITSET)
		     : rfm_futex_wait(&a->lock.futex, seen, WAIT_MS);
	if (ret == 0)
		_exit(0);
	_exit(errno == ETIMEDOUT ? 2 : 3);
}

static int death_wake_rules(void)
{
	struct row_arena *arena = rfm_shared(sizeof(*arena) * ROWS);
	pid_t owner[ROWS], waiter[ROWS][WAITERS_PER_ROW];
	int woken[ROWS] = { 0 }, first_woken[ROWS] = { 0 }, failed = 0;

	RFM_CHECK(arena, "mmap");
	for (size_t i = 0; i < ROWS; i++) {
		owner[i] = fork();
		if (owner[i] == 0)
			own_row(&rows[i], &arena[i]);
		RFM_CHECK(owner[i] > 0, "fork: %s", strerror(errno));
	}
	for (size_t i = 0; i < ROWS; i++) {
		while (!arena[i].ready) {
			RFM_CHECK(waitpid(owner[i], NULL, WNOHANG) == 0,
				  "row %s: the owner died before its list was set",
				  rows[i].name);
			usleep(1000);
		}
		/* One after the other: the queue's order is the sleeping order. */
		for (int w = 0; w < WAITERS_PER_ROW; w++) {
			waiter[i][w] = fork();
			if (waiter[i][w] == 0)
				wait_row(&arena[i], w);
			RFM_CHECK(waiter[i][w] > 0, "fork: %s", strerror(errno));
			RFM_CHECK(rfm_wait_sleeping(waiter[i][w], &arena[i].waiting[w]),
				  "row %s: waiter %d never slept", rows[i].name, w);
		}
	}

	/*
	 * The walk runs in each owner's exit, before it can be reaped: once
	 * waitpid() returns, every wake-up of that walk has happened, and a
	 * waiter still asleep was not woken.
	 */
	for (size_t i = 0; i < ROWS; i++) {
		kill(owner[i], SIGKILL);
		waitpid(owner[i], NULL, 0);
		for (int w = 0; w < WAITERS_PER_ROW; w++)
			woken[i] += rfm_proc_state(waiter[i][w]) != 'S';
		first_woken[i] = rfm_proc_state(waiter[i][0]) != 'S';
	}
	for (size_t i = 0; i < ROWS; i++) {
		const struct row *r = &rows[i];
		uint32_t got = arena[i].lock.futex, want = r->want_word == UNCHANGED ?
			arena[i].start_word : r->want_word;
		int ok = got == want && woken[i] == r->want_woken &&
			 first_woken[i] == r->want_woken;

		for (int w = 0; w < WAITERS_PER_ROW; w++) {
			int status;

			kill(waiter[i][w], SIGKILL);
			waitpid(waiter[i][w], &status, 0);
		}
		/* An unchanged word holds a TID, which differs between runs. */
		if (got == arena[i].start_word)
			printf("# obs %s=woken %d, word unchanged\n", r->name, woken[i]);
		else
			printf("# obs %s=woken %d, word %#x\n", r->name, woken[i], got);
		if (!ok)
			rfm_diag("row %s: woken %d (want %d), the first waiter %s, word %#x (want %#x)",
				 r->name, woken[i], r->want_woken,
				 first_woken[i] ? "woken" : "asleep", got, want);
		failed |= !ok;
	}
	RFM_CHECK(!failed, "the wake-up or the word is wrong in some row");
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE_TIMEOUT(death_wake_rules, 60),
};

RFM_MAIN(cases)
