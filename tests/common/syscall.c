// SPDX-License-Identifier: GPL-2.0
/*
 * syscall: set_robust_list() and get_robust_list() as a caller sees them,
 * by raw system call, for the caller's own ABI (24-byte head on x86_64,
 * 12-byte head on ia32 and i386).
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <limits.h>
#include <pthread.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>

#define NOBODY 65534
#define SOMEONE 4242	/* a uid of nobody in particular, other than NOBODY */

/* Report errno by name; the return value too, it must be 0 or -1. */
static void obs_call(const char *what, long ret, int err)
{
	printf("# obs %s=%ld/%s\n", what, ret, ret ? rfm_errno_name(err) : "0");
}

/*
 * Register a head, then call set_robust_list(@len) with another: a call
 * that fails changes nothing, the first head stays registered; one that
 * succeeds replaces it.
 */
static int set_len(size_t len, int want_errno)
{
	struct robust_list_head before, head, *got = NULL;
	size_t got_len = 0;
	long first, ret;
	int first_err;

	rfm_head_init(&before);
	rfm_head_init(&head);
	first = rfm_set_robust_list(&before, sizeof(before));
	first_err = errno;
	ret = rfm_set_robust_list(&head, len);
	obs_call("set", ret, errno);
	if (want_errno)
		RFM_CHECK(ret == -1 && errno == want_errno, "ret %ld errno %s",
			  ret, rfm_errno_name(errno));
	else
		RFM_CHECK(ret == 0, "ret %ld errno %s", ret, rfm_errno_name(errno));
	RFM_CHECK(first == 0, "set up: set_robust_list: %s", rfm_errno_name(first_err));
	RFM_CHECK(rfm_get_robust_list(0, &got, &got_len) == 0, "get: %s",
		  rfm_errno_name(errno));
	rfm_obs("registered", "%s", got == &head ? "new" : got == &before ?
		"previous" : "other");
	RFM_CHECK(got == (want_errno ? &before : &head), "registered %p: before %p, "
		  "new %p", (void *)got, (void *)&before, (void *)&head);
	return RFM_PASS;
}

static int set_len_exact(void)
{
	return set_len(sizeof(struct robust_list_head), 0);
}

static int set_len_one_short(void)
{
	return set_len(sizeof(struct robust_list_head) - 1, EINVAL);
}

static int set_len_one_long(void)
{
	return set_len(sizeof(struct robust_list_head) + 1, EINVAL);
}

static int set_len_zero(void)
{
	return set_len(0, EINVAL);
}

static int set_len_huge(void)
{
	return set_len((size_t)-1, EINVAL);
}

/* The other ABI's size is wrong for this one: 12 on 64-bit, 24 on 32. */
static int set_len_other_abi(void)
{
	return set_len(sizeof(long) == 8 ? 12 : 24, EINVAL);
}

static int set_null_head(void)
{
	struct robust_list_head head, *got = &head;
	size_t len = 0;
	long ret;

	ret = rfm_set_robust_list(NULL, sizeof(head));
	obs_call("set", ret, errno);
	RFM_CHECK(ret == 0, "set_robust_list(NULL): %s", rfm_errno_name(errno));
	ret = rfm_get_robust_list(0, &got, &len);
	obs_call("get", ret, errno);
	rfm_obs("head_is_null", "%d", got == NULL);
	RFM_CHECK(ret == 0 && got == NULL, "get: ret %ld head %p", ret, (void *)got);
	return RFM_PASS;
}

/* ---- get_robust_list: whose list, and what it writes ---- */

static int get_for(pid_t pid, struct robust_list_head *want)
{
	struct robust_list_head *got = NULL;
	size_t len = 0;
	long ret = rfm_get_robust_list(pid, &got, &len);

	obs_call("get", ret, errno);
	rfm_obs("head_matches", "%d", got == want);
	rfm_obs_abi("len", "%zu", len);
	RFM_CHECK(ret == 0, "get_robust_list(%d): %s", pid, rfm_errno_name(errno));
	RFM_CHECK(got == want, "got %p want %p", (void *)got, (void *)want);
	RFM_CHECK(len == sizeof(*want), "len %zu", len);
	return RFM_PASS;
}

static int get_pid_zero(void)
{
	struct robust_list_head head;

	rfm_head_init(&head);
	RFM_CHECK(rfm_set_robust_list(&head, sizeof(head)) == 0, "set: %s",
		  rfm_errno_name(errno));
	return get_for(0, &head);
}

static int get_own_tid(void)
{
	struct robust_list_head head;

	rfm_head_init(&head);
	RFM_CHECK(rfm_set_robust_list(&head, sizeof(head)) == 0, "set: %s",
		  rfm_errno_name(errno));
	return get_for(rfm_gettid(), &head);
}

struct thread_report {
	struct robust_list_head head;
	volatile pid_t tid;
	volatile int done;
};

static void *register_and_wait(void *arg)
{
	struct thread_report *r = arg;

	rfm_head_init(&r->head);
	rfm_set_robust_list(&r->head, sizeof(r->head));
	r->tid = rfm_gettid();
	while (!r->done)
		usleep(1000);
	return NULL;
}

static int get_other_thread(void)
{
	struct thread_report r = { 0 };
	pthread_t t;
	int result;

	RFM_CHECK(pthread_create(&t, NULL, register_and_wait, &r) == 0,
		  "pthread_create");
	while (!r.tid)
		usleep(1000);
	result = get_for(r.tid, &r.head);
	r.done = 1;
	pthread_join(t, NULL);
	return result;
}

/*
 * pid 0 from a thread that is not the group leader: its own head, not
 * the leader's (which is registered too, and differs).
 */
struct own_report {
	struct robust_list_head head;
	struct robust_list_head *got;
	long ret;
};

static void *get_zero_in_thread(void *arg)
{
	struct own_report *r = arg;
	size_t len;

	rfm_head_init(&r->head);
	rfm_set_robust_list(&r->head, sizeof(r->head));
	r->ret = rfm_get_robust_list(0, &r->got, &len);
	return NULL;
}

static int get_pid_zero_in_thread(void)
{
	struct robust_list_head leader;
	struct own_report r = { .ret = -1 };
	pthread_t t;

	rfm_head_init(&leader);
	RFM_CHECK(rfm_set_robust_list(&leader, sizeof(leader)) == 0, "set: %s",
		  rfm_errno_name(errno));
	RFM_CHECK(pthread_create(&t, NULL, get_zero_in_thread, &r) == 0,
		  "pthread_create");
	pthread_join(t, NULL);
	rfm_obs("thread_head", "%s", r.got == &r.head ? "own" :
		r.got == &leader ? "leader's" : "other");
	RFM_CHECK(r.ret == 0, "get_robust_list(0) in a thread failed");
	RFM_CHECK(r.got == &r.head, "got %p, own head %p, leader's %p",
		  (void *)r.got, (void *)&r.head, (void *)&leader);
	return RFM_PASS;
}

/* A child registers a head at an address the parent can name. */
static int get_other_process(void)
{
	struct thread_report *r = rfm_shared(sizeof(*r));
	pid_t pid;
	int result;

	RFM_CHECK(r, "mmap");
	pid = fork();
	if (pid == 0) {
		rfm_head_init(&r->head);
		rfm_set_robust_list(&r->head, sizeof(r->head));
		r->tid = rfm_gettid();
		while (!r->done)
			usleep(1000);
		_exit(0);
	}
	while (!r->tid)
		usleep(1000);
	result = get_for(pid, &r->head);
	r->done = 1;
	waitpid(pid, NULL, 0);
	return result;
}

static int get_no_such_task(void)
{
	struct robust_list_head *got;
	size_t len;
	long ret;
	pid_t pid = fork();

	/* A pid that was just reaped and, in a quiet guest, not reused. */
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	ret = rfm_get_robust_list(pid, &got, &len);
	obs_call("get", ret, errno);
	RFM_CHECK(ret == -1 && errno == ESRCH, "ret %ld errno %s", ret,
		  rfm_errno_name(errno));
	ret = rfm_get_robust_list(INT_MAX, &got, &len);
	RFM_CHECK(ret == -1 && errno == ESRCH, "pid INT_MAX: ret %ld errno %s",
		  ret, rfm_errno_name(errno));
	return RFM_PASS;
}

/* A page that faults on any access. */
static void *bad_address(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The size goes out before the head: with a bad head pointer the call
 * fails with EFAULT, but *len_ptr has already been written.
 */
static int get_bad_head_ptr(void)
{
	size_t len = 0;
	long ret = rfm_get_robust_list(0, bad_address(), &len);

	obs_call("get", ret, errno);
	rfm_obs_abi("len_written", "%zu", len);
	RFM_CHECK(ret == -1 && errno == EFAULT, "ret %ld errno %s", ret,
		  rfm_errno_name(errno));
	RFM_CHECK(len == sizeof(struct robust_list_head),
		  "len %zu: the size was not written before the head", len);
	return RFM_PASS;
}

static int get_bad_len_ptr(void)
{
	struct robust_list_head *got;
	long ret = rfm_get_robust_list(0, &got, bad_address());

	obs_call("get", ret, errno);
	RFM_CHECK(ret == -1 && errno == EFAULT, "ret %ld errno %s", ret,
		  rfm_errno_name(errno));
	return RFM_PASS;
}

/*
 * get_robust_list writes exactly one word of the caller's ABI to each
 * pointer: 8 bytes on x86_64, 4 on ia32 (through compat) and i386. Each
 * pointer aims 8 bytes into a guarded buffer; the call runs twice, with
 * two guard patterns, so a byte the kernel wrote differs from the guard
 * in at least one run even if its value happens to equal the other.
 */
struct written {
	int count;	/* bytes the kernel wrote */
	int first;	/* offset of the first one; 8 is where we pointed */
};

static int measure_writes(struct written *head_w, struct written *len_w)
{
	unsigned char hbuf[2][32], lbuf[2][32];
	const unsigned char guard[2] = { 0xa5, 0x5a };

	for (int run = 0; run < 2; run++) {
		memset(hbuf[run], guard[run], 32);
		memset(lbuf[run], guard[run], 32);
		if (rfm_get_robust_list(0, hbuf[run] + 8, lbuf[run] + 8))
			return -1;
	}
	*head_w = (struct written){ 0, -1 };
	*len_w = (struct written){ 0, -1 };
	for (int i = 0; i < 32; i++) {
		if (hbuf[0][i] != guard[0] || hbuf[1][i] != guard[1]) {
			head_w->first = head_w->first < 0 ? i : head_w->first;
			head_w->count++;
		}
		if (lbuf[0][i] != guard[0] || lbuf[1][i] != guard[1]) {
			len_w->first = len_w->first < 0 ? i : len_w->first;
			len_w->count++;
		}
	}
	return 0;
}

static int get_writes_one_word(void)
{
	struct robust_list_head head;
	struct written hw, lw;

	rfm_head_init(&head);
	RFM_CHECK(rfm_set_robust_list(&head, sizeof(head)) == 0, "set: %s",
		  rfm_errno_name(errno));
	RFM_CHECK(measure_writes(&hw, &lw) == 0, "get: %s", rfm_errno_name(errno));
	rfm_obs_abi("head_bytes_written", "%d", hw.count);
	rfm_obs_abi("len_bytes_written", "%d", lw.count);
	rfm_obs("written_at_pointer", "%d", hw.first == 8 && lw.first == 8);
	RFM_CHECK(hw.first == 8 && hw.count == (int)sizeof(void *),
		  "head: %d bytes from offset %d", hw.count, hw.first);
	RFM_CHECK(lw.first == 8 && lw.count == (int)sizeof(size_t),
		  "len: %d bytes from offset %d", lw.count, lw.first);
	return RFM_PASS;
}

/* ---- permissions: ptrace read access to the target is needed ---- */

static int as_nobody(void)
{
	if (setgid(NOBODY) || setuid(NOBODY))
		return -1;
	/* setuid() made us non-dumpable, which would hide us from our own
	 * uid as well; the same-uid case needs an ordinary process. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

static int get_perm_other_uid(void)
{
	struct robust_list_head *got;
	size_t len;
	int *res = rfm_shared(sizeof(int) * 2), status;
	pid_t root_pid = getpid(), pid;

	RFM_CHECK(res, "mmap");
	if (getuid() != 0)
		return rfm_skip("needs root to become nobody");
	pid = fork();
	if (pid == 0) {
		if (as_nobody())
			_exit(2);
		res[0] = (int)rfm_get_robust_list(root_pid, &got, &len);
		res[1] = errno;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %#x", status);
	obs_call("get", res[0], res[1]);
	RFM_CHECK(res[0] == -1 && res[1] == EPERM, "ret %d errno %s", res[0],
		  rfm_errno_name(res[1]));
	return RFM_PASS;
}

static int get_perm_same_uid(void)
{
	struct thread_report *r = rfm_shared(sizeof(*r));
	int *res = rfm_shared(sizeof(int) * 3), status;
	pid_t pid;

	RFM_CHECK(r && res, "mmap");
	if (getuid() != 0)
		return rfm_skip("needs root to become nobody");
	pid = fork();
	if (pid == 0) {
		pid_t asker;

		if (as_nobody())
			_exit(2);
		rfm_head_init(&r->head);
		rfm_set_robust_list(&r->head, sizeof(r->head));
		r->tid = getpid();
		asker = fork();
		if (asker == 0) {
			struct robust_list_head *got = NULL;
			size_t len;

			res[0] = (int)rfm_get_robust_list(r->tid, &got, &len);
			res[1] = errno;
			res[2] = got == &r->head;
			_exit(0);
		}
		waitpid(asker, NULL, 0);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %#x", status);
	obs_call("get", res[0], res[1]);
	rfm_obs("head_matches", "%d", res[2]);
	RFM_CHECK(res[0] == 0 && res[2], "ret %d errno %s", res[0],
		  rfm_errno_name(res[1]));
	return RFM_PASS;
}

/*
 * A process of nobody's (dumpable, so that nobody may read it) with a
 * registered head, waiting for @r->done; NULL on failure. Then, from the
 * root process, ask for its head as another process with real uid @ruid
 * and effective (and so fs) uid @euid, neither of them root: res[0] the
 * return value, res[1] errno, res[2] whether the head matched.
 */
static pid_t start_nobody_target(struct thread_report *r)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (as_nobody())
			_exit(2);
		rfm_head_init(&r->head);
		rfm_set_robust_list(&r->head, sizeof(r->head));
		r->tid = getpid();
		while (!r->done)
			usleep(1000);
		/* What the exec case asks of it next: exec, then wait. */
		execl("/proc/self/exe", "syscall", RFM_PAUSE_ARG, (char *)NULL);
		_exit(3);
	}
	while (pid > 0 && !r->tid)
		usleep(1000);
	return pid;
}

/*
 * Fork a child that becomes what @become(@arg) makes it (0 on success),
 * then asks for @r's head: res[0] the return value, res[1] errno, res[2]
 * whether the head matched. 0, or -1 if the child could not be made or
 * could not become it.
 */
static int ask_from_child(int (*become)(const void *), const void *arg,
			  struct thread_report *r, int *res)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct robust_list_head *got = NULL;
		size_t len;

		if (become(arg))
			_exit(2);
		res[0] = (int)rfm_get_robust_list(r->tid, &got, &len);
		res[1] = errno;
		res[2] = got == &r->head;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Real uid uids[0], effective (and so fs) uid uids[1], no groups. */
static int become_uids(const void *arg)
{
	const uid_t *uids = arg;

	return setgroups(0, NULL) || setresgid(uids[0], uids[1], uids[1]) ||
	       setresuid(uids[0], uids[1], uids[1]);
}

/* Ask as another process with real uid @ruid and effective uid @euid. */
static int ask_as(uid_t ruid, uid_t euid, struct thread_report *r, int *res)
{
	const uid_t uids[2] = { ruid, euid };

	return ask_from_child(become_uids, uids, r, res);
}

static void stop_target(pid_t target, struct thread_report *r)
{
	r->done = 1;
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
}

/*
 * Permission follows the caller's real credentials, as ptrace's
 * PTRACE_MODE_READ_REALCREDS has it: a caller whose effective and fs
 * uid and gid are nobody's, but whose real ones are not, may not read
 * nobody's head.
 */
static int get_perm_by_real_uid(void)
{
	struct thread_report *r = rfm_shared(sizeof(*r));
	int *res = rfm_shared(sizeof(int) * 3), asked;
	pid_t target;

	RFM_CHECK(r && res, "mmap");
	if (getuid() != 0)
		return rfm_skip("needs root to change uids");
	target = start_nobody_target(r);
	RFM_CHECK(target > 0, "fork");
	asked = ask_as(SOMEONE, NOBODY, r, res);
	stop_target(target, r);
	RFM_CHECK(asked == 0, "the asking child could not change its uids");
	obs_call("get", res[0], res[1]);
	RFM_CHECK(res[0] == -1 && res[1] == EPERM,
		  "real uid %d read the head of uid %d: ret %d errno %s", SOMEONE,
		  NOBODY, res[0], rfm_errno_name(res[1]));
	return RFM_PASS;
}

/* Root as it is (@arg NULL), or without CAP_SYS_PTRACE in its effective set. */
static int become_root_without_ptrace(const void *arg)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (!arg)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective &= ~CAP_TO_MASK(CAP_SYS_PTRACE);
	return syscall(SYS_capset, &hdr, data) ? -1 : 0;
}

/*
 * CAP_SYS_PTRACE reads the head of a task of another uid: root (uid 0)
 * reads nobody's with it, and gets EPERM once it dropped it from its
 * effective set, its uid unchanged.
 */
static int get_perm_by_capability(void)
{
	struct thread_report *r = rfm_shared(sizeof(*r));
	int *with = rfm_shared(sizeof(int) * 6), *without = with + 3;
	int asked;
	pid_t target;

	RFM_CHECK(r && with, "mmap");
	if (getuid() != 0)
		return rfm_skip("needs root to change uids");
	target = start_nobody_target(r);
	RFM_CHECK(target > 0, "fork");
	asked = ask_from_child(become_root_without_ptrace, NULL, r, with);
	if (!asked)
		asked = 2 * ask_from_child(become_root_without_ptrace, "", r, without);
	stop_target(target, r);
	RFM_CHECK(asked != -1, "the asking child (root) could not be made");
	RFM_CHECK(asked != -2, "the asking child could not drop CAP_SYS_PTRACE");
	obs_call("get_with_cap", with[0], with[1]);
	obs_call("get_without_cap", without[0], without[1]);
	RFM_CHECK(with[0] == 0 && with[2], "with CAP_SYS_PTRACE: ret %d errno %s",
		  with[0], rfm_errno_name(with[1]));
	RFM_CHECK(without[0] == -1 && without[1] == EPERM,
		  "without CAP_SYS_PTRACE: ret %d errno %s", without[0],
		  rfm_errno_name(without[1]));
	return RFM_PASS;
}

/*
 * get_robust_list() leaves nothing behind, granted or refused: the
 * target, whose exec_update_lock the call took to check permission and
 * read the head, can still exec (exec takes that lock for writing, and
 * would wait for ever). Asked as @uid: NOBODY is allowed, SOMEONE not.
 */
static int get_then_exec(uid_t uid, int want_errno)
{
	struct thread_report *r = rfm_shared(sizeof(*r));
	int *res = rfm_shared(sizeof(int) * 3), asked, execd;
	pid_t target;

	RFM_CHECK(r && res, "mmap");
	if (getuid() != 0)
		return rfm_skip("needs root to change uids");
	target = start_nobody_target(r);
	RFM_CHECK(target > 0, "fork");
	asked = ask_as(uid, uid, r, res);
	r->done = 1;
	execd = rfm_wait_exec_done(target);
	stop_target(target, r);
	RFM_CHECK(asked == 0, "the asking child could not change its uids");
	obs_call("get", res[0], res[1]);
	rfm_obs("target_execd", "%d", execd);
	RFM_CHECK(want_errno ? res[0] == -1 && res[1] == want_errno : res[0] == 0 && res[2],
		  "ret %d errno %s", res[0], rfm_errno_name(res[1]));
	RFM_CHECK(execd, "the target could not exec after get_robust_list()");
	return RFM_PASS;
}

static int get_refused_then_exec(void)
{
	return get_then_exec(SOMEONE, EPERM);
}

static int get_granted_then_exec(void)
{
	return get_then_exec(NOBODY, 0);
}

/*
 * A pid is looked up in the caller's pid namespace: the init of a new
 * namespace reads the head of its child by the child's pid there (2),
 * not by the global pid that number would name.
 */
static int get_pid_in_child_namespace(void)
{
	struct thread_report *r = rfm_shared(sizeof(*r));
	int *res = rfm_shared(sizeof(int) * 4), status;
	pid_t outer;

	RFM_CHECK(r && res, "mmap");
	if (getuid() != 0)
		return rfm_skip("needs root for a pid namespace");
	res[3] = -1;
	outer = fork();
	if (outer == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID))
			_exit(2);
		init = fork();
		if (init == 0) {
			struct robust_list_head *got = NULL;
			size_t len;
			pid_t child = fork();

			if (child == 0) {
				rfm_head_init(&r->head);
				rfm_set_robust_list(&r->head, sizeof(r->head));
				r->tid = getpid();
				while (!r->done)
					usleep(1000);
				_exit(0);
			}
			while (!r->tid)
				usleep(1000);
			res[3] = r->tid;
			res[0] = (int)rfm_get_robust_list(child, &got, &len);
			res[1] = errno;
			res[2] = got == &r->head;
			r->done = 1;
			waitpid(child, NULL, 0);
			_exit(0);
		}
		waitpid(init, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 3);
	}
	waitpid(outer, &status, 0);
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the namespace's children: %#x", status);
	rfm_obs("pid_in_namespace", "%d", res[3]);
	obs_call("get", res[0], res[1]);
	rfm_obs("head_matches", "%d", res[2]);
	RFM_CHECK(res[0] == 0 && res[2], "ret %d errno %s, head %s", res[0],
		  rfm_errno_name(res[1]), res[2] ? "matches" : "differs");
	return RFM_PASS;
}

#if defined(__x86_64__) && defined(__ILP32__)
/*
 * x32 reaches these calls only through its compat entries (530, 531):
 * the 64-bit numbers 273 and 274 with __X32_SYSCALL_BIT are not in its
 * table, and must fail with ENOSYS rather than take a 64-bit head.
 */
static int x32_native_numbers_enosys(void)
{
	struct robust_list_head head, *got = NULL;
	size_t len = 0;
	long set, get;
	int set_errno, get_errno;

	rfm_head_init(&head);
	set = syscall(__X32_SYSCALL_BIT | 273, &head, sizeof(head));
	set_errno = errno;
	get = syscall(__X32_SYSCALL_BIT | 274, 0, &got, &len);
	get_errno = errno;
	obs_call("set_273", set, set_errno);
	obs_call("get_274", get, get_errno);
	RFM_CHECK(set == -1 && set_errno == ENOSYS, "273: %ld %s", set,
		  rfm_errno_name(set_errno));
	RFM_CHECK(get == -1 && get_errno == ENOSYS, "274: %ld %s", get,
		  rfm_errno_name(get_errno));
	return RFM_PASS;
}
#endif

static const struct rfm_case cases[] = {
	RFM_CASE(set_len_exact),
	RFM_CASE(set_len_one_short),
	RFM_CASE(set_len_one_long),
	RFM_CASE(set_len_zero),
	RFM_CASE(set_len_huge),
	RFM_CASE(set_len_other_abi),
	RFM_CASE(set_null_head),
	RFM_CASE(get_pid_zero),
	RFM_CASE(get_pid_zero_in_thread),
	RFM_CASE(get_own_tid),
	RFM_CASE(get_other_thread),
	RFM_CASE(get_other_process),
	RFM_CASE(get_no_such_task),
	RFM_CASE(get_bad_head_ptr),
	RFM_CASE(get_bad_len_ptr),
	RFM_CASE(get_writes_one_word),
	RFM_CASE(get_perm_other_uid),
	RFM_CASE(get_perm_same_uid),
	RFM_CASE(get_perm_by_real_uid),
	RFM_CASE(get_perm_by_capability),
	RFM_CASE(get_refused_then_exec),
	RFM_CASE(get_granted_then_exec),
	RFM_CASE(get_pid_in_child_namespace),
#if defined(__x86_64__) && defined(__ILP32__)
	/* Last: the one case only the x32 build has. */
	RFM_CASE(x32_native_numbers_enosys),
#endif
};

RFM_MAIN(cases)
