// SPDX-License-Identifier: GPL-2.0
/*
 * glibc: robust mutexes end to end, as applications use them.
 *
 * A process-shared robust mutex lives in MAP_SHARED memory; its owner dies
 * holding it; the next locker must get EOWNERDEAD, and then either make it
 * consistent (and use it normally) or unlock it without doing so (and from
 * then on everyone gets ENOTRECOVERABLE). glibc keeps the robust list; the
 * kernel walks it. Plain and priority-inheritance mutexes both.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <pthread.h>

struct shared_mutex {
	pthread_mutex_t m;
	volatile int locked;
};

static struct shared_mutex *new_mutex(int protocol)
{
	struct shared_mutex *s = rfm_shared(sizeof(*s));
	pthread_mutexattr_t attr;

	if (!s)
		return NULL;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_setprotocol(&attr, protocol);
	if (pthread_mutex_init(&s->m, &attr)) {
		pthread_mutexattr_destroy(&attr);
		return NULL;
	}
	pthread_mutexattr_destroy(&attr);
	return s;
}

/*
 * pthread_mutex_lock() bounded by a deadline: a lock the kernel never
 * marked as dead would otherwise block until the case times out.
 */
static int lock_within(pthread_mutex_t *m, int seconds)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += seconds;
	return pthread_mutex_timedlock(m, &deadline);
}

/* Fork an owner that locks @s and dies by SIGKILL while holding it. */
static int kill_owner(struct shared_mutex *s)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (pthread_mutex_lock(&s->m))
			_exit(1);
		s->locked = 1;
		for (;;)
			pause();
	}
	while (!s->locked) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -1;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}

static int recover(int protocol, int make_consistent)
{
	struct shared_mutex *s = new_mutex(protocol);
	int first, consistent = -1, unlock, second;

	RFM_CHECK(s, "robust pshared mutex: init failed");
	RFM_CHECK(kill_owner(s) == 0, "the owner could not lock the mutex");

	first = lock_within(&s->m, 5);
	rfm_obs("first_lock", "%s", rfm_errno_name(first));
	RFM_CHECK(first == EOWNERDEAD, "lock after the owner died: %s",
		  rfm_errno_name(first));
	if (make_consistent) {
		consistent = pthread_mutex_consistent(&s->m);
		rfm_obs("consistent", "%s", rfm_errno_name(consistent));
	}
	unlock = pthread_mutex_unlock(&s->m);
	second = lock_within(&s->m, 5);
	rfm_obs("unlock", "%s", rfm_errno_name(unlock));
	rfm_obs("second_lock", "%s", rfm_errno_name(second));
	if (make_consistent) {
		RFM_CHECK(consistent == 0 && unlock == 0 && second == 0,
			  "consistent %s unlock %s relock %s",
			  rfm_errno_name(consistent), rfm_errno_name(unlock),
			  rfm_errno_name(second));
		pthread_mutex_unlock(&s->m);
	} else {
		RFM_CHECK(second == ENOTRECOVERABLE, "relock: %s",
			  rfm_errno_name(second));
	}
	return RFM_PASS;
}

static int death_glibc_eownerdead_consistent(void)
{
	return recover(PTHREAD_PRIO_NONE, 1);
}

static int death_glibc_notrecoverable(void)
{
	return recover(PTHREAD_PRIO_NONE, 0);
}

static int death_glibc_pi_eownerdead_consistent(void)
{
	return recover(PTHREAD_PRIO_INHERIT, 1);
}

static int death_glibc_pi_notrecoverable(void)
{
	return recover(PTHREAD_PRIO_INHERIT, 0);
}

/* A waiter already blocked in pthread_mutex_lock() is handed the lock. */
static int death_glibc_blocked_waiter(void)
{
	struct shared_mutex *s = new_mutex(PTHREAD_PRIO_NONE);
	int *result = rfm_shared(sizeof(int)), status;
	pid_t owner, waiter;

	RFM_CHECK(s && result, "robust pshared mutex: init failed");
	owner = fork();
	if (owner == 0) {
		pthread_mutex_lock(&s->m);
		s->locked = 1;
		for (;;)
			pause();
	}
	while (!s->locked)
		usleep(1000);
	*result = -1;
	waiter = fork();
	if (waiter == 0) {
		*result = lock_within(&s->m, 10);
		_exit(0);
	}
	/* Give it time to block; either way it must end with EOWNERDEAD. */
	usleep(200 * 1000);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	waitpid(waiter, &status, 0);
	rfm_obs("waiter_lock", "%s", *result < 0 ? "none" : rfm_errno_name(*result));
	RFM_CHECK(*result == EOWNERDEAD, "waiter got %d", *result);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(death_glibc_eownerdead_consistent),
	RFM_CASE(death_glibc_notrecoverable),
	RFM_CASE(death_glibc_pi_eownerdead_consistent),
	RFM_CASE(death_glibc_pi_notrecoverable),
	RFM_CASE(death_glibc_blocked_waiter),
};

RFM_MAIN(cases)
