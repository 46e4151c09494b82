/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rfm_unlock.h - the 2026 robust-unlock ABI, as user space calls it.
 *
 * FUTEX_ROBUST_UNLOCK makes FUTEX_WAKE, FUTEX_WAKE_BITSET and
 * FUTEX_UNLOCK_PI release the lock and clear the robust list's
 * pending-op slot (uaddr2) in one system call; FUTEX_ROBUST_LIST32 says
 * the slot is 32 bits wide. The values are mainline's (v7.2,
 * include/uapi/linux/futex.h): the system's 6.1 headers do not have
 * them, the series' exported headers do (make abi checks they agree).
 */
#ifndef RFM_UNLOCK_H
#define RFM_UNLOCK_H

#include "rfm_test.h"
#include "rfm_vdso.h"

#ifndef FUTEX_ROBUST_UNLOCK
#define FUTEX_ROBUST_UNLOCK	512
#endif
#ifndef FUTEX_ROBUST_LIST32
#define FUTEX_ROBUST_LIST32	1024
#endif

/*
 * The modifiers for this ABI's own list_op_pending: a pointer of user
 * space, so 32 bits wide on ILP32 (ia32, i386, x32, AArch32, armhf).
 */
#define RFM_OWN_SLOT	(sizeof(void *) == 4 ? FUTEX_ROBUST_LIST32 : 0)
#define RFM_ROBUST_UNLOCK_OWN	(FUTEX_ROBUST_UNLOCK | RFM_OWN_SLOT)

/*
 * The ways a robust lock is released: the classic unlock of every C
 * library (release the word, then clear list_op_pending in user space),
 * FUTEX_WAKE with FUTEX_ROBUST_UNLOCK, and the vDSO try-unlock (the
 * system call when the word has waiters).
 */
enum rfm_unlock_path { RFM_UNLOCK_CLASSIC, RFM_UNLOCK_SYSCALL, RFM_UNLOCK_VDSO };

static const char *const rfm_unlock_path_names[] = { "classic", "syscall", "vdso" };

/* futex(uaddr, op, val, NULL, uaddr2, val3), by raw system call. */
static inline long rfm_futex_op(uint32_t *uaddr, int op, uint32_t val,
				void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, uaddr2, val3);
}

/*
 * Release @word, which the caller owns, through FUTEX_WAKE with
 * FUTEX_ROBUST_UNLOCK, and clear @slot (list_op_pending of this ABI's
 * head). Returns the system call's result.
 */
static inline long rfm_robust_unlock_wake(uint32_t *word, void *slot, int nr)
{
	return rfm_futex_op(word, FUTEX_WAKE | RFM_ROBUST_UNLOCK_OWN, nr, slot, 0);
}

/*
 * Does this kernel have FUTEX_ROBUST_UNLOCK? A private word of our own
 * and a slot of our own: the call must release the one and clear the
 * other. The answer is an observation ("robust_unlock=ok", or what went
 * wrong), so a kernel without it shows why each case fails.
 */
static inline int rfm_have_robust_unlock(void)
{
	uint32_t word = (uint32_t)rfm_gettid();
	void *slot = &word;
	long ret = rfm_futex_op(&word, FUTEX_WAKE_PRIVATE | RFM_ROBUST_UNLOCK_OWN,
				1, &slot, 0);
	int err = errno;

	if (ret == 0 && word == 0 && slot == NULL) {
		rfm_obs("robust_unlock", "ok");
		return 1;
	}
	if (ret < 0)
		rfm_obs("robust_unlock", "%s", rfm_errno_name(err));
	else
		rfm_obs("robust_unlock", "ret=%ld word=%#x slot_cleared=%d", ret,
			word, slot == NULL);
	return 0;
}

/*
 * This ABI's own vDSO try-unlock, the one for a list_op_pending a pointer
 * wide, or NULL where the vDSO has none (stock, ARM); its size in *@size
 * if @size is not NULL.
 */
static inline void *rfm_own_try_unlock(unsigned long *size)
{
	return rfm_vdso_func(sizeof(void *) == 8 ? RFM_TRY_UNLOCK64 : RFM_TRY_UNLOCK32,
			     RFM_VDSO_VERSION, size);
}

/*
 * Call @fn, from rfm_own_try_unlock(), on @word held by @tid, with @slot
 * this ABI's list_op_pending. Returns what the function found in the
 * word: @tid if it released the lock and cleared the slot.
 */
static inline uint32_t rfm_own_try_unlock_call(void *fn, uint32_t *word,
					       uint32_t tid, void *slot)
{
	if (sizeof(void *) == 8)
		return ((rfm_try_unlock64_fn)fn)(word, tid, slot);
	return ((rfm_try_unlock32_fn)fn)(word, tid, slot);
}

#define RFM_REQUIRE_ROBUST_UNLOCK() \
	RFM_CHECK(rfm_have_robust_unlock(), "this kernel has no FUTEX_ROBUST_UNLOCK")

#endif /* RFM_UNLOCK_H */
