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
 *
 * A MIPS compat task (n32, o32) has 2 GiB (TASK_SIZE32, 0x7fff8000):
 * nothing above 3 GiB to map, so compat_list_above_3g is not built there
 * (it is "-" in the matrix). What every 32-bit ABI has is its own top,
 * wherever its kernel puts it: the list_*_highest_page cases find it and
 * put the list there, and an offset from there that passes 4 GiB in 32
 * bits comes back to low memory only if the kernel adds it as a signed
 * 32-bit value (zero-extended, it lands above 4 GiB).
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#define HIGH ((void *)0xc0100000UL)
#define PAGE 4096UL

#if !defined(__mips__) && !defined(__s390__)
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
#endif

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

/* The end of the [stack] mapping, which is below the task's top; 0 if not found. */
static unsigned long long stack_end(void)
{
	unsigned long long lo, hi, found = 0;
	char line[256];
	FILE *maps = fopen("/proc/self/maps", "r");

	if (!maps)
		return 0;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			found = hi;
	fclose(maps);
	return found;
}

/* Is @addr below the task's top: may a page be mapped there (or is one)? */
static int below_top(unsigned long long addr)
{
	void *p = mmap((void *)(uintptr_t)addr, PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return errno == EEXIST;
	munmap(p, PAGE);
	return (uintptr_t)p == addr;
}

/*
 * The task's top (TASK_SIZE of a 32-bit task, whatever its kernel): a
 * binary search, above its stack, for the first page it cannot map.
 * Then the highest page below it that is free, mapped shared; NULL if
 * none is within 64 pages (a vDSO there, say).
 */
static void *map_highest_page(unsigned long long *top)
{
	unsigned long long lo = stack_end(), hi = 1ULL << 32, at;

	*top = 0;
	if (!lo || !below_top(lo - PAGE))
		return NULL;
	while (hi - lo > PAGE) {	/* below_top(lo - PAGE), !below_top(hi) */
		unsigned long long mid = lo + (hi - lo) / 2 / PAGE * PAGE;

		if (below_top(mid))
			lo = mid + PAGE;
		else
			hi = mid;
	}
	*top = below_top(lo) ? hi : lo;
	for (at = *top - PAGE; at + 64 * PAGE > *top; at -= PAGE)
		if (map_at((void *)(uintptr_t)at))
			return (void *)(uintptr_t)at;
	return NULL;
}

static int owner_on_page(void *arg)
{
	char *page = arg;
	struct robust_list_head *head = (void *)page;
	/* The lock's link and word are the page's last bytes. */
	struct rfm_lock *lock = (void *)(page + PAGE - sizeof(struct rfm_lock));

	rfm_head_init(head);
	lock->futex = (uint32_t)rfm_gettid();
	rfm_list_add(head, lock);
	return rfm_set_robust_list(head, sizeof(*head)) ? 1 : 0;
}

/* The head and the lock on the last page the task can map. */
static int list_on_highest_page(void)
{
	unsigned long long top;
	char *page = map_highest_page(&top);
	struct rfm_lock *lock;
	int status;

	printf("# obs top=%#llx [target: TASK_SIZE of a 32-bit task: 4 GiB less a page or "
	       "two under x86_64 and arm64, 3 GiB split on i386 and arm, 2 GiB on MIPS]\n",
	       top);
	RFM_CHECK(page, "no free page within 64 pages below the top %#llx", top);
	rfm_diag("highest free page %p, %llu page(s) below the top",
		 (void *)page, (top - (uintptr_t)page) / PAGE);
	lock = (void *)(page + PAGE - sizeof(*lock));
	status = rfm_run_child(owner_on_page, page);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	rfm_obs("word", "%#x", lock->futex);
	RFM_CHECK(lock->futex == FUTEX_OWNER_DIED, "word %#x at %p", lock->futex,
		  (void *)&lock->futex);
	return RFM_PASS;
}

/*
 * The entry on the highest page, its word in low memory: futex_offset
 * (word - entry, in 32 bits) passes 4 GiB when read unsigned, and comes
 * back to the word only as the kernel's signed 32-bit compat_long_t.
 */
static int offset_back_from_highest_page(void)
{
	unsigned long long top;
	char *page = map_highest_page(&top);
	struct wrap w;
	int status;

	RFM_CHECK(page, "no free page within 64 pages below the top %#llx", top);
	RFM_CHECK(map_at(WRAP_LOW), "mmap at %p: %s", WRAP_LOW, strerror(errno));
	w.entry = (uintptr_t)page + 0xf00;
	w.word = (uintptr_t)WRAP_LOW + 0x10;
	rfm_diag("entry %#lx, word %#lx, futex_offset %ld", (unsigned long)w.entry,
		 (unsigned long)w.word, (long)(int32_t)(w.word - w.entry));
	status = rfm_run_child(owner_wrap, &w);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	rfm_obs("word", "%#x", *(uint32_t *)w.word);
	RFM_CHECK(*(uint32_t *)w.word == FUTEX_OWNER_DIED, "word %#x", *(uint32_t *)w.word);
	return RFM_PASS;
}

/*
 * A head at 0x80001000: bit 31 set. Under x86_64 and arm64 an ordinary
 * (here unmapped) user address; a MIPS n32 or o32 task cannot map it (2
 * GiB), and its argument arrives sign-extended: 0xffffffff80001000, the
 * kernel's own unmapped segment, which the compat entry keeps as given.
 * get_robust_list() must hand back the 32 bits the task gave, and the
 * walk at its exit must refuse the address as a user one, never read the
 * kernel there (panic_on_warn and oops=panic turn either into a failed
 * run).
 */
#define BIT31_HEAD	0x80001000u
/*
 * What get_robust_list() hands back: the 32 bits given, but on s390,
 * whose compat system call wrappers clear bit 31 of every pointer
 * argument (__SC_DELOUSE): there the head is 0x1000, unmapped as well.
 */
#ifdef __s390__
#define BIT31_HEAD_KEPT	(BIT31_HEAD & 0x7fffffffu)
#else
#define BIT31_HEAD_KEPT	BIT31_HEAD
#endif

static int owner_bit31(void *arg)
{
	uint32_t got = 0, len = 0;

	(void)arg;
	if (rfm_set_robust_list((void *)(uintptr_t)BIT31_HEAD, sizeof(struct robust_list_head)))
		return 1;
	if (rfm_get_robust_list(0, &got, &len))
		return 2;
	return got == BIT31_HEAD_KEPT && len == sizeof(struct robust_list_head) ? 0 : 3;
}

static int head_with_bit31_set(void)
{
	void *p = mmap((void *)(uintptr_t)BIT31_HEAD, PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	int status;

	if (p != MAP_FAILED)		/* nothing lives there: the walk must fault */
		munmap(p, PAGE);
	else
		RFM_CHECK(errno != EEXIST, "something is mapped at %#x", BIT31_HEAD);
	status = rfm_run_child(owner_bit31, NULL);
	rfm_obs("owner_exit", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner %#x (1: set refused, 2: get refused, 3: get gave other bits)", status);
	return RFM_PASS;
}

/*
 * A list link with bit 31 set (between two ordinary entries), whose
 * lock lies at the address without it. What bit 31 of a 32-bit pointer means is the architecture's: on
 * s390 it is the addressing-mode bit, not an address bit (a 31-bit task
 * has 2 GiB), and compat_ptr() clears it, so the walk must follow the
 * link to the lock below 2 GiB. Everywhere else it is an address bit:
 * where the task can map the address with it (4 GiB under a 64-bit
 * kernel, 3 GiB under a 32-bit one) the lock there is the one released;
 * where it cannot (MIPS's n32 and o32: 2 GiB) the link leads past the
 * task's top and the walk must stop there. A walk that casts the 32
 * bits instead of calling compat_ptr() is right on every architecture
 * but s390. The entry the link leads to is also where the walk reads
 * the next link from: the last entry is released wherever that entry's
 * lock was, so a walk that took the word's address right but read the
 * next link elsewhere shows too.
 */
#define BIT31_LOW	((void *)0x00200000UL)
#define BIT31_HIGH	((void *)0x80200000UL)
#define BIT31		0x80000000u
#define BIT31_FIRST	((struct rfm_lock *)((char *)BIT31_LOW + 1024))
#define BIT31_LAST	((struct rfm_lock *)((char *)BIT31_LOW + 3072))

static int owner_link_bit31(void *arg)
{
	struct robust_list_head *head = (void *)((char *)BIT31_LOW + 2048);
	struct rfm_lock *low = BIT31_LOW, *high = BIT31_HIGH;
	int high_mapped = *(int *)arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	rfm_head_init(head);
	BIT31_LAST->futex = tid;
	BIT31_LAST->link.next = &head->list;
	low->futex = tid;
	low->link.next = &BIT31_LAST->link;
	if (high_mapped) {
		high->futex = tid;
		high->link.next = &BIT31_LAST->link;
	}
	/* An ordinary first entry: its release shows that the walk ran. */
	BIT31_FIRST->futex = tid;
	BIT31_FIRST->link.next = (void *)((uintptr_t)&low->link | BIT31);
	head->list.next = &BIT31_FIRST->link;
	return rfm_set_robust_list(head, sizeof(*head)) ? 1 : 0;
}

static int link_with_bit31_set(void)
{
	struct rfm_lock *low = BIT31_LOW, *high = BIT31_HIGH;
	int high_mapped, status;
	const char *released;
	int last_released;

	RFM_CHECK(map_at(BIT31_LOW), "mmap at %p: %s", BIT31_LOW, strerror(errno));
	high_mapped = map_at(BIT31_HIGH);
	status = rfm_run_child(owner_link_bit31, &high_mapped);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "owner %#x", status);
	/* Else "none" below could mean that nothing walked the list at all. */
	RFM_CHECK(BIT31_FIRST->futex == FUTEX_OWNER_DIED, "first entry %#x: the walk did not "
		  "reach the link", BIT31_FIRST->futex);
	last_released = BIT31_LAST->futex == FUTEX_OWNER_DIED;
	released = low->futex == FUTEX_OWNER_DIED ?
		   (high_mapped && high->futex == FUTEX_OWNER_DIED ? "both" : "low") :
		   high_mapped && high->futex == FUTEX_OWNER_DIED ? "high" : "none";
	printf("# obs high_page=%s [target: bit 31 is an address bit but on s390, where a "
	       "31-bit task has 2 GiB; MIPS's compat tasks have 2 GiB too]\n",
	       high_mapped ? "mapped" : "refused");
	printf("# obs released=%s [target: s390's compat_ptr() clears bit 31; elsewhere the "
	       "link leads to the lock above 2 GiB, or past the task's top]\n", released);
	printf("# obs last=%s [target: the walk goes on wherever the link led to a lock]\n",
	       last_released ? "released" : "held");
	RFM_CHECK(last_released == (strcmp(released, "none") != 0),
		  "released %s, but the entry after it %s: the next link was not read from "
		  "the entry whose lock was released", released,
		  last_released ? "released" : "held");
#ifdef __s390__
	RFM_CHECK(!high_mapped, "a 31-bit task mapped %p", BIT31_HIGH);
	RFM_CHECK(!strcmp(released, "low"), "released %s: the link without bit 31 leads to "
		  "the lock at %p", released, (void *)low);
#else
	RFM_CHECK(!strcmp(released, high_mapped ? "high" : "none"),
		  "released %s: bit 31 is an address bit (the page there %s)", released,
		  high_mapped ? "mapped" : "refused");
#endif
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
#if !defined(__mips__) && !defined(__s390__)
	RFM_CASE(compat_list_above_3g),
#endif
	RFM_CASE(compat_offset_wraps_past_4g),
	RFM_CASE(compat_offset_wraps_below_0),
	RFM_CASE(list_on_highest_page),
	RFM_CASE(offset_back_from_highest_page),
	RFM_CASE(head_with_bit31_set),
	RFM_CASE(link_with_bit31_set),
};

RFM_MAIN(cases)
