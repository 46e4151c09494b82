// SPDX-License-Identifier: GPL-2.0
/*
 * robust_owner: a program of your own for EXTRA=DIR, built for every ABI.
 *
 * A process-shared robust mutex whose owner dies holding it: the next
 * locker must get EOWNERDEAD from the libc it was linked with, which gets
 * it from the kernel's walk of the dead owner's robust list. Prints KTAP
 * with observations, so the matrix compares it across targets:
 *
 *	gcc -m64  -o DIR/robust_owner.m64  robust_owner.c
 *	gcc -m32  -o DIR/robust_owner.m32  robust_owner.c
 *	gcc -mx32 -o DIR/robust_owner.mx32 robust_owner.c
 *	make run EXTRA=DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	pthread_mutexattr_t attr;
	pthread_mutex_t *m;
	struct timespec deadline;
	pid_t owner;
	int err;

	printf("KTAP version 1\n1..2\n");
	/* Differs between LP64 and ILP32, agrees among ia32, i386 and x32. */
	printf("# obs long_bytes=%zu [abi]\n", sizeof(long));
	printf("ok 1 word_size\n");

	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		printf("# mmap: %s\nnot ok 2 owner_died\n", strerror(errno));
		return 1;
	}
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &attr);

	fflush(stdout);
	owner = fork();
	if (owner == 0) {
		pthread_mutex_lock(m);
		_exit(0);		/* dies holding it */
	}
	waitpid(owner, NULL, 0);

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	err = pthread_mutex_timedlock(m, &deadline);
	printf("# obs lock=%s\n", err == EOWNERDEAD ? "EOWNERDEAD" : strerror(err));
	printf("%s 2 owner_died\n", err == EOWNERDEAD ? "ok" : "not ok");
	return err != EOWNERDEAD;
}
