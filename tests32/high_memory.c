// SPDX-License-Identifier: GPL-2.0
/*
 * high_memory: a 32-bit list above 3 GiB.
 *
 * A 32-bit task on a 64-bit kernel (x86_64, arm64) has the whole 4 GiB
 * below it, so its robust list may live above 3 GiB and the compat walk
 * must follow it there. A native 32-bit kernel (i386, arm) with the
 * default 3G/1G split reserves that range for itself and the mapping is
 * refused. The difference is named in the matrix ([target: ...]), not
 * skipped.
 *
 * With the whole 4 GiB, entry + futex_offset can wrap around it: the
 * 32-bit task computes the address in 32 bits, and so must the kernel
 * (a 64-bit sum would land above 4 GiB, or in the kernel for a negative
 * offset, and the lock would not be released).
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

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
	struct robust_list_head *head;
	struct rfm_lock *lock;
	int on_64bit = rfm_kernel_64bit(), status;

	head = mmap(HIGH, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("# obs map_above_3g=%s [target: a 32-bit task has 4 GiB under a "
	       "64-bit kernel, 3 GiB under a 32-bit kernel's 3G/1G split]\n",
	       head == MAP_FAILED ? "refused" : "mapped");
	if (!on_64bit) {
		printf("# obs word=none [target: no list above 3 GiB on a 32-bit kernel]\n");
		RFM_CHECK(head == MAP_FAILED, "mapped %p on a 32-bit kernel",
			  (void *)head);
		return RFM_PASS;
	}
	RFM_CHECK(head == HIGH, "mmap above 3 GiB on a 64-bit kernel: %s",
		  strerror(errno));
	lock = (void *)(head + 1);
	status = rfm_run_child(owner_high, head);
	printf("# obs word=%#x [target: no list above 3 GiB on a 32-bit kernel]\n",
	       lock->futex);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	RFM_CHECK(lock->futex == FUTEX_OWNER_DIED, "word %#x", lock->futex);
	return RFM_PASS;
}

#define WRAP_HIGH	((void *)0xf0000000UL)
#define WRAP_LOW	((void *)0x00100000UL)

struct wrap {
	uintptr_t entry;	/* the list's one entry (its link) */
	uintptr_t word;		/* its futex word */
};

static int owner_wrap(void *arg)
{
	struct wrap *w = arg;
	struct robust_list_head *head = (void *)((char *)WRAP_LOW + 2048);
	struct robust_list *entry = (void *)w->entry;

	rfm_head_init(head);
	/* The offset wraps: the 32-bit sum is the word, the 64-bit one is not. */
	head->futex_offset = (long)(uint32_t)(w->word - w->entry);
	head->list.next = entry;
	entry->next = &head->list;
	*(uint32_t *)w->word = (uint32_t)rfm_gettid();
	return rfm_set_robust_list(head, sizeof(*head)) ? 1 : 0;
}

/* Map a shared page at @at; 0 if the kernel refused. */
static int map_at(void *at)
{
	return mmap(at, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == at;
}

static int offset_wraps(uintptr_t entry, uintptr_t word)
{
	struct wrap w = { entry, word };
	int low = map_at(WRAP_LOW), high = map_at(WRAP_HIGH), status;

	RFM_CHECK(low, "mmap at %p: %s", WRAP_LOW, strerror(errno));
	printf("# obs futex_offset=%ld\n", (long)(uint32_t)(word - entry));
	printf("# obs map_high=%s [target: a 32-bit task has 4 GiB under a 64-bit "
	       "kernel, 3 GiB under a 32-bit kernel's 3G/1G split]\n",
	       high ? "mapped" : "refused");
	if (!high) {
		printf("# obs word=none [target: no address above 3 GiB on a 32-bit kernel]\n");
		return RFM_PASS;
	}
	status = rfm_run_child(owner_wrap, &w);
	printf("# obs word=%#x [target: no address above 3 GiB on a 32-bit kernel]\n",
	       *(uint32_t *)word);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	RFM_CHECK(*(uint32_t *)word == FUTEX_OWNER_DIED, "word %#x at %p",
		  *(uint32_t *)word, (void *)word);
	return RFM_PASS;
}

/* An entry near the top, its word near the bottom: the sum passes 4 GiB. */
static int compat_offset_wraps_past_4g(void)
{
	return offset_wraps((uintptr_t)WRAP_HIGH + 0xf00, (uintptr_t)WRAP_LOW + 0x10);
}

/* An entry near the bottom, a negative offset that goes below 0. */
static int compat_offset_wraps_below_0(void)
{
	return offset_wraps((uintptr_t)WRAP_LOW + 0xf00, (uintptr_t)WRAP_HIGH + 0x10);
}

static const struct rfm_case cases[] = {
	RFM_CASE(compat_list_above_3g),
	RFM_CASE(compat_offset_wraps_past_4g),
	RFM_CASE(compat_offset_wraps_below_0),
};

RFM_MAIN(cases)
