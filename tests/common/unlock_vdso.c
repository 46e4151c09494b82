// SPDX-License-Identifier: GPL-2.0
/*
 * unlock_vdso: the robust futex try-unlocks of the vDSO (mainline v7.2; the
 * series' patch 14), found by name and version in the vDSO the auxiliary
 * vector names, and called from each ABI.
 *
 *   __u32 __vdso_futex_robust_list64_try_unlock(__u32 *lock, __u32 tid, __u64 *pop)
 *   __u32 __vdso_futex_robust_list32_try_unlock(__u32 *lock, __u32 tid, __u32 *pop)
 *
 * Each releases *lock if it holds exactly tid, then clears the 8- or
 * 4-byte slot at pop, and returns what it found in *lock. Mainline has
 * them on x86 only: the 64-bit and x32 images export both (list32 with
 * CONFIG_COMPAT), the 32-bit image (i386, ia32) list32. On ARM the cases
 * that call them skip, and the one that looks for them says they are
 * absent. What a signal does to a task inside one is unlock_race.c's.
 */
#include "rfm_unlock.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#define OTHER_TID	0x2bcdef01u
#define SENTINEL	0x5a5a5a5au

#if defined(__x86_64__)
#define WANT_LIST64	1	/* x86_64 and x32: the 64-bit or x32 image */
/* with CONFIG_COMPAT only, as in mainline (patch 14) */
#define WANT_LIST32	rfm_kernel_has_compat()
#elif defined(__i386__)
#define WANT_LIST64	0	/* the 32-bit image */
#define WANT_LIST32	1
#else
#define WANT_LIST64	0	/* no vDSO unlock outside x86 */
#define WANT_LIST32	0
#endif

#define NOT_HERE "no vDSO robust try-unlock on this architecture (mainline has it on x86 only)"

/*
 * This ABI's own try-unlock, for its list_op_pending: a pointer wide.
 * Returns what the function returned; *@found says whether there is one.
 */
static uint32_t own_try_unlock(uint32_t *lock, uint32_t tid, void *pop, int *found)
{
	void *fn = rfm_own_try_unlock(NULL);

	*found = fn != NULL;
	return fn ? rfm_own_try_unlock_call(fn, lock, tid, pop) : 0;
}

static int exports_where_mainline_has_them(void)
{
	void *l64 = rfm_vdso_sym(RFM_TRY_UNLOCK64, RFM_VDSO_VERSION);
	void *l32 = rfm_vdso_sym(RFM_TRY_UNLOCK32, RFM_VDSO_VERSION);
	struct rfm_vdso v;

	RFM_REQUIRE_ROBUST_UNLOCK();
	/* arm64 maps none for AArch32 tasks without CONFIG_COMPAT_VDSO */
	RFM_CHECK(rfm_vdso_open(&v) || !WANT_LIST32, "no vDSO in the auxiliary vector");
	printf("# obs list64=%s [target: the 64-bit and x32 images have it, the "
	       "32-bit one not; none outside x86]\n", l64 ? "exported" : "absent");
	printf("# obs list32=%s [target: every x86 image has it, the 64-bit and x32 ones "
	       "with CONFIG_COMPAT; none outside x86]\n",
	       l32 ? "exported" : "absent");
	RFM_CHECK(!!l64 == WANT_LIST64, "list64 %s", l64 ? "exported" : "absent");
	RFM_CHECK(!!l32 == WANT_LIST32, "list32 %s", l32 ? "exported" : "absent");
	/* Only at mainline's version: not at any other. */
	RFM_CHECK(!rfm_vdso_sym(RFM_TRY_UNLOCK32, "LINUX_2.5") &&
		  !rfm_vdso_sym(RFM_TRY_UNLOCK64, "LINUX_2.5"), "exported at LINUX_2.5");
	return RFM_PASS;
}

static int try_unlock_releases_and_clears(void)
{
	struct robust_list_head head;
	struct rfm_lock lock;
	uint32_t tid = (uint32_t)rfm_gettid(), ret;
	int found;

	RFM_REQUIRE_ROBUST_UNLOCK();
	rfm_head_init(&head);
	lock.futex = tid;
	head.list_op_pending = &lock.link;
	ret = own_try_unlock(&lock.futex, tid, &head.list_op_pending, &found);
	if (!found && !WANT_LIST32)
		return rfm_skip(NOT_HERE);
	RFM_CHECK(found, "this ABI's try-unlock is not in the vDSO");
	rfm_obs("ret", "%s", ret == tid ? "tid" : "other");
	rfm_obs("word", "%#x", lock.futex);
	rfm_obs("slot", "%s", head.list_op_pending ? "kept" : "cleared");
	RFM_CHECK(ret == tid, "returned %#x, tid %#x", ret, tid);
	RFM_CHECK(lock.futex == 0, "word %#x", lock.futex);
	RFM_CHECK(head.list_op_pending == NULL, "slot not cleared");
	return RFM_PASS;
}

/*
 * A word with FUTEX_WAITERS, or another owner's: returned as found, and
 * nothing written. User space then takes the system call.
 */
static int try_unlock_refuses_what_is_not_ours(void)
{
	uint32_t tid = (uint32_t)rfm_gettid();
	const uint32_t words[] = { tid | FUTEX_WAITERS, OTHER_TID, 0,
				   tid | FUTEX_OWNER_DIED };
	struct robust_list_head head;
	struct rfm_lock lock;
	int found = 0;

	RFM_REQUIRE_ROBUST_UNLOCK();
	rfm_head_init(&head);
	for (size_t i = 0; i < RFM_ARRAY_SIZE(words); i++) {
		uint32_t ret;

		lock.futex = words[i];
		head.list_op_pending = &lock.link;
		ret = own_try_unlock(&lock.futex, tid, &head.list_op_pending, &found);
		if (!found && !WANT_LIST32)
			return rfm_skip(NOT_HERE);
		RFM_CHECK(found, "this ABI's try-unlock is not in the vDSO");
		RFM_CHECK(ret == words[i], "word %#x: returned %#x", words[i], ret);
		RFM_CHECK(lock.futex == words[i], "word %#x became %#x", words[i],
			  lock.futex);
		RFM_CHECK(head.list_op_pending == &lock.link, "word %#x: slot written",
			  words[i]);
	}
	rfm_obs("refused", "%zu", RFM_ARRAY_SIZE(words));
	return RFM_PASS;
}

/* Each exported function clears exactly its slot's width. */
static int try_unlock_slot_widths(void)
{
	rfm_try_unlock64_fn l64 = rfm_vdso_sym(RFM_TRY_UNLOCK64, RFM_VDSO_VERSION);
	rfm_try_unlock32_fn l32 = rfm_vdso_sym(RFM_TRY_UNLOCK32, RFM_VDSO_VERSION);
	uint32_t tid = (uint32_t)rfm_gettid(), word;
	uint64_t buf[2];
	uint32_t *slot = (uint32_t *)buf;

	RFM_REQUIRE_ROBUST_UNLOCK();
	if (!l64 && !l32 && !WANT_LIST32)
		return rfm_skip(NOT_HERE);
	RFM_CHECK(!!l64 == WANT_LIST64 && !!l32 == WANT_LIST32, "exports differ");
	if (l64) {
		word = tid;
		slot[0] = slot[1] = slot[2] = SENTINEL;
		RFM_CHECK(l64(&word, tid, (uint64_t *)slot) == tid && !word,
			  "list64 did not release");
		RFM_CHECK(!slot[0] && !slot[1] && slot[2] == SENTINEL,
			  "list64 cleared %#x %#x %#x", slot[0], slot[1], slot[2]);
	}
	if (l32) {
		word = tid;
		slot[0] = slot[1] = slot[2] = SENTINEL;
		RFM_CHECK(l32(&word, tid, slot) == tid && !word, "list32 did not release");
		RFM_CHECK(!slot[0] && slot[1] == SENTINEL && slot[2] == SENTINEL,
			  "list32 cleared %#x %#x %#x", slot[0], slot[1], slot[2]);
	}
	printf("# obs widths=%s%s [target: the functions each image has]\n",
	       l64 ? "8" : "", l32 ? (l64 ? ",4" : "4") : "");
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(exports_where_mainline_has_them),
	RFM_CASE(try_unlock_releases_and_clears),
	RFM_CASE(try_unlock_refuses_what_is_not_ours),
	RFM_CASE(try_unlock_slot_widths),
};

RFM_MAIN(cases)
