// SPDX-License-Identifier: GPL-2.0
/*
 * smoke: the first cases of the contract, one source for every ABI.
 *
 * Registration round trip, a bad length, and the heart of the mechanism:
 * a process that dies holding a robust lock leaves FUTEX_OWNER_DIED in the
 * futex word. Names starting with "death_" are the cases the negative
 * control (a kernel without robust lists) must fail.
 */
#include "rfm_test.h"

static int set_get_roundtrip(void)
{
	struct robust_list_head head, *got = NULL;
	size_t len = 0;
	long set, get;
	int set_err, get_err;

	rfm_head_init(&head);
	set = rfm_set_robust_list(&head, sizeof(head));
	set_err = set ? errno : 0;
	get = rfm_get_robust_list(0, &got, &len);
	get_err = get ? errno : 0;

	rfm_obs("set_errno", "%s", rfm_errno_name(set_err));
	rfm_obs("get_errno", "%s", rfm_errno_name(get_err));
	rfm_obs("head_is_ours", "%d", got == &head);
	rfm_obs_abi("head_len", "%zu", len);

	RFM_CHECK(set == 0, "set_robust_list: %s", strerror(set_err));
	RFM_CHECK(get == 0, "get_robust_list: %s", strerror(get_err));
	RFM_CHECK(got == &head, "got %p, registered %p", (void *)got,
		  (void *)&head);
	RFM_CHECK(len == sizeof(head), "len %zu, sizeof(head) %zu", len,
		  sizeof(head));
	return RFM_PASS;
}

static int set_bad_length(void)
{
	struct robust_list_head head;
	long ret;
	int err;

	rfm_head_init(&head);
	ret = rfm_set_robust_list(&head, sizeof(head) + 1);
	err = ret ? errno : 0;
	rfm_obs("ret", "%ld", ret);
	rfm_obs("errno", "%s", rfm_errno_name(err));

	RFM_CHECK(ret == -1 && err == EINVAL, "ret %ld errno %s", ret,
		  rfm_errno_name(err));
	return RFM_PASS;
}

/* Child of death_one_lock: take the lock, list it, die without unlocking. */
static int hold_one_lock_and_exit(void *arg)
{
	struct robust_list_head *head = arg;
	struct rfm_lock *lock = (struct rfm_lock *)(head + 1);

	rfm_head_init(head);
	lock->futex = (uint32_t)rfm_gettid();
	rfm_list_add(head, lock);
	if (rfm_set_robust_list(head, sizeof(*head)))
		rfm_diag("child: set_robust_list: %s", strerror(errno));
	return 0;
}

static int death_one_lock(void)
{
	struct robust_list_head *head = rfm_shared(4096);
	struct rfm_lock *lock;
	int status;

	RFM_CHECK(head, "mmap: %s", strerror(errno));
	lock = (struct rfm_lock *)(head + 1);

	status = rfm_run_child(hold_one_lock_and_exit, head);
	RFM_CHECK(status >= 0 && WIFEXITED(status), "child status %#x", status);

	rfm_obs("word", "%#x", lock->futex);
	RFM_CHECK(lock->futex == FUTEX_OWNER_DIED,
		  "futex word %#x after the owner died, want %#x",
		  lock->futex, FUTEX_OWNER_DIED);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(set_get_roundtrip),
	RFM_CASE(set_bad_length),
	RFM_CASE(death_one_lock),
};

RFM_MAIN(cases)
