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

#define NO_IA32 "no IA32 emulation: int $0x80 from a 64-bit task is a #GP (x86_64-noia32)"

#define IA32_SET_ROBUST_LIST 311
#define IA32_GET_ROBUST_LIST 312
/* argv[1] of the image exec'd by compat_head_cleared_at_exec */
#define REPORT_COMPAT_HEAD "--rfm-report-compat-head"

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

static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a" (ret) : "a" (nr), "b" (a), "c" (b),
			 "d" (c) : "memory");
	return ret;
}

static uint32_t low(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

/* Memory below 4 GiB, where 32-bit pointers can reach. */
static void *low_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The compat head and size, as get_robust_list() through int $0x80. */
struct compat_view {
	uint32_t head;
	uint32_t len;
	long ret;
};

static void get_compat(struct compat_view *v)
{
	v->head = v->len = 0xa5a5a5a5;
	v->ret = int80(IA32_GET_ROBUST_LIST, 0, low(&v->head), low(&v->len));
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
	b->compat_ret = int80(IA32_SET_ROBUST_LIST, (long)low(h32), sizeof(*h32), 0);
	return b->compat_ret ? 2 : 0;
}

static int death_native_and_compat_lists(void)
{
	struct both *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	struct ilp32_lock *l32;
	int status;

	if (!rfm_ia32_emulation())
		return rfm_skip(NO_IA32);
	RFM_CHECK(rfm_ia32_emulation() == 1, "int $0x80 neither works nor faults");

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

/*
 * ROBUST_LIST_LIMIT bounds each walk, not the task: with 2048 locks on
 * the native list and 2048 on the compat one, all 4096 are released.
 */
#define EACH	ROBUST_LIST_LIMIT

struct full_lists {
	struct robust_list_head head;
	struct ilp32_robust_list_head head32;
	struct rfm_lock lock[EACH];
	struct ilp32_lock lock32[EACH];
};

static int owner_two_full_lists(void *arg)
{
	struct full_lists *f = arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	rfm_head_init(&f->head);
	f->head32.list.next = low(&f->head32.list);
	f->head32.futex_offset = offsetof(struct ilp32_lock, futex);
	f->head32.list_op_pending = 0;
	for (int i = 0; i < EACH; i++) {
		f->lock[i].futex = tid;
		rfm_list_add(&f->head, &f->lock[i]);
		f->lock32[i].futex = tid;
		f->lock32[i].link.next = f->head32.list.next;
		f->head32.list.next = low(&f->lock32[i].link);
	}
	if (rfm_set_robust_list(&f->head, sizeof(f->head)))
		return 1;
	return int80(IA32_SET_ROBUST_LIST, (long)low(&f->head32),
		     sizeof(f->head32), 0) ? 2 : 0;
}

static int death_each_list_has_its_own_limit(void)
{
	struct full_lists *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	int native = 0, compat = 0, status;

	if (!rfm_ia32_emulation())
		return rfm_skip(NO_IA32);
	RFM_CHECK(rfm_ia32_emulation() == 1, "int $0x80 neither works nor faults");

	RFM_CHECK(f != MAP_FAILED, "mmap(MAP_32BIT): %s", strerror(errno));
	status = rfm_run_child(owner_two_full_lists, f);
	for (int i = 0; i < EACH; i++) {
		native += f->lock[i].futex == FUTEX_OWNER_DIED;
		compat += f->lock32[i].futex == FUTEX_OWNER_DIED;
	}
	rfm_obs("native_released", "%d", native);
	rfm_obs("compat_released", "%d", compat);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner status %#x (1: native set, 2: int $0x80 set failed)", status);
	RFM_CHECK(native == EACH && compat == EACH, "released %d native and %d compat "
		  "of %d each", native, compat, EACH);
	return RFM_PASS;
}

/*
 * get_robust_list() through int $0x80 is the compat call: it reports the
 * compat head, as a 32-bit pointer, and 12 bytes, not the native 24.
 */
static int int80_get_reads_compat_head(void)
{
	struct ilp32_robust_list_head *h32 = low_page();
	struct compat_view *v = low_page();
	struct robust_list_head native, *got = NULL;
	size_t len = 0;
	long ret;

	if (!rfm_ia32_emulation())
		return rfm_skip(NO_IA32);
	RFM_CHECK(rfm_ia32_emulation() == 1, "int $0x80 neither works nor faults");

	RFM_CHECK(h32 && v, "mmap(MAP_32BIT): %s", strerror(errno));
	rfm_head_init(&native);
	h32->list.next = low(&h32->list);
	RFM_CHECK(rfm_set_robust_list(&native, sizeof(native)) == 0, "set: %s",
		  strerror(errno));
	ret = int80(IA32_SET_ROBUST_LIST, (long)low(h32), sizeof(*h32), 0);
	RFM_CHECK(ret == 0, "int $0x80 set_robust_list: %ld", ret);
	get_compat(v);
	rfm_obs("int80_get", "%ld", v->ret);
	rfm_obs("int80_head_is_compat", "%d", v->head == low(h32));
	rfm_obs("int80_len", "%u", v->len);
	RFM_CHECK(v->ret == 0 && v->head == low(h32) && v->len == 12,
		  "int $0x80 get: ret %ld head %#x (want %#x) len %u", v->ret,
		  v->head, low(h32), v->len);
	/* The native call still reports the native list. */
	RFM_CHECK(rfm_get_robust_list(0, &got, &len) == 0 && got == &native &&
		  len == sizeof(native), "native get: %p %zu", (void *)got, len);
	return RFM_PASS;
}

/*
 * exec() clears both list heads. The new image's C library registers a
 * native head at start-up, but nothing registers a compat one: it must
 * read back as 0 in the exec'd image.
 */
static int compat_head_cleared_at_exec(void)
{
	struct ilp32_robust_list_head *h32 = low_page();
	int status;
	pid_t pid;

	if (!rfm_ia32_emulation())
		return rfm_skip(NO_IA32);
	RFM_CHECK(rfm_ia32_emulation() == 1, "int $0x80 neither works nor faults");

	RFM_CHECK(h32, "mmap(MAP_32BIT): %s", strerror(errno));
	h32->list.next = low(&h32->list);
	pid = fork();
	if (pid == 0) {
		if (int80(IA32_SET_ROBUST_LIST, (long)low(h32), sizeof(*h32), 0))
			_exit(10);
		execl("/proc/self/exe", "compat_int80", REPORT_COMPAT_HEAD, (char *)NULL);
		_exit(11);
	}
	RFM_CHECK(pid > 0, "fork: %s", strerror(errno));
	waitpid(pid, &status, 0);
	rfm_obs("after_exec", "%s", !WIFEXITED(status) ? "killed" :
		WEXITSTATUS(status) == 0 ? "compat head 0" :
		WEXITSTATUS(status) == 1 ? "compat head kept" : "error");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "status %#x (1: the compat head survived exec)", status);
	return RFM_PASS;
}

/* In the exec'd image: exit 0 if the compat head is 0, 1 if not. */
static int report_compat_head(void)
{
	struct compat_view *v = low_page();

	if (!v)
		return 2;
	get_compat(v);
	return v->ret ? 3 : v->head != 0;
}

static const struct rfm_case cases[] = {
	RFM_CASE(death_native_and_compat_lists),
	RFM_CASE(death_each_list_has_its_own_limit),
	RFM_CASE(int80_get_reads_compat_head),
	RFM_CASE(compat_head_cleared_at_exec),
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], REPORT_COMPAT_HEAD))
		return report_compat_head();
	return rfm_main(argc, argv, cases, RFM_ARRAY_SIZE(cases));
}
