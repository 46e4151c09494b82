// SPDX-License-Identifier: GPL-2.0
/*
 * unlock_race: the robust unlock race gone with the 2026 ABI (the
 * series' patches 12 to 14), through each path, for this ABI's list
 * (native on x86_64 and arm64; compat on ia32, x32 and AArch32; native
 * 32-bit on i386 and armhf).
 *
 * The owner is single-stepped into every instruction of its unlock in
 * turn and killed there, with the memory reused and holding its TID
 * whenever the lock is already released (rfm_race.h; race.c shows the
 * classic unlock corrupt it). Here no step may find the lock released
 * with the slot still set, no kill may corrupt the reused memory, and
 * every kill before the release must still recover the lock:
 *
 *  - FUTEX_WAKE with FUTEX_ROBUST_UNLOCK: the system call is one step;
 *  - the vDSO try-unlock: the kernel clears the slot of a task a signal
 *    (here each single-step trap) finds after a successful cmpxchg and
 *    before the store to the slot; then each instruction of the function
 *    once more, reached by a hardware breakpoint, so that the stop there
 *    is the first signal of the unlock (a single step's stop before it
 *    has had the slot cleared already);
 *  - the vDSO try-unlock of a word with FUTEX_WAITERS: the cmpxchg fails
 *    (ZF clear inside the same instructions), the slot must stay, and
 *    the system call releases the lock.
 *
 * Nothing may be written past the slot (the kernel clears it with the
 * width of the function's list).
 *
 * The vDSO cases skip outside x86 (mainline has the vDSO part there
 * only), every case on 32-bit ARM kernels (no PTRACE_SINGLESTEP).
 */
#include "rfm_race.h"	/* first: rfm_test.h defines _GNU_SOURCE */

#define NO_VDSO "no vDSO robust try-unlock on this architecture (mainline has it on x86 only)"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_VDSO_UNLOCK 1
#else
#define HAVE_VDSO_UNLOCK 0
#endif

static int expect_no_window(enum rfm_unlock_path path, uint32_t bits, void *fn)
{
	struct rfm_race_tally t;

	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(rfm_race_sweep(path, bits, fn, &t) == 0, "tracing: %s",
		  strerror(errno));
	rfm_race_report(path, &t);
	RFM_CHECK(t.runs > 0, "no run");
	RFM_CHECK(t.windows == 0, "%d of %d kills in a window (the first at k=%d)",
		  t.windows, t.runs, t.first_window);
	RFM_CHECK(t.corrupted == 0, "%d corrupted", t.corrupted);
	RFM_CHECK(t.lost == 0, "%d held locks not recovered", t.lost);
	RFM_CHECK(t.clobbered == 0, "%d runs wrote past the slot", t.clobbered);
	return RFM_PASS;
}

static int syscall_unlock_has_no_window(void)
{
	RFM_REQUIRE_ROBUST_UNLOCK();
	return expect_no_window(RFM_UNLOCK_SYSCALL, FUTEX_WAITERS, NULL);
}

static int vdso_unlock(uint32_t bits)
{
	unsigned long size = 0;
	void *fn = rfm_own_try_unlock(&size);
	int ret;

	RFM_REQUIRE_ROBUST_UNLOCK();
	if (!fn && !HAVE_VDSO_UNLOCK)
		return rfm_skip(NO_VDSO);
	RFM_CHECK(fn, "this ABI's try-unlock is not in the vDSO");
	ret = expect_no_window(RFM_UNLOCK_VDSO, bits, fn);
	if (ret != RFM_PASS)
		return ret;
#if HAVE_VDSO_UNLOCK
	{
		struct rfm_race_tally t;

		/* Each instruction of the function as the first signal's stop */
		RFM_CHECK(rfm_race_break_sweep(RFM_UNLOCK_VDSO, bits, fn, size, &t) == 0,
			  "breakpoints: %s", strerror(errno));
		rfm_diag("breakpoints in the vDSO function (%lu bytes): %d runs, "
			 "%d in a window (the first at instruction %d), %d corrupted, "
			 "%d lost, %d clobbered", size, t.runs, t.windows, t.first_window,
			 t.corrupted, t.lost, t.clobbered);
		printf("# obs breakpoint_window=%s\n", t.windows ? "found" : "none");
		RFM_CHECK(t.runs > 0, "no instruction of the function reached");
		RFM_CHECK(t.windows == 0 && t.corrupted == 0 && t.lost == 0 &&
			  t.clobbered == 0, "stopped in the function: %d in a window, "
			  "%d corrupted, %d lost, %d clobbered", t.windows, t.corrupted,
			  t.lost, t.clobbered);
	}
#endif
	return RFM_PASS;
}

static int vdso_unlock_has_no_window(void)
{
	return vdso_unlock(0);
}

static int vdso_contended_unlock_has_no_window(void)
{
	return vdso_unlock(FUTEX_WAITERS);
}

static const struct rfm_case cases[] = {
	RFM_CASE_TIMEOUT(syscall_unlock_has_no_window, 120),
	RFM_CASE_TIMEOUT(vdso_unlock_has_no_window, 120),
	RFM_CASE_TIMEOUT(vdso_contended_unlock_has_no_window, 120),
};

RFM_MAIN(cases)
