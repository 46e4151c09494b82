// SPDX-License-Identifier: GPL-2.0
/*
 * x32_native_list: an x32 task with a 64-bit robust list as well.
 *
 * An x32 task makes x32 system calls (the number with __X32_SYSCALL_BIT:
 * set_robust_list is 530, a compat call with the 12-byte head) but may
 * also make plain 64-bit ones: 273 without the bit reaches the native
 * sys_set_robust_list(), which takes the 24-byte LP64 head. A task can so
 * register one list of each kind, and the kernel must walk both at its
 * death, clear both at exec, and report the native one through 274.
 * (Emulators and mixed-ABI runtimes do this; the ia32 twin is
 * tests64/compat_int80.c.)
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#define NR64_SET_ROBUST_LIST	273	/* no __X32_SYSCALL_BIT: the 64-bit table */
#define NR64_GET_ROBUST_LIST	274
/* argv[1] of the image exec'd by native_head_cleared_at_exec */
#define REPORT_NATIVE_HEAD	"--rfm-report-native-head"

/* The LP64 layouts, spelled out with 64-bit fields. */
struct lp64_robust_list_head {
	uint64_t next;
	int64_t futex_offset;
	uint64_t list_op_pending;
};

struct lp64_lock {
	uint64_t next;
	uint32_t futex;
};

/* A native list of one lock, in shared memory. */
struct native_list {
	struct lp64_robust_list_head head;
	struct lp64_lock lock;
	long ret;
};

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void native_list_init(struct native_list *n)
{
	n->head.next = addr(&n->lock);
	n->head.futex_offset = offsetof(struct lp64_lock, futex);
	n->head.list_op_pending = 0;
	n->lock.next = addr(&n->head);
}

static long set_native(struct native_list *n)
{
	return syscall(NR64_SET_ROBUST_LIST, &n->head, sizeof(n->head));
}

struct both {
	struct native_list native;
	struct robust_list_head head;		/* the x32 (compat) list */
	struct rfm_lock lock;
};

static int owner_both(void *arg)
{
	struct both *b = arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	native_list_init(&b->native);
	b->native.lock.futex = tid;
	rfm_head_init(&b->head);
	b->lock.futex = tid;
	rfm_list_add(&b->head, &b->lock);
	b->native.ret = set_native(&b->native);
	if (b->native.ret)
		return 1;
	return rfm_set_robust_list(&b->head, sizeof(b->head)) ? 2 : 0;
}

static int death_native_and_x32_lists(void)
{
	struct both *b = rfm_shared(sizeof(*b));
	int status;

	RFM_CHECK(b, "mmap");
	status = rfm_run_child(owner_both, b);
	rfm_obs("set_273", "%ld", b->native.ret);
	rfm_obs("native_word", "%#x", b->native.lock.futex);
	rfm_obs("x32_word", "%#x", b->lock.futex);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner status %#x (1: 273 failed, 2: 530 failed)", status);
	RFM_CHECK(b->native.lock.futex == FUTEX_OWNER_DIED, "native list: word %#x",
		  b->native.lock.futex);
	RFM_CHECK(b->lock.futex == FUTEX_OWNER_DIED, "x32 list: word %#x",
		  b->lock.futex);
	return RFM_PASS;
}

/*
 * ROBUST_LIST_LIMIT bounds each walk, not the task: 2048 locks on the
 * native list and 2048 on the x32 one, all 4096 released.
 */
#define EACH	ROBUST_LIST_LIMIT

struct full_lists {
	struct lp64_robust_list_head head64;
	struct lp64_lock lock64[EACH];
	struct robust_list_head head;
	struct rfm_lock lock[EACH];
};

static int owner_two_full_lists(void *arg)
{
	struct full_lists *f = arg;
	uint32_t tid = (uint32_t)rfm_gettid();

	f->head64.next = addr(&f->head64);
	f->head64.futex_offset = offsetof(struct lp64_lock, futex);
	f->head64.list_op_pending = 0;
	rfm_head_init(&f->head);
	for (int i = 0; i < EACH; i++) {
		f->lock64[i].futex = tid;
		f->lock64[i].next = f->head64.next;
		f->head64.next = addr(&f->lock64[i]);
		f->lock[i].futex = tid;
		rfm_list_add(&f->head, &f->lock[i]);
	}
	if (syscall(NR64_SET_ROBUST_LIST, &f->head64, sizeof(f->head64)))
		return 1;
	return rfm_set_robust_list(&f->head, sizeof(f->head)) ? 2 : 0;
}

static int death_each_list_has_its_own_limit(void)
{
	struct full_lists *f = rfm_shared(sizeof(*f));
	int native = 0, x32 = 0, status;

	RFM_CHECK(f, "mmap");
	status = rfm_run_child(owner_two_full_lists, f);
	for (int i = 0; i < EACH; i++) {
		native += f->lock64[i].futex == FUTEX_OWNER_DIED;
		x32 += f->lock[i].futex == FUTEX_OWNER_DIED;
	}
	rfm_obs("native_released", "%d", native);
	rfm_obs("compat_released", "%d", x32);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "owner status %#x (1: 273 failed, 2: 530 failed)", status);
	RFM_CHECK(native == EACH && x32 == EACH, "released %d native and %d x32 of "
		  "%d each", native, x32, EACH);
	return RFM_PASS;
}

/* 274 reports the native head in 8 bytes and its size, 24. */
static int native_get_reports_lp64_head(void)
{
	struct native_list *n = rfm_shared(sizeof(*n));
	uint64_t head = 0, len = 0;
	long ret;

	RFM_CHECK(n, "mmap");
	native_list_init(n);
	RFM_CHECK(set_native(n) == 0, "273: %s", strerror(errno));
	ret = syscall(NR64_GET_ROBUST_LIST, 0, &head, &len);
	rfm_obs("get_274", "%ld", ret);
	rfm_obs("head_is_native", "%d", head == addr(&n->head));
	rfm_obs("len", "%llu", (unsigned long long)len);
	RFM_CHECK(ret == 0 && head == addr(&n->head) && len == 24,
		  "274: ret %ld head %#llx len %llu", ret, (unsigned long long)head,
		  (unsigned long long)len);
	return RFM_PASS;
}

/*
 * exec() clears the native head too: the new image's C library registers
 * only its x32 head, so 274 must report 0 there.
 */
static int native_head_cleared_at_exec(void)
{
	struct native_list *n = rfm_shared(sizeof(*n));
	int status;
	pid_t pid;

	RFM_CHECK(n, "mmap");
	native_list_init(n);
	pid = fork();
	if (pid == 0) {
		if (set_native(n))
			_exit(10);
		execl("/proc/self/exe", "x32_native_list", REPORT_NATIVE_HEAD,
		      (char *)NULL);
		_exit(11);
	}
	RFM_CHECK(pid > 0, "fork: %s", strerror(errno));
	waitpid(pid, &status, 0);
	rfm_obs("after_exec", "%s", !WIFEXITED(status) ? "killed" :
		WEXITSTATUS(status) == 0 ? "native head 0" :
		WEXITSTATUS(status) == 1 ? "native head kept" : "error");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "status %#x (1: the native head survived exec)", status);
	return RFM_PASS;
}

/* In the exec'd image: exit 0 if the native head is 0, 1 if not. */
static int report_native_head(void)
{
	uint64_t head = 1, len = 0;

	if (syscall(NR64_GET_ROBUST_LIST, 0, &head, &len))
		return 3;
	return head != 0;
}

static const struct rfm_case cases[] = {
	RFM_CASE(death_native_and_x32_lists),
	RFM_CASE(death_each_list_has_its_own_limit),
	RFM_CASE(native_get_reports_lp64_head),
	RFM_CASE(native_head_cleared_at_exec),
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], REPORT_NATIVE_HEAD))
		return report_native_head();
	return rfm_main(argc, argv, cases, RFM_ARRAY_SIZE(cases));
}
