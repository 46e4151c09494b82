// SPDX-License-Identifier: GPL-2.0
/*
 * race: the robust unlock race (glibc bug 14485) on every kernel, the
 * hazard the 2026 ABI removes (unlock_race.c shows it gone).
 *
 * The classic unlock, in user space, releases the word and then clears
 * list_op_pending. Single-stepped into every instruction of it in turn
 * and killed there (rfm_race.h), an owner leaves, at the one step
 * between the two stores, a released lock in its slot: with the memory
 * reused and holding the owner's TID, its exit walk writes
 * FUTEX_OWNER_DIED into it. This passes where the window is found and
 * corrupts, on stock as on the series: no kernel can close a window
 * user space opens. Held locks (a kill before the release) are
 * recovered.
 */
#include "rfm_race.h"	/* first: rfm_test.h defines _GNU_SOURCE */

static int classic_unlock_window_corrupts(void)
{
	struct rfm_race_tally t;

	RFM_REQUIRE_SINGLESTEP_OR_SKIP();
	RFM_CHECK(rfm_race_sweep(RFM_UNLOCK_CLASSIC, 0, NULL, &t) == 0,
		  "tracing: %s", strerror(errno));
	rfm_race_report(RFM_UNLOCK_CLASSIC, &t);
	RFM_CHECK(t.windows > 0, "no window found in %d runs", t.runs);
	RFM_CHECK(t.corrupted == t.windows, "%d windows, %d corrupted", t.windows,
		  t.corrupted);
	RFM_CHECK(t.lost == 0, "%d held locks not recovered", t.lost);
	RFM_CHECK(t.clobbered == 0, "%d runs wrote past the slot", t.clobbered);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE_TIMEOUT(classic_unlock_window_corrupts, 120),
};

RFM_MAIN(cases)
