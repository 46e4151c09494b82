// SPDX-License-Identifier: GPL-2.0
/*
 * robust_bench: the seed's performance claims, measured in the guest.
 *
 * 1. The kernel walk: a child holds N robust locks in shared memory and is
 *    killed; the time from kill() to the parent's waitpid() return, less
 *    the same with N = 0, divided by N, is the kernel's cost per lock at
 *    exit. Uncontended (word = TID), contended (TID | FUTEX_WAITERS, so
 *    one futex_wake per lock, nobody waiting) and with a real waiter
 *    sleeping on every lock.
 * 2. The user-space path the seed compared against: the same N locks
 *    released from user space with one FUTEX_WAKE each, as glibc did in
 *    2006 for !pshared robust mutexes.
 * 3. "Virtually zero overhead": a thread create + exit with no list
 *    registered, with an empty list, and with one held lock; and, on a
 *    kernel with patches/bench-exit (x86), the instructions the release
 *    of the thread's futex state itself takes at its exit.
 * 4. The 2026 robust unlock (patches 12 to 14): one unlock of a lock
 *    without waiters the classic way (release, clear list_op_pending) and
 *    through the vDSO try-unlock; one of a lock with FUTEX_WAITERS set
 *    (nobody asleep) with FUTEX_WAKE and with FUTEX_WAKE |
 *    FUTEX_ROBUST_UNLOCK; and a signal delivered to the task itself, the
 *    path the series' fixup hook sits on, outside any unlock.
 *
 * Each point is measured RUNS times; the median and the quartiles are
 * printed as one JSON object per line ("# bench {...}") inside an
 * ordinary KTAP case, for the host to collect.
 *
 * Kernel command line: rfm.bench_max_n=N (the largest N, default
 * ROBUST_LIST_LIMIT); rfm.bench_gate=1 measures only what the performance
 * gate reads (the walk at the largest N, thread create+exit, the unlock
 * ways), three runs each: under QEMU's instruction count every run gives
 * the same figure.
 */
#include "rfm_unlock.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#include <pthread.h>
#include <sched.h>

#define RUNS		15
#define THREAD_LOOPS	200
#define UNLOCK_LOOPS	1000
#define SIGNAL_LOOPS	200

static long max_n = ROBUST_LIST_LIMIT;
static int gate_only;		/* rfm.bench_gate=1 */
static int runs_per_point = RUNS;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double median, q1, q3;
};

static struct stats summarize(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (struct stats){ v[n / 2], v[n / 4], v[(3 * n) / 4] };
}

/* ---- the kernel walk ---- */

enum contention { UNCONTENDED, CONTENDED, REAL_WAITERS };
static const char *const contention_name[] = {
	"uncontended", "contended", "waiters",
};

struct pool {
	long n;
	struct robust_list_head head;
	volatile int ready;
	volatile int waiting;	/* waiters asleep */
	struct rfm_lock lock[];
};

static struct pool *pool_new(long n)
{
	struct pool *p = rfm_shared(sizeof(*p) + (n + 1) * sizeof(struct rfm_lock));

	if (p)
		p->n = n;
	return p;
}

static void pool_free(struct pool *p)
{
	munmap(p, sizeof(*p) + (p->n + 1) * sizeof(struct rfm_lock));
}

/* The owner: take every lock, list them, register, wait to be killed. */
static void owner(struct pool *p, enum contention c)
{
	uint32_t word = (uint32_t)rfm_gettid() | (c == UNCONTENDED ? 0 : FUTEX_WAITERS);

	rfm_head_init(&p->head);
	for (long i = 0; i < p->n; i++) {
		p->lock[i].futex = word;
		rfm_list_add(&p->head, &p->lock[i]);
	}
	if (rfm_set_robust_list(&p->head, sizeof(p->head)))
		_exit(1);
	p->ready = 1;
	for (;;)
		pause();
}

static void *wait_on(void *arg)
{
	struct rfm_lock *l = arg;
	uint32_t seen = l->futex;

	rfm_futex_wait(&l->futex, seen, 60000);
	/*
	 * Woken: stay, rather than exit while the owner is still being
	 * reaped, so the figure is the walk and its wake-ups, not the exit
	 * of the waiting threads. They die with their process afterwards.
	 */
	for (;;)
		pause();
	return NULL;
}

/* A process with one thread asleep on each lock. */
static pid_t start_waiters(struct pool *p)
{
	pid_t pid = fork();

	if (pid == 0) {
		pthread_attr_t attr;
		pthread_t t;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		for (long i = 0; i < p->n; i++)
			if (pthread_create(&t, &attr, wait_on, &p->lock[i]) == 0)
				__atomic_add_fetch(&p->waiting, 1, __ATOMIC_SEQ_CST);
		for (;;)
			pause();
	}
	return pid;
}

/* One death: nanoseconds from kill() to waitpid() of an owner of n locks. */
static int64_t one_death(long n, enum contention c)
{
	struct pool *p = pool_new(n);
	pid_t pid, waiters = -1;
	uint64_t t0, t1;
	int status;

	if (!p)
		return -1;
	pid = fork();
	if (pid == 0)
		owner(p, c);
	while (!p->ready) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -1;
		sched_yield();
	}
	if (c == REAL_WAITERS && n) {
		waiters = start_waiters(p);
		while (p->waiting < n)
			usleep(1000);
		usleep(20000);	/* let the last ones reach FUTEX_WAIT */
	}
	t0 = now_ns();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t1 = now_ns();
	if (waiters > 0) {
		kill(waiters, SIGKILL);
		waitpid(waiters, NULL, 0);
	}
	for (long i = 0; i < n; i++) {
		if (!(p->lock[i].futex & FUTEX_OWNER_DIED)) {
			pool_free(p);
			return -2;	/* not released: the walk did not run */
		}
	}
	pool_free(p);
	return (int64_t)(t1 - t0);
}

static void emit(const char *path, const char *contention, long n,
		 struct stats per_lock, struct stats total, int runs)
{
	printf("# bench {\"path\": \"%s\", \"contention\": \"%s\", \"n\": %ld, "
	       "\"runs\": %d, \"ns_per_lock\": %.1f, \"ns_per_lock_q1\": %.1f, "
	       "\"ns_per_lock_q3\": %.1f, \"total_ns\": %.0f}\n",
	       path, contention, n, runs, per_lock.median, per_lock.q1,
	       per_lock.q3, total.median);
}

static int measure_kernel_walk(enum contention c, long n)
{
	uint64_t with[RUNS], without[RUNS], per[RUNS];
	int runs = n > 100000 ? 5 : runs_per_point;

	/* Interleaved, so drift hits both series alike. */
	for (int r = 0; r < runs; r++) {
		int64_t a = one_death(n, c), b = one_death(0, c);

		if (a < 0 || b < 0) {
			rfm_diag("death measurement failed (%lld, %lld): %s",
				 (long long)a, (long long)b,
				 a == -2 ? "locks not released" : "owner failed");
			return RFM_FAIL;
		}
		with[r] = a;
		without[r] = b;
	}
	struct stats base = summarize(without, runs);

	for (int r = 0; r < runs; r++)
		per[r] = with[r] > base.median ?
			 (uint64_t)((with[r] - base.median) / n) : 0;
	emit("kernel_walk", contention_name[c], n, summarize(per, runs),
	     summarize(with, runs), runs);
	return RFM_PASS;
}

/* ---- the user-space path: one FUTEX_WAKE per lock ---- */

static int measure_user_unlock(enum contention c, long n)
{
	struct pool *p = pool_new(n);
	uint64_t per[RUNS], total[RUNS];
	int runs = n > 100000 ? 5 : runs_per_point;

	RFM_CHECK(p, "mmap");
	for (int r = 0; r < runs; r++) {
		uint32_t word = (uint32_t)rfm_gettid() |
				(c == UNCONTENDED ? 0 : FUTEX_WAITERS);
		uint64_t t0, t1;

		for (long i = 0; i < n; i++)
			p->lock[i].futex = word;
		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			/* What the dying thread's C library did for itself. */
			__atomic_store_n(&p->lock[i].futex,
					 FUTEX_OWNER_DIED | (word & FUTEX_WAITERS),
					 __ATOMIC_RELEASE);
			rfm_futex_wake(&p->lock[i].futex, 1);
		}
		t1 = now_ns();
		total[r] = t1 - t0;
		per[r] = (t1 - t0) / n;
	}
	emit("user_unlock", contention_name[c], n, summarize(per, runs),
	     summarize(total, runs), runs);
	pool_free(p);
	return RFM_PASS;
}

static long sweep[] = { 1, 16, 128, 1024, ROBUST_LIST_LIMIT };

static int bench_sweep(enum contention c, int kernel)
{
	if (gate_only) {
		if (!kernel || c == REAL_WAITERS)
			return rfm_skip("rfm.bench_gate: not a figure of the gate");
		return measure_kernel_walk(c, max_n);
	}
	for (size_t i = 0; i < RFM_ARRAY_SIZE(sweep); i++) {
		long n = sweep[i] > max_n ? max_n : sweep[i];

		if (c == REAL_WAITERS && n > 128)
			break;	/* a thread per lock: keep the guest small */
		if ((kernel ? measure_kernel_walk(c, n) : measure_user_unlock(c, n)))
			return RFM_FAIL;
		if (n == max_n)
			break;
	}
	if (max_n > ROBUST_LIST_LIMIT && c != REAL_WAITERS)
		return kernel ? measure_kernel_walk(c, max_n) : measure_user_unlock(c, max_n);
	return RFM_PASS;
}

static int kernel_walk_uncontended(void) { return bench_sweep(UNCONTENDED, 1); }
static int kernel_walk_contended(void) { return bench_sweep(CONTENDED, 1); }
static int kernel_walk_waiters(void) { return bench_sweep(REAL_WAITERS, 1); }
static int user_unlock_uncontended(void) { return bench_sweep(UNCONTENDED, 0); }
static int user_unlock_contended(void) { return bench_sweep(CONTENDED, 0); }

/* ---- thread create + exit ---- */

enum thread_list { NO_LIST, EMPTY_LIST, ONE_LOCK };
static const char *const thread_list_name[] = { "no_list", "empty_list", "one_lock" };

static __thread struct robust_list_head thread_head;
static __thread struct rfm_lock thread_lock;

static void *short_thread(void *arg)
{
	enum thread_list kind = (enum thread_list)(uintptr_t)arg;

	/* Exactly one set_robust_list() in every variant. */
	if (kind == NO_LIST) {
		rfm_set_robust_list(NULL, sizeof(thread_head));
		return NULL;
	}
	rfm_head_init(&thread_head);
	if (kind == ONE_LOCK) {
		thread_lock.futex = (uint32_t)rfm_gettid();
		rfm_list_add(&thread_head, &thread_lock);
	}
	rfm_set_robust_list(&thread_head, sizeof(thread_head));
	return NULL;
}

/*
 * The instruction counters of the benchmark-only kernel patches: how many
 * times the code ran since the last read, the fewest instructions one run
 * took, and their sum ("count min sum"). Reading one starts a new count.
 * 0 when the kernel has no such counter.
 */
struct insn_counter {
	unsigned long long count, min, sum;
};

static int counter_read(const char *path, struct insn_counter *c)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu %llu", &c->count, &c->min, &c->sum);
	fclose(f);
	return n == 3;
}

/* patches/bench-exit: futex_exit_release() at each user task's exit */
#define EXIT_RELEASE_COUNTER "/proc/rfm_bench_exit_release"

static int thread_create_exit(void)
{
	uint64_t v[3][RUNS];
	struct insn_counter probe, total[3] = { 0 };
	int counted = counter_read(EXIT_RELEASE_COUNTER, &probe);

	/* Interleave the variants run by run, against drift. */
	for (int r = 0; r < runs_per_point; r++) {
		for (int k = 0; k < 3; k++) {
			struct insn_counter e;
			uint64_t t0;

			if (counted)
				counter_read(EXIT_RELEASE_COUNTER, &e);	/* starts the count */
			t0 = now_ns();

			for (int i = 0; i < THREAD_LOOPS; i++) {
				pthread_t t;

				if (pthread_create(&t, NULL, short_thread,
						   (void *)(uintptr_t)k))
					return RFM_FAIL;
				pthread_join(t, NULL);
			}
			v[k][r] = (now_ns() - t0) / THREAD_LOOPS;
			if (!counted)
				continue;
			RFM_CHECK(counter_read(EXIT_RELEASE_COUNTER, &e), "%s: unreadable",
				  EXIT_RELEASE_COUNTER);
			/* Each joined thread went through the release once. */
			RFM_CHECK(e.count == THREAD_LOOPS,
				  "%s: %llu exits counted for %d threads",
				  EXIT_RELEASE_COUNTER, e.count, THREAD_LOOPS);
			if (!total[k].count || e.min < total[k].min)
				total[k].min = e.min;
			total[k].count += e.count;
			total[k].sum += e.sum;
		}
	}
	for (int k = 0; k < 3; k++) {
		struct stats s = summarize(v[k], runs_per_point);

		printf("# bench {\"path\": \"thread_create_exit\", \"list\": \"%s\", "
		       "\"runs\": %d, \"ns\": %.1f, \"ns_q1\": %.1f, \"ns_q3\": %.1f}\n",
		       thread_list_name[k], runs_per_point, s.median, s.q1, s.q3);
		if (counted)
			printf("# bench {\"path\": \"exit_release\", \"list\": \"%s\", "
			       "\"exits\": %llu, \"insns_min\": %llu, \"insns_mean\": %.1f}\n",
			       thread_list_name[k], total[k].count, total[k].min,
			       (double)total[k].sum / total[k].count);
	}
	return RFM_PASS;
}

/* ---- the 2026 robust unlock, and the signal path its fixup sits on ---- */

enum unlock_way { CLASSIC, VDSO, WAKE, WAKE_ROBUST };
static const char *const unlock_way_name[] = {
	"classic", "vdso", "wake", "wake_robust"
};

static struct robust_list_head unlock_head;
static struct rfm_lock unlock_lock;

/* One robust unlock of unlock_lock, held by @tid, list_op_pending set. */
static void unlock_once(enum unlock_way way, uint32_t tid, void *vdso_fn)
{
	void *slot = &unlock_head.list_op_pending;

	unlock_lock.futex = tid | (way >= WAKE ? FUTEX_WAITERS : 0);
	unlock_head.list_op_pending = &unlock_lock.link;
	switch (way) {
	case CLASSIC:
	case WAKE:
		if (__atomic_exchange_n(&unlock_lock.futex, 0, __ATOMIC_RELEASE) &
		    FUTEX_WAITERS)
			rfm_futex_op(&unlock_lock.futex, FUTEX_WAKE_PRIVATE, 1, NULL, 0);
		__atomic_store_n(&unlock_head.list_op_pending, NULL, __ATOMIC_RELAXED);
		break;
	case VDSO:
		rfm_own_try_unlock_call(vdso_fn, &unlock_lock.futex, tid, slot);
		break;
	case WAKE_ROBUST:
		rfm_futex_op(&unlock_lock.futex, FUTEX_WAKE_PRIVATE | RFM_ROBUST_UNLOCK_OWN,
			     1, slot, 0);
		break;
	}
}

/*
 * Each way the kernel offers, per unlock. A kernel without the vDSO
 * functions or FUTEX_ROBUST_UNLOCK (stock) has no figure for them.
 */
static int robust_unlock(void)
{
	void *vdso_fn = rfm_own_try_unlock(NULL);
	int robust = rfm_have_robust_unlock();
	uint32_t tid = (uint32_t)rfm_gettid();

	for (enum unlock_way way = CLASSIC; way <= WAKE_ROBUST; way++) {
		uint64_t per[RUNS];
		struct stats s;

		if ((way == VDSO && !vdso_fn) || (way == WAKE_ROBUST && !robust))
			continue;
		for (int r = 0; r < runs_per_point; r++) {
			uint64_t t0 = now_ns();

			for (int i = 0; i < UNLOCK_LOOPS; i++)
				unlock_once(way, tid, vdso_fn);
			per[r] = (now_ns() - t0) / UNLOCK_LOOPS;
			RFM_CHECK(!unlock_lock.futex && !unlock_head.list_op_pending,
				  "%s: word %#x, slot %p", unlock_way_name[way],
				  unlock_lock.futex, (void *)unlock_head.list_op_pending);
		}
		s = summarize(per, runs_per_point);
		printf("# bench {\"path\": \"robust_unlock\", \"way\": \"%s\", "
		       "\"runs\": %d, \"ns\": %.1f, \"ns_q1\": %.1f, \"ns_q3\": %.1f}\n",
		       unlock_way_name[way], runs_per_point, s.median, s.q1, s.q3);
	}
	return RFM_PASS;
}

/* patches/bench-signal: futex_fixup_robust_unlock() before each delivery */
#define SIGNAL_HOOK_COUNTER "/proc/rfm_bench_signal_hook"

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

/*
 * A signal sent to the task itself and handled: the system call, the
 * delivery (where the series looks for a vDSO unlock to finish first),
 * the handler and the return. The series' cost over stock is its hook.
 */
static int signal_delivery(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t pid = getpid(), tid = rfm_gettid();
	uint64_t per[RUNS];
	struct insn_counter hook;
	int counted = counter_read(SIGNAL_HOOK_COUNTER, &hook);	/* starts the count */
	struct stats s;

	RFM_CHECK(!sigaction(SIGUSR1, &sa, NULL), "sigaction: %s", strerror(errno));
	signals_seen = 0;
	for (int r = 0; r < runs_per_point; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < SIGNAL_LOOPS; i++)
			syscall(SYS_tgkill, pid, tid, SIGUSR1);
		per[r] = (now_ns() - t0) / SIGNAL_LOOPS;
	}
	RFM_CHECK(signals_seen == runs_per_point * SIGNAL_LOOPS, "%d signals handled",
		  (int)signals_seen);
	s = summarize(per, runs_per_point);
	printf("# bench {\"path\": \"signal_delivery\", \"runs\": %d, "
	       "\"ns\": %.1f, \"ns_q1\": %.1f, \"ns_q3\": %.1f}\n",
	       runs_per_point, s.median, s.q1, s.q3);
	if (!counted)
		return RFM_PASS;
	RFM_CHECK(counter_read(SIGNAL_HOOK_COUNTER, &hook), "%s: unreadable",
		  SIGNAL_HOOK_COUNTER);
	/* At least one look per signal sent (others come, too: the timer's) */
	RFM_CHECK(hook.count >= (unsigned long long)signals_seen,
		  "%s: %llu calls for %d signals", SIGNAL_HOOK_COUNTER, hook.count,
		  (int)signals_seen);
	printf("# bench {\"path\": \"signal_hook\", \"calls\": %llu, "
	       "\"insns_min\": %llu, \"insns_mean\": %.1f}\n",
	       hook.count, hook.min, (double)hook.sum / hook.count);
	return RFM_PASS;
}

/*
 * Without a usable clock the numbers are noise: a guest whose TSC could
 * not be calibrated (a loaded host, under TCG) falls back to jiffies,
 * with 4 ms steps. Refuse to measure then, saying why.
 */
static int clock_usable(char *name, size_t len)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

	snprintf(name, len, "unknown");
	if (f) {
		if (fgets(name, (int)len, f))
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	return !strstr(name, "jiffies");
}

static int machine(void)
{
	char line[256], clock[64];
	int usable = clock_usable(clock, sizeof(clock));
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *v = strchr(line, ':');

			v = v ? v + 2 : line;
			v[strcspn(v, "\n")] = '\0';
			printf("# bench {\"path\": \"machine\", \"cpu\": \"%s\", "
			       "\"clocksource\": \"%s\", \"word\": %d, "
			       "\"limit\": %d, \"max_n\": %ld}\n",
			       v, clock, (int)sizeof(long) * 8, ROBUST_LIST_LIMIT,
			       max_n);
			break;
		}
	}
	if (f)
		fclose(f);
	RFM_CHECK(usable, "clocksource %s: too coarse to measure anything", clock);
	return RFM_PASS;
}

/* The clock must still be usable after the measurements, too. */
static int clock_after(void)
{
	char clock[64];

	RFM_CHECK(clock_usable(clock, sizeof(clock)),
		  "clocksource fell back to %s during the run", clock);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(machine),
	RFM_CASE_TIMEOUT(kernel_walk_uncontended, 600),
	RFM_CASE_TIMEOUT(kernel_walk_contended, 600),
	RFM_CASE_TIMEOUT(kernel_walk_waiters, 600),
	RFM_CASE_TIMEOUT(user_unlock_uncontended, 600),
	RFM_CASE_TIMEOUT(user_unlock_contended, 600),
	RFM_CASE_TIMEOUT(thread_create_exit, 600),
	RFM_CASE_TIMEOUT(robust_unlock, 600),
	RFM_CASE_TIMEOUT(signal_delivery, 600),
	RFM_CASE(clock_after),
};

int main(int argc, char **argv)
{
	/* The size of the largest experiment comes from the kernel command
	 * line (rfm.bench_max_n=), so one image serves every kernel. */
	max_n = (long)rfm_cmdline_ulong("rfm.bench_max_n=", ROBUST_LIST_LIMIT);
	gate_only = rfm_cmdline_ulong("rfm.bench_gate=", 0) != 0;
	if (gate_only)
		runs_per_point = 3;
	return rfm_main(argc, argv, cases, RFM_ARRAY_SIZE(cases));
}
