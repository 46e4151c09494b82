// SPDX-License-Identifier: GPL-2.0
/*
 * compat_int80: a 64-bit process that also registers a 32-bit list.
 *
 * Emulators of 32-bit programs on x86_64 (FEX, box64) do this: the native
 * list through syscall 273, and an ILP32 list through `int $0x80`, which
 * enters the ia32 table, so compat_sys_set_robust_list() (311) stores it
 * as the task's compat list. At death the kernel must walk both. The
 * 32-bit list and its locks live below 4 GiB (MAP_32BIT).
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#define IA32_SET_ROBUST_LIST 311

/* The ILP32 layouts, spelled out: 32-bit pointers and a 32-bit offset. */
struct ilp32_robust_list {
	uint32_t next;
};

struct ilp32_robust_list_head {
	struct ilp32_robust_list list;
	int32_t futex_offset;
	uint32_t list_op_pending;
};

struct ilp32_lock {
	struct ilp32_robust_list link;
	uint32_t futex;
};

static long int80(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a" (ret) : "a" (nr), "b" (a), "c" (b)
			 : "memory");
	return ret;
}

static uint32_t low(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

struct both {
	struct robust_list_head head;		/* the native list */
	struct rfm_lock lock;
	long compat_ret;
};

static int owner_both_lists(void *arg)
{
	struct both *b = arg;
	struct ilp32_robust_list_head *h32 = (void *)((char *)b + 2048);
	struct ilp32_lock *l32 = (void *)(h32 + 1);

	rfm_head_init(&b->head);
	b->lock.futex = (uint32_t)rfm_gettid();
	rfm_list_add(&b->head, &b->lock);

	l32->futex = (uint32_t)rfm_gettid();
	l32->link.next = low(&h32->list);
	h32->list.next = low(&l32->link);
	h32->futex_offset = offsetof(struct ilp32_lock, futex);
	h32->list_op_pending = 0;

	if (rfm_set_robust_list(&b->head, sizeof(b->head)))
		return 1;
	b->compat_ret = int80(IA32_SET_ROBUST_LIST, (long)low(h32), sizeof(*h32));
	return b->compat_ret ? 2 : 0;
}

static int death_native_and_compat_lists(void)
{
	struct both *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	struct ilp32_lock *l32;
	int status;

	RFM_CHECK(b != MAP_FAILED, "mmap(MAP_32BIT): %s", strerror(errno));
	l32 = (void *)((char *)b + 2048 + sizeof(struct ilp32_robust_list_head));
	status = rfm_run_child(owner_both_lists, b);
	rfm_obs("int80_set_robust_list", "%ld", b->compat_ret);
	rfm_obs("native_word", "%#x", b->lock.futex);
	rfm_obs("compat_word", "%#x", l32->futex);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner status %#x (1: native set, 2: int $0x80 set failed)", status);
	RFM_CHECK(b->lock.futex == FUTEX_OWNER_DIED, "native list: word %#x",
		  b->lock.futex);
	RFM_CHECK(l32->futex == FUTEX_OWNER_DIED, "compat list: word %#x",
		  l32->futex);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(death_native_and_compat_lists),
};

RFM_MAIN(cases)
