// SPDX-License-Identifier: GPL-2.0
/*
 * unlock_stress: rfm_mutex.h's robust mutex under threads killed at
 * random while others lock, unlock, unmap and remap, counting the times
 * a dead thread's exit walk wrote into memory that was no longer a lock.
 *
 * Objects, each a page holding a robust mutex and a reference count it
 * guards, are shared by USERS threads each: a worker claims a
 * reference, locks the object, drops the reference and unlocks; the one
 * that drops the last unmaps the page and maps a new one at the same
 * address, whose first word holds the TID of the object's previous
 * unlocker, the thread most likely to be still in its unlock. That is a
 * correct program: no one touches an object after its last reference.
 * Meanwhile the main thread, at every clock tick, kills a random worker
 * (one of those parked, below, every other time) with a signal whose
 * handler ends the thread with SYS_exit, so its exit walk runs, and
 * starts another. A round ends when every reference is used; then, every
 * killed thread joined, each reused page must still hold what it was
 * given, and no lock may still hold a dead TID.
 *
 * On one CPU (CPUS=1, the default) the classic window is a few
 * instructions: a tick would preempt an unlock there once in a great
 * while, and the memory must be reused while it waits. So every unlock
 * parks (rfm_mutex.h's hook: off the CPU, to the next tick one time in
 * four) where it is most exposed: inside the classic window, and right
 * after the 2026 calls, whose windows are in the kernel or covered by
 * its signal-time fixup. A worker that holds a lock parks too, half the
 * time, so that others wait on it and the contended unlocks (FUTEX_WAKE,
 * with FUTEX_ROBUST_UNLOCK where used) run as well. A worker killed
 * elsewhere was waiting, yielding, in a system call, or preempted by the
 * tick. The deterministic proof that the 2026 windows are closed, at
 * every instruction, is unlock_race's; this is the same mutex under load.
 *
 * With two CPUs (CPUS=2) the same runs again without parking, the
 * *_without_parking cases: no unlock waits anywhere, and the killer, on
 * the other CPU, stops a worker wherever its signal lands, as a fault or
 * an OOM kill would; the reuse that makes a released word hold a dead
 * TID again is another worker on the other CPU, at the same time, and
 * in place (free_object()). A holder works a while (a spin) half the time, so that others wait and
 * the contended unlock's FUTEX_WAKE, inside the classic window, runs;
 * every other kill picks one of the workers in an unlock, if any; and
 * workers do not yield between uses.
 *
 * The classic mutex must be seen corrupting memory: that is the hazard,
 * and it shows the stress can find it (in 1 to 15 rounds of 100, on
 * every target; the control goes on past ROUNDS until it has seen one). The mutex that takes the best unlock the kernel has
 * must never corrupt: on a kernel without FUTEX_ROBUST_UNLOCK (stock
 * 6.1, Debian's) it falls back to the classic unlock and fails, which
 * is the named deviation unlock*.*. Each case runs ROUNDS rounds, or
 * rfm.unlock_stress_rounds=N; make stress runs them for
 * rfm.stress_seconds=S each as well, and tabulates their records.
 */
#include "rfm_mutex.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#include <pthread.h>

#define SLOTS		2	/* objects alive at a time */
#define USERS		2	/* references to each; the last user frees it */
#define WORKERS		3
#define ROUNDS		300
#define ROUNDS_KEY	"rfm.unlock_stress_rounds="
#define STRESS_SECONDS_KEY	"rfm.stress_seconds="	/* make stress */
#define ROUND_S		10	/* a round that takes longer is stuck */
#define LOCK_TIMEOUT_MS	5000	/* no lock is held for more than a few yields */
#define UNPARKED_CONTROL_S	120	/* the unparked control's search, at most */
#define WORK_SPINS	4096	/* unparked: a holder's work, at most */

struct object {			/* at the start of its own page */
	struct rfm_lock lock;
	uint32_t users;		/* references not yet dropped: under lock */
	uint32_t last_unlocker;	/* TID: under lock */
};

/* A worker killed while it frees leaves SLOT_FREEING: its page is unknown. */
enum slot_state { SLOT_LIVE, SLOT_FREEING, SLOT_REUSED };

struct slot {
	int state;
	int claims;		/* references not yet claimed */
	uint32_t reused_word;	/* SLOT_REUSED: what its first word holds */
};

struct worker {
	pthread_t thread;
	struct rfm_mutex_thread mt;
	int started;		/* mt.tid is valid: it may be killed */
	int parked;		/* in park(): off the CPU at an exposed point */
	int busy;		/* claiming, or using a claimed reference */
	int unlocking;		/* in rfm_mutex_unlock() */
	unsigned int seed;
};

struct tally {
	unsigned long rounds, kills, uses, frees, recoveries;
	unsigned long corrupted, lost, timeouts, errors;
};

static struct {
	char *arena;
	size_t page;
	enum rfm_unlock_path how;
	int parking;		/* unlocks and holders park (one CPU's stand-in) */
	struct slot slot[SLOTS];
	struct worker worker[WORKERS];
	int stop;
	unsigned int next_seed;
	struct tally t;
	const char *failed;	/* why the stress could not go on */
} st;

static struct object *object(int i)
{
	return (struct object *)(st.arena + (size_t)i * st.page);
}

static void count(unsigned long *counter)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
}

/*
 * Stay off the CPU for a while: the stress's stand-in for a preemption
 * here, long enough for others to run a lock, an unlock and a free.
 */
static void park(struct rfm_mutex_thread *t)
{
	struct worker *w = (struct worker *)((char *)t - offsetof(struct worker, mt));

	__atomic_store_n(&w->parked, 1, __ATOMIC_SEQ_CST);
	if (rand_r(&w->seed) % 4)
		sched_yield();
	else
		usleep(1);	/* to the next tick, at least */
	__atomic_store_n(&w->parked, 0, __ATOMIC_SEQ_CST);
}

/*
 * The last reference is gone: unmap the page and map a new one in its
 * place; without parking, reuse the memory at once, as malloc hands a
 * freed chunk to its next caller: a dying unlocker's exit walk is a
 * system call away, and a reuse through two more would come after it.
 */
static void free_object(int i, uint32_t prev_unlocker)
{
	void *p = object(i);

	__atomic_store_n(&st.slot[i].state, SLOT_FREEING, __ATOMIC_SEQ_CST);
	if (st.parking &&
	    (munmap(p, st.page) ||
	     mmap(p, st.page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != p)) {
		count(&st.t.errors);
		return;
	}
	/* Unrelated data that happens to equal a thread's TID */
	object(i)->lock.futex = prev_unlocker;
	st.slot[i].reused_word = prev_unlocker;
	__atomic_store_n(&st.slot[i].state, SLOT_REUSED, __ATOMIC_SEQ_CST);
	count(&st.t.frees);
}

static int claim(struct slot *s)
{
	int c = __atomic_load_n(&s->claims, __ATOMIC_SEQ_CST);

	while (c > 0)
		if (__atomic_compare_exchange_n(&s->claims, &c, c - 1, 0,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return 1;
	return 0;
}

/* Use a claimed reference to object @i, and drop it. */
static void use(struct worker *w, int i)
{
	struct object *o = object(i);
	uint32_t prev;
	int r = rfm_mutex_lock(&w->mt, &o->lock, LOCK_TIMEOUT_MS), last;

	if (r == ETIMEDOUT) {
		count(&st.t.timeouts);
		return;
	}
	if (r && r != EOWNERDEAD)
		return;			/* counted in w->mt.errors */
	if (r == EOWNERDEAD)
		count(&st.t.recoveries);
	if (rand_r(&w->seed) % 2) {	/* holding it: others wait */
		if (st.parking)
			park(&w->mt);
		else
			for (volatile unsigned int i = rand_r(&w->seed) % WORK_SPINS; i; i--)
				;
	}
	prev = o->last_unlocker;
	o->last_unlocker = w->mt.tid;
	last = --o->users == 0;
	count(&st.t.uses);
	__atomic_store_n(&w->unlocking, 1, __ATOMIC_SEQ_CST);
	rfm_mutex_unlock(&w->mt, &o->lock);
	__atomic_store_n(&w->unlocking, 0, __ATOMIC_SEQ_CST);
	if (last)
		free_object(i, prev);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (rfm_mutex_thread_init(&w->mt, st.how)) {
		count(&st.t.errors);
		return NULL;
	}
	w->mt.park = st.parking ? park : NULL;
	__atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&st.stop, __ATOMIC_SEQ_CST)) {
		int i = (int)(rand_r(&w->seed) % SLOTS);

		/* busy before the claim; round_done() reads them the other way round */
		__atomic_store_n(&w->busy, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&st.slot[i].state, __ATOMIC_SEQ_CST) == SLOT_LIVE &&
		    claim(&st.slot[i]))
			use(w, i);
		__atomic_store_n(&w->busy, 0, __ATOMIC_SEQ_CST);
		/*
		 * Parked, yield between uses; unparked, go on as a busy
		 * program's threads do: on a slow kernel (the debug one) a
		 * yield each time leaves a worker in the kernel nearly all
		 * the time, where no kill lands in an unlock's window.
		 */
		if (st.parking)
			sched_yield();
	}
	return NULL;
}

/* A killed worker's handler: end the thread here, as a fault would. */
static void die(int sig)
{
	(void)sig;
	syscall(SYS_exit, 0);
}

/* Start a worker in @w, whose last thread, if any, has been joined. */
static int start_worker(struct worker *w)
{
	st.t.errors += w->mt.errors;
	memset(w, 0, sizeof(*w));
	w->seed = ++st.next_seed;
	return pthread_create(&w->thread, NULL, worker_main, w);
}

/*
 * Kill a random worker, every other time one of those parked (or,
 * without parking, of those in an unlock: the signal, sent from the
 * other CPU, lands wherever the worker has got to by then), wait for
 * its exit and start another: 1. None to kill: 0, no kill this time.
 */
static int kill_one(unsigned int *seed)
{
	int picky = rand_r(seed) % 2, n = 0;
	struct worker *can[WORKERS], *w;

	for (int i = 0; i < WORKERS; i++) {
		w = &st.worker[i];
		if (__atomic_load_n(&w->started, __ATOMIC_SEQ_CST) &&
		    (!picky || __atomic_load_n(st.parking ? &w->parked : &w->unlocking,
					       __ATOMIC_SEQ_CST)))
			can[n++] = w;
	}
	if (!n)
		return 0;
	w = can[rand_r(seed) % (unsigned int)n];
	if (syscall(SYS_tgkill, getpid(), w->mt.tid, SIGUSR1) ||
	    pthread_join(w->thread, NULL))
		return -1;
	/* Joined: the kernel has cleared its TID, after its exit walk */
	st.t.kills++;
	return start_worker(w) ? -1 : 1;
}

/* Fresh objects in every slot, each with USERS references to claim. */
static int new_objects(void)
{
	for (int i = 0; i < SLOTS; i++) {
		struct object *o = object(i);

		if (mmap(o, st.page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != o)
			return -1;
		o->users = USERS;
		st.slot[i].state = SLOT_LIVE;
		__atomic_store_n(&st.slot[i].claims, USERS, __ATOMIC_SEQ_CST);
	}
	return 0;
}

static int round_done(void)
{
	for (int i = 0; i < SLOTS; i++)
		if (__atomic_load_n(&st.slot[i].claims, __ATOMIC_SEQ_CST))
			return 0;
	for (int w = 0; w < WORKERS; w++)
		if (__atomic_load_n(&st.worker[w].busy, __ATOMIC_SEQ_CST))
			return 0;
	return 1;
}

/*
 * The round is over and every killed thread joined: no one can write
 * to the objects any more. A reused page holds what it was given, and
 * a lock no live thread holds has no TID in it: a dead owner's walk
 * must have released it.
 */
static void check_objects(void)
{
	for (int i = 0; i < SLOTS; i++) {
		uint32_t word;

		if (st.slot[i].state == SLOT_FREEING)
			continue;
		word = object(i)->lock.futex;
		if (st.slot[i].state == SLOT_REUSED) {
			if (word != st.slot[i].reused_word) {
				st.t.corrupted++;
				if (st.t.corrupted == 1)
					rfm_diag("round %lu: reused page holds %#x, was given %#x",
						 st.t.rounds, word, st.slot[i].reused_word);
			}
		} else if (word & FUTEX_TID_MASK) {
			st.t.lost++;
		}
	}
}

static long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec;
}

/*
 * At least @rounds, and for the seconds make stress asks; the control
 * goes on to 4 * @rounds while it has seen no corruption, so that a
 * target where it is rare does not fail it by chance, and without
 * parking, where it is rarer, for up to UNPARKED_CONTROL_S.
 */
static int more_rounds(unsigned long rounds, long seconds, long since, int control)
{
	if (st.t.rounds < rounds || now_s() - since < seconds)
		return 1;
	if (!control || st.t.corrupted)
		return 0;
	return st.parking ? st.t.rounds < 4 * rounds : now_s() - since < UNPARKED_CONTROL_S;
}

/* 0 once the rounds are done, or -1 with st.failed saying why not. */
static int run_stress(enum rfm_unlock_path how, int control, int parking)
{
	static struct rfm_mutex_thread main_thread;	/* registered until exit */
	unsigned long rounds = rfm_cmdline_ulong(ROUNDS_KEY, ROUNDS);
	long seconds = (long)rfm_cmdline_ulong(STRESS_SECONDS_KEY, 0);
	struct sigaction sa = { .sa_handler = die };
	long since = now_s();
	unsigned int seed = 1;

	st.how = how;
	st.parking = parking;
	/* What every worker does first: a kernel without robust lists fails here */
	st.failed = "set_robust_list() or the vDSO try-unlock is missing";
	if (rfm_mutex_thread_init(&main_thread, how))
		return -1;
	st.page = (size_t)sysconf(_SC_PAGESIZE);
	st.arena = mmap(NULL, SLOTS * st.page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	st.failed = "setting up";
	if (st.arena == MAP_FAILED || sigaction(SIGUSR1, &sa, NULL) || new_objects())
		return -1;
	st.failed = "pthread_create";
	for (int w = 0; w < WORKERS; w++)
		if (start_worker(&st.worker[w]))
			return -1;
	while (more_rounds(rounds, seconds, since, control)) {
		long start = now_s();

		while (!round_done()) {
			st.failed = "a round is stuck";
			if (now_s() - start > ROUND_S)
				return -1;
			/* Parked workers wait for ticks; unparked, kill at once */
			if (st.parking)
				usleep(1);	/* to the next tick */
			st.failed = "killing a worker";
			if (!round_done() && kill_one(&seed) < 0)
				return -1;
		}
		check_objects();
		st.t.rounds++;
		st.failed = "mapping new objects";
		if (new_objects())
			return -1;
	}
	st.failed = NULL;
	__atomic_store_n(&st.stop, 1, __ATOMIC_SEQ_CST);
	for (int w = 0; w < WORKERS; w++) {
		pthread_join(st.worker[w].thread, NULL);
		st.t.errors += st.worker[w].mt.errors;
	}
	return 0;
}

/*
 * The run's record, in make stress's table (robust_stress.c's keys:
 * deaths are kills, acquisitions uses, stuck_at_end the locks of dead
 * owners left with their TID).
 */
static void report(const char *name)
{
	const struct tally *t = &st.t;

	printf("# stress {\"case\": \"%s\", \"unlock\": \"%s\", \"parking\": %s, "
	       "\"cpus\": %ld, \"rounds\": %lu, "
	       "\"deaths\": %lu, \"acquisitions\": %lu, \"frees\": %lu, "
	       "\"recoveries\": %lu, \"corrupted\": %lu, \"lost_wakeups\": %lu, "
	       "\"stuck_at_end\": %lu, \"errors\": %lu}\n",
	       name, rfm_unlock_path_names[st.how], st.parking ? "true" : "false",
	       sysconf(_SC_NPROCESSORS_ONLN), t->rounds, t->kills, t->uses,
	       t->frees, t->recoveries, t->corrupted, t->timeouts, t->lost, t->errors);
}

/* What every run must show, whatever it corrupted. */
#define CHECK_RUN(ran)							\
	do {								\
		RFM_CHECK((ran) == 0, "the stress stopped: %s", st.failed); \
		RFM_CHECK(st.t.kills > 0 && st.t.frees > 0,		\
			  "%lu kills, %lu frees", st.t.kills, st.t.frees); \
		RFM_CHECK(st.t.errors == 0 && st.t.timeouts == 0,	\
			  "%lu errors, %lu lock timeouts", st.t.errors,	\
			  st.t.timeouts);				\
		RFM_CHECK(st.t.lost == 0, "%lu locks of dead owners not released", \
			  st.t.lost);					\
	} while (0)

/* The control: the classic unlock, which the stress must catch. */
static int classic_corrupts(const char *name, int parking)
{
	int ran = run_stress(RFM_UNLOCK_CLASSIC, 1, parking);

	report(name);
	CHECK_RUN(ran);
	rfm_obs("corrupted", "%s", st.t.corrupted ? "yes" : "no");
	RFM_CHECK(st.t.corrupted > 0, "no corruption in %lu rounds, %lu kills",
		  st.t.rounds, st.t.kills);
	return RFM_PASS;
}

static int classic_mutex_corrupts_reused_memory(void)
{
	return classic_corrupts(__func__, 1);
}

static int never_corrupts(const char *name, enum rfm_unlock_path how, int parking)
{
	int ran = run_stress(how, 0, parking);

	report(name);
	CHECK_RUN(ran);
	rfm_obs("corrupted", "%lu", st.t.corrupted);
	RFM_CHECK(st.t.corrupted == 0, "%lu corruptions in %lu rounds, %lu kills (%s unlock)",
		  st.t.corrupted, st.t.rounds, st.t.kills, rfm_unlock_path_names[how]);
	return RFM_PASS;
}

/*
 * The mutex as a C library would ship it: the vDSO where there is one,
 * the system call where not (ARM), the classic unlock on a kernel that
 * has neither, which must then fail here.
 */
static int best_unlock(const char *name, int parking)
{
	enum rfm_unlock_path how = rfm_mutex_choose();

	printf("# obs unlock=%s [target: the vDSO try-unlock is x86's only]\n",
	       rfm_unlock_path_names[how]);
	return never_corrupts(name, how, parking);
}

static int best_unlock_never_corrupts(void)
{
	return best_unlock(__func__, 1);
}

/* Every unlock through FUTEX_WAKE | FUTEX_ROBUST_UNLOCK. */
static int syscall_unlock_never_corrupts(void)
{
	RFM_REQUIRE_ROBUST_UNLOCK();
	return never_corrupts(__func__, RFM_UNLOCK_SYSCALL, 1);
}

/*
 * Two CPUs, no parking: the classic window is hit by a kill from the
 * other CPU, and the reuse that exposes it by a worker there.
 */
static int classic_mutex_corrupts_without_parking(void)
{
	RFM_REQUIRE_CPUS(2);
	return classic_corrupts(__func__, 0);
}

/* The same load with the best unlock: its windows are the kernel's. */
static int best_unlock_never_corrupts_without_parking(void)
{
	RFM_REQUIRE_CPUS(2);
	return best_unlock(__func__, 0);
}

static const struct rfm_case cases[] = {
	/* ROUNDS take a few seconds; make stress adds its own budget */
	RFM_CASE_BUDGET(classic_mutex_corrupts_reused_memory, STRESS_SECONDS_KEY, 0, 120),
	RFM_CASE_BUDGET(best_unlock_never_corrupts, STRESS_SECONDS_KEY, 0, 120),
	RFM_CASE_BUDGET(syscall_unlock_never_corrupts, STRESS_SECONDS_KEY, 0, 120),
	RFM_CASE_BUDGET(classic_mutex_corrupts_without_parking, STRESS_SECONDS_KEY, 0,
			UNPARKED_CONTROL_S + 60),
	RFM_CASE_BUDGET(best_unlock_never_corrupts_without_parking, STRESS_SECONDS_KEY, 0, 120),
};

RFM_MAIN(cases)
