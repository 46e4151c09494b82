// SPDX-License-Identifier: GPL-2.0
/*
 * high_memory: a 32-bit list above 3 GiB.
 *
 * A 32-bit task on an x86_64 kernel has the whole 4 GiB below it, so its
 * robust list may live above 3 GiB and the compat walk must follow it
 * there. A native i386 kernel with the default 3G/1G split reserves that
 * range for itself and the mapping is refused. The difference is named in
 * the matrix ([target: ...]), not skipped.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <sys/utsname.h>

#define HIGH ((void *)0xc0100000UL)

static int owner_high(void *arg)
{
	struct robust_list_head *head = arg;
	struct rfm_lock *lock = (void *)(head + 1);

	rfm_head_init(head);
	lock->futex = (uint32_t)rfm_gettid();
	rfm_list_add(head, lock);
	return rfm_set_robust_list(head, sizeof(*head)) ? 1 : 0;
}

static int compat_list_above_3g(void)
{
	struct utsname u;
	struct robust_list_head *head;
	struct rfm_lock *lock;
	int on_x86_64, status;

	uname(&u);
	on_x86_64 = !strcmp(u.machine, "x86_64");
	head = mmap(HIGH, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("# obs map_above_3g=%s [target: a 32-bit task has 4 GiB under an "
	       "x86_64 kernel, 3 GiB under i386's 3G/1G split]\n",
	       head == MAP_FAILED ? "refused" : "mapped");
	if (!on_x86_64) {
		printf("# obs word=none [target: no list above 3 GiB on i386]\n");
		RFM_CHECK(head == MAP_FAILED, "mapped %p on a %s kernel", (void *)head,
			  u.machine);
		return RFM_PASS;
	}
	RFM_CHECK(head == HIGH, "mmap above 3 GiB on x86_64: %s", strerror(errno));
	lock = (void *)(head + 1);
	status = rfm_run_child(owner_high, head);
	printf("# obs word=%#x [target: no list above 3 GiB on i386]\n", lock->futex);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	RFM_CHECK(lock->futex == FUTEX_OWNER_DIED, "word %#x", lock->futex);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(compat_list_above_3g),
};

RFM_MAIN(cases)
