// SPDX-License-Identifier: GPL-2.0
/*
 * smp: the races of a dying owner that only a second CPU runs (CPUS=2).
 *
 * On one CPU without kernel preemption nothing else runs between the
 * exit walk's read of a futex word and its cmpxchg, nor between a
 * waiter's FUTEX_WAITERS and its FUTEX_WAIT once the owner is on its
 * way out. Here the dying owner and the other party are pinned to
 * different CPUs and act at the same time, round after round:
 *
 * - death_cmpxchg_races_waiters_bit: another thread flips FUTEX_WAITERS
 *   in the dead owner's word all through its exit. The walk's cmpxchg
 *   then often finds the word changed since its read, and must read it
 *   again and retry (rule walk-cmpxchg-retry): however the flips fall,
 *   the word ends with FUTEX_OWNER_DIED and no TID.
 * - death_wakes_waiter_entering_wait: a waiter sets FUTEX_WAITERS and
 *   calls FUTEX_WAIT while the owner exits. Whichever comes first, the
 *   waiter is never left asleep: woken by the walk, or refused by
 *   FUTEX_WAIT because the walk already changed the word.
 * - vdso_fixup_signals_from_other_cpu (x86): a thread unlocks through
 *   the vDSO try-unlock over and over while another, on the other CPU,
 *   sends it signals. Wherever one lands, its handler must never find
 *   the lock released with list_op_pending still naming it: a signal
 *   after the try-unlock's cmpxchg and before its store to the slot has
 *   the kernel clear the slot first (the fixup). unlock_race proves it
 *   at every instruction, single-stepped; here the signals come as they
 *   do in a program, asynchronously, from another CPU.
 *
 * Each needs two CPUs online and skips with fewer (the matrix holds
 * the guest to the CPUS= it booted, so a skip there is one CPU asked).
 * Rounds: ROUNDS, or rfm.smp_rounds=N.
 */
#include "rfm_unlock.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#include <pthread.h>
#include <signal.h>
#include <ucontext.h>

#define ROUNDS		400
#define ROUNDS_KEY	"rfm.smp_rounds="
#define OWNER_CPU	0
#define OTHER_CPU	1
#define WAIT_MS		5000	/* a waiter the walk forgot sleeps this long */

/* One dying owner and its lock; a fresh one each round. */
struct round {
	struct robust_list_head head;
	struct rfm_lock lock;
	pid_t tid;		/* the owner's */
	int ready;		/* the owner holds the lock */
	int go;			/* the owner may exit */
	int spin;		/* the owner's delay before it exits */
	long wait_ret;		/* the waiter's FUTEX_WAIT: 0 or -errno */
	int waiter_set_bit;	/* its cmpxchg set FUTEX_WAITERS */
};

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/*
 * The owner: on OWNER_CPU, it takes the lock as a robust mutex would
 * (TID in the word, the lock on its list), says so, waits for the word
 * and a few spins more, and exits as a thread (SYS_exit: only its own
 * list is walked, the process lives on).
 */
static void *owner_main(void *arg)
{
	struct round *r = arg;

	if (rfm_pin_cpu(OWNER_CPU))
		return NULL;
	r->tid = rfm_gettid();
	rfm_head_init(&r->head);
	rfm_list_add(&r->head, &r->lock);
	r->lock.futex = (uint32_t)r->tid;
	if (rfm_set_robust_list(&r->head, sizeof(r->head)))
		return NULL;
	store(&r->ready, 1);
	while (!load(&r->go))
		;
	for (volatile int i = 0; i < r->spin; i++)
		;
	syscall(SYS_exit, 0);
	return NULL;
}

static int start_owner(struct round *r, pthread_t *th, int spin)
{
	memset(r, 0, sizeof(*r));
	r->spin = spin;
	if (pthread_create(th, NULL, owner_main, r))
		return -1;
	while (!load(&r->ready))
		if (!pthread_tryjoin_np(*th, NULL))
			return -1;	/* it ended before taking the lock */
	return 0;
}

/* What the walk must leave: FUTEX_OWNER_DIED, no TID, the bit it found. */
static int owner_died_ok(uint32_t word)
{
	return (word & FUTEX_OWNER_DIED) && !(word & FUTEX_TID_MASK);
}

static int death_cmpxchg_races_waiters_bit(void)
{
	unsigned long rounds = rfm_cmdline_ulong(ROUNDS_KEY, ROUNDS);
	unsigned long flips = 0, with_bit = 0;

	RFM_REQUIRE_CPUS(2);
	RFM_CHECK(rfm_pin_cpu(OTHER_CPU) == 0, "sched_setaffinity: %s", strerror(errno));
	for (unsigned long n = 0; n < rounds; n++) {
		static struct round r;
		pthread_t th;
		uint32_t tid, word;

		RFM_CHECK(start_owner(&r, &th, 0) == 0, "round %lu: the owner did not start",
			  n);
		tid = (uint32_t)r.tid;
		store(&r.go, 1);
		/*
		 * Flip the bit until the owner is gone. Once the walk has
		 * written FUTEX_OWNER_DIED neither cmpxchg matches any more.
		 */
		for (unsigned long i = 0;; i++) {
			uint32_t v = tid;

			if (__atomic_compare_exchange_n(&r.lock.futex, &v, tid | FUTEX_WAITERS,
							0, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				flips++;
			v = tid | FUTEX_WAITERS;
			if (__atomic_compare_exchange_n(&r.lock.futex, &v, tid, 0,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
				flips++;
			if (!(i % 64) && !pthread_tryjoin_np(th, NULL))
				break;
		}
		word = __atomic_load_n(&r.lock.futex, __ATOMIC_SEQ_CST);
		RFM_CHECK(owner_died_ok(word),
			  "round %lu: the dead owner's word is %#x, TID %#x (FUTEX_OWNER_DIED "
			  "and no TID expected)", n, word, tid);
		with_bit += !!(word & FUTEX_WAITERS);
	}
	/* The flips must have been there while the walk ran, some of the time */
	rfm_diag("%lu rounds, %lu flips, %lu walks found FUTEX_WAITERS set", rounds, flips,
		 with_bit);
	RFM_CHECK(with_bit > 0,
		  "the walk found FUTEX_WAITERS set in %lu of %lu rounds: the flips never "
		  "overlapped it", with_bit, rounds);
	return RFM_PASS;
}

/*
 * The waiter: on OTHER_CPU, it sets FUTEX_WAITERS in the owner's word
 * (unless the walk got there first) and calls FUTEX_WAIT on what it set.
 */
static void *waiter_main(void *arg)
{
	struct round *r = arg;
	uint32_t v = (uint32_t)r->tid;

	if (rfm_pin_cpu(OTHER_CPU)) {
		r->wait_ret = -errno;
		return NULL;
	}
	store(&r->go, 1);
	r->waiter_set_bit = __atomic_compare_exchange_n(&r->lock.futex, &v,
							v | FUTEX_WAITERS, 0,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	if (r->waiter_set_bit) {
		long ret = rfm_futex_wait(&r->lock.futex, v | FUTEX_WAITERS, WAIT_MS);

		r->wait_ret = ret ? -errno : 0;
	}
	return NULL;
}

static int death_wakes_waiter_entering_wait(void)
{
	unsigned long rounds = rfm_cmdline_ulong(ROUNDS_KEY, ROUNDS);
	unsigned long woken = 0, refused = 0, late = 0;

	RFM_REQUIRE_CPUS(2);
	for (unsigned long n = 0; n < rounds; n++) {
		static struct round r;
		pthread_t owner, waiter;
		uint32_t word;

		/* The owner exits 0 to 255 spins after the waiter starts */
		RFM_CHECK(start_owner(&r, &owner, (int)(n % 256)) == 0,
			  "round %lu: the owner did not start", n);
		RFM_CHECK(pthread_create(&waiter, NULL, waiter_main, &r) == 0,
			  "pthread_create: %s", strerror(errno));
		RFM_CHECK(pthread_join(waiter, NULL) == 0 && pthread_join(owner, NULL) == 0,
			  "pthread_join failed");
		word = __atomic_load_n(&r.lock.futex, __ATOMIC_SEQ_CST);
		RFM_CHECK(r.wait_ret != -ETIMEDOUT,
			  "round %lu: the waiter slept %d ms: the walk did not wake it (word %#x)",
			  n, WAIT_MS, word);
		RFM_CHECK(r.wait_ret == 0 || r.wait_ret == -EAGAIN || r.wait_ret == -EINTR,
			  "round %lu: FUTEX_WAIT: %s", n, rfm_errno_name((int)-r.wait_ret));
		RFM_CHECK(owner_died_ok(word), "round %lu: the dead owner's word is %#x", n,
			  word);
		/* A bit the waiter set before the walk is one the walk keeps */
		RFM_CHECK(!r.waiter_set_bit || (word & FUTEX_WAITERS),
			  "round %lu: the waiter set FUTEX_WAITERS, the word is %#x", n, word);
		if (!r.waiter_set_bit)
			late++;
		else if (r.wait_ret == 0)
			woken++;
		else
			refused++;
	}
	rfm_diag("%lu rounds: waiter woken by the walk %lu, refused (word changed) %lu, "
		 "too late to set the bit %lu", rounds, woken, refused, late);
	return RFM_PASS;
}

#if defined(__x86_64__)
#define HAVE_VDSO_UNLOCK	1
#define SIGNAL_PC(uc)		((unsigned long)(uc)->uc_mcontext.gregs[REG_RIP])
#elif defined(__i386__)
#define HAVE_VDSO_UNLOCK	1
#define SIGNAL_PC(uc)		((unsigned long)(uc)->uc_mcontext.gregs[REG_EIP])
#else
#define HAVE_VDSO_UNLOCK	0
#define SIGNAL_PC(uc)		((void)(uc), 0UL)
#endif

#define FIXUP_SIGNALS	5000
#define DELIVERY_SPINS	100000000UL	/* a signal not taken by then is lost */

/* The unlocker's lock and slot, and what its signal handler saw. */
static struct {
	void *fn;
	unsigned long size;
	volatile uint32_t word;
	void *volatile slot;	/* this ABI's list_op_pending */
	pid_t tid;
	int running, stop;
	unsigned long loops, errors;
	volatile unsigned long signals, inside, released_pending;
} fx;

static void fixup_handler(int sig, siginfo_t *si, void *ctx)
{
	unsigned long pc = SIGNAL_PC((ucontext_t *)ctx);

	(void)sig;
	(void)si;
	fx.signals++;
	if (pc - (unsigned long)fx.fn < fx.size)
		fx.inside++;
	if (fx.word == 0 && fx.slot == (void *)&fx.word)
		fx.released_pending++;
}

/* On OWNER_CPU: lock (the TID in the word, the slot set), try-unlock. */
static void *unlocker_main(void *arg)
{
	(void)arg;
	if (rfm_pin_cpu(OWNER_CPU))
		return NULL;
	fx.tid = rfm_gettid();
	store(&fx.running, 1);
	while (!load(&fx.stop)) {
		fx.word = (uint32_t)fx.tid;
		fx.slot = (void *)&fx.word;
		if (rfm_own_try_unlock_call(fx.fn, (uint32_t *)&fx.word, (uint32_t)fx.tid,
					    (void *)&fx.slot) != (uint32_t)fx.tid ||
		    fx.word || fx.slot)
			fx.errors++;
		fx.loops++;
	}
	return NULL;
}

static int vdso_fixup_signals_from_other_cpu(void)
{
	struct sigaction sa = { .sa_sigaction = fixup_handler, .sa_flags = SA_SIGINFO };
	pthread_t th;

	if (!HAVE_VDSO_UNLOCK)
		return rfm_skip("no vDSO robust try-unlock on this architecture");
	RFM_REQUIRE_CPUS(2);
	fx.fn = rfm_own_try_unlock(&fx.size);
	RFM_CHECK(fx.fn, "the vDSO has no %s", sizeof(void *) == 8 ? RFM_TRY_UNLOCK64 :
		  RFM_TRY_UNLOCK32);
	RFM_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	RFM_CHECK(rfm_pin_cpu(OTHER_CPU) == 0, "sched_setaffinity: %s", strerror(errno));
	RFM_CHECK(pthread_create(&th, NULL, unlocker_main, NULL) == 0, "pthread_create");
	while (!load(&fx.running))
		;
	/*
	 * One signal at a time, each taken before the next is sent: a
	 * pending signal absorbs the ones sent after it, and the other
	 * vCPU's host thread may be off the host's CPU for a while.
	 */
	for (unsigned long i = 0; i < FIXUP_SIGNALS; i++) {
		unsigned long spins = 0;

		RFM_CHECK(syscall(SYS_tgkill, getpid(), fx.tid, SIGUSR1) == 0, "tgkill: %s",
			  strerror(errno));
		while (fx.signals == i && ++spins < DELIVERY_SPINS)
			;
		RFM_CHECK(fx.signals == i + 1, "signal %lu was not taken", i + 1);
		for (volatile unsigned long spin = 0; spin < i % 97; spin++)
			;
	}
	store(&fx.stop, 1);
	RFM_CHECK(pthread_join(th, NULL) == 0, "pthread_join");
	rfm_diag("%lu unlocks, %lu signals, %lu inside the try-unlock", fx.loops, fx.signals,
		 fx.inside);
	RFM_CHECK(fx.errors == 0, "%lu try-unlocks did not release the lock and clear the slot",
		  fx.errors);
	RFM_CHECK(fx.released_pending == 0,
		  "%lu signals found the lock released and list_op_pending naming it",
		  fx.released_pending);
	RFM_CHECK(fx.inside > 0, "none of %lu signals landed inside the try-unlock",
		  fx.signals);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE_TIMEOUT(death_cmpxchg_races_waiters_bit, 120),
	RFM_CASE_TIMEOUT(death_wakes_waiter_entering_wait, 120),
	RFM_CASE_TIMEOUT(vdso_fixup_signals_from_other_cpu, 120),
};

RFM_MAIN(cases)
