// SPDX-License-Identifier: GPL-2.0
/*
 * robust_stress: owners die at random while others wait.
 *
 * Worker processes share robust, process-shared glibc mutexes; each takes
 * one at random, holds it briefly, and lets it go, while the parent kills
 * a random worker every few milliseconds (SIGKILL, possibly while it holds
 * a mutex or is just taking one) and starts a new one. A worker that gets
 * EOWNERDEAD counts a recovery and makes the mutex consistent. Every lock
 * is bounded (pthread_mutex_timedlock): a waiter that times out although
 * no live owner could be holding the mutex that long is a lost wakeup.
 * A second case does the same with threads of one process, which die with
 * pthread_exit() while their siblings hold and wait.
 *
 * Kernel command line: rfm.stress_seconds=N (default 20).
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <pthread.h>

#define MUTEXES		8
#define WORKERS		6
#define THREADS		8
#define BOUND_S		10	/* no hold lasts more than a few ms */
#define STRESS_SECONDS_KEY	"rfm.stress_seconds="
#define STRESS_SECONDS	20	/* per case, without STRESS_SECONDS_KEY */

struct shared {
	pthread_mutex_t m[MUTEXES];
	volatile uint32_t counter[MUTEXES];	/* protected by m[i] */
	unsigned long acquisitions, recoveries, timeouts, errors;
	volatile int stop;
};

static struct shared *sh;

static int lock_bounded(pthread_mutex_t *m)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += BOUND_S;
	return pthread_mutex_timedlock(m, &deadline);
}

/* What a worker thread returns: it ran out of time, or died holding. */
#define RETURNED	((void *)1)
#define DIED_HOLDING	((void *)2)

/* Take a random mutex, hold it a moment, release it: forever. */
static void work(unsigned int seed, int may_exit_holding)
{
	while (!sh->stop) {
		int i = (int)(rand_r(&seed) % MUTEXES), r = lock_bounded(&sh->m[i]);

		if (r == EOWNERDEAD) {
			__atomic_add_fetch(&sh->recoveries, 1, __ATOMIC_RELAXED);
			pthread_mutex_consistent(&sh->m[i]);
		} else if (r == ETIMEDOUT) {
			__atomic_add_fetch(&sh->timeouts, 1, __ATOMIC_RELAXED);
			continue;
		} else if (r) {
			__atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_add_fetch(&sh->acquisitions, 1, __ATOMIC_RELAXED);
		sh->counter[i]++;
		if (rand_r(&seed) % 4 == 0)
			usleep(rand_r(&seed) % 2000);
		if (may_exit_holding && rand_r(&seed) % 64 == 0)
			pthread_exit(DIED_HOLDING);	/* die holding m[i] */
		pthread_mutex_unlock(&sh->m[i]);
	}
}

static int init_shared(void)
{
	pthread_mutexattr_t attr;

	sh = rfm_shared(sizeof(*sh));
	if (!sh)
		return -1;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	for (int i = 0; i < MUTEXES; i++)
		if (pthread_mutex_init(&sh->m[i], &attr))
			return -1;
	pthread_mutexattr_destroy(&attr);
	return 0;
}

/* After the run every mutex must still be obtainable within the bound. */
static int final_sweep(unsigned long *stuck)
{
	*stuck = 0;
	for (int i = 0; i < MUTEXES; i++) {
		int r = lock_bounded(&sh->m[i]);

		if (r == EOWNERDEAD) {
			sh->recoveries++;
			pthread_mutex_consistent(&sh->m[i]);
		} else if (r) {
			(*stuck)++;
			continue;
		}
		pthread_mutex_unlock(&sh->m[i]);
	}
	return 0;
}

static void report(const char *what, unsigned long deaths, unsigned long stuck,
		   long seconds)
{
	printf("# stress {\"case\": \"%s\", \"deaths\": %lu, \"acquisitions\": %lu, "
	       "\"recoveries\": %lu, \"lost_wakeups\": %lu, \"stuck_at_end\": %lu, "
	       "\"errors\": %lu, \"seconds\": %ld}\n", what, deaths, sh->acquisitions,
	       sh->recoveries, sh->timeouts, stuck, sh->errors, seconds);
}

/* The time each case runs: rfm.stress_seconds= on the kernel command line. */
static unsigned long stress_seconds(void)
{
	return rfm_cmdline_ulong(STRESS_SECONDS_KEY, STRESS_SECONDS);
}

static int process_deaths(void)
{
	unsigned long seconds = stress_seconds(), deaths = 0, stuck;
	pid_t worker[WORKERS];
	time_t start = time(NULL);
	unsigned int seed = 1;

	RFM_CHECK(init_shared() == 0, "robust mutexes: init failed");
	for (int w = 0; w < WORKERS; w++) {
		worker[w] = fork();
		if (worker[w] == 0) {
			work((unsigned int)w + 1, 0);
			_exit(0);
		}
	}
	while (time(NULL) - start < (time_t)seconds) {
		int w = (int)(rand_r(&seed) % WORKERS);

		usleep(2000 + rand_r(&seed) % 8000);
		kill(worker[w], SIGKILL);
		waitpid(worker[w], NULL, 0);
		deaths++;
		worker[w] = fork();
		if (worker[w] == 0) {
			work(seed + (unsigned int)deaths, 0);
			_exit(0);
		}
	}
	sh->stop = 1;
	for (int w = 0; w < WORKERS; w++)
		waitpid(worker[w], NULL, 0);
	final_sweep(&stuck);
	report("process_deaths", deaths, stuck, (long)(time(NULL) - start));
	RFM_CHECK(deaths > 0 && sh->recoveries > 0, "no owner died holding a mutex");
	RFM_CHECK(sh->timeouts == 0 && stuck == 0 && sh->errors == 0,
		  "%lu lost wakeups, %lu stuck, %lu errors", sh->timeouts, stuck,
		  sh->errors);
	return RFM_PASS;
}

static void *thread_worker(void *arg)
{
	work((unsigned int)(uintptr_t)arg, 1);
	return RETURNED;
}

/*
 * Every thread that dies holds exactly one mutex, and that mutex is
 * recovered exactly once (by a worker, or by the final sweep): so at the
 * end recoveries must equal deaths, counted over every thread joined,
 * during the run and after it.
 */
static int thread_deaths(void)
{
	unsigned long seconds = stress_seconds(), deaths = 0, stuck;
	pthread_t t[THREADS];
	time_t start = time(NULL);
	unsigned int next = 1;
	void *how;

	RFM_CHECK(init_shared() == 0, "robust mutexes: init failed");
	for (int i = 0; i < THREADS; i++)
		RFM_CHECK(pthread_create(&t[i], NULL, thread_worker,
					 (void *)(uintptr_t)next++) == 0, "pthread_create");
	/* A thread that exited holding a mutex is replaced by a new one. */
	while (time(NULL) - start < (time_t)seconds) {
		for (int i = 0; i < THREADS; i++) {
			if (pthread_tryjoin_np(t[i], &how) == 0) {
				deaths += how == DIED_HOLDING;
				RFM_CHECK(pthread_create(&t[i], NULL, thread_worker,
							 (void *)(uintptr_t)next++) == 0,
					  "pthread_create");
			}
		}
		usleep(5000);
	}
	sh->stop = 1;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], &how);
		deaths += how == DIED_HOLDING;
	}
	final_sweep(&stuck);
	report("thread_deaths", deaths, stuck, (long)(time(NULL) - start));
	RFM_CHECK(deaths > 0, "no thread died holding a mutex");
	RFM_CHECK(sh->timeouts == 0 && stuck == 0 && sh->errors == 0,
		  "%lu lost wakeups, %lu stuck, %lu errors", sh->timeouts, stuck,
		  sh->errors);
	RFM_CHECK(sh->recoveries == deaths,
		  "%lu deaths but %lu recoveries: each death is one recovery",
		  deaths, sh->recoveries);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	/* Each stops itself after rfm.stress_seconds, then drains its waiters. */
	RFM_CASE_BUDGET(process_deaths, STRESS_SECONDS_KEY, STRESS_SECONDS, 300),
	RFM_CASE_BUDGET(thread_deaths, STRESS_SECONDS_KEY, STRESS_SECONDS, 300),
};

RFM_MAIN(cases)
