// SPDX-License-Identifier: GPL-2.0
/*
 * init - PID 1 of the test guest.
 *
 * Mounts the pseudo file systems, runs every program in /tests (sorted by
 * name, each with a timeout and in its own session), and reports KTAP on
 * the results port (a port of its own: the second serial port on x86,
 * a virtio console on ARM), so that kernel messages on the console can
 * never interleave with results. Each program's own KTAP
 * is nested as a subtest, in KUnit's order, so that the kernel's own
 * parser (tools/testing/kunit/kunit.py parse) reads the results too:
 *
 *	KTAP version 1
 *	1..N
 *	# rfm-target: ...		(and the other rfm- lines)
 *	    KTAP version 1
 *	    # Subtest: NAME		(both before the program starts)
 *	    1..M			(the program's own KTAP from here,
 *	    ok 1 CASE			 less its own version line)
 *	ok 1 NAME
 *	# rfm-complete N
 *
 * After each program every other process is
 * ended, so nothing one program started can touch the next; a program
 * that left processes behind fails, naming them. The last line is the
 * completion marker the host waits for; anything short of it is an
 * incomplete run. Then it reboots, which QEMU (-no-reboot) turns into an
 * exit.
 *
 * Kernel command line:
 *	rfm.mode=tests|shell|probe	(default tests)
 *	rfm.mode=crash|hang		self-tests of the host's failure paths:
 *					PID 1 exits (the kernel panics) or
 *					never finishes
 *	rfm.timeout=SECONDS		per program (default 300)
 *	rfm.only=PROG[,PROG...]		run only these programs of /tests
 *	rfm.target=NAME			echoed into the report
 *	rfm.accel=NAME			QEMU's accelerator (not read here: the cases
 *					read it, rfm_race.h)
 *	rfm.results=DEVICE		the results port (default /dev/ttyS1)
 *	rfm.coverage=DEVICE		make coverage: zero the kernel's gcov
 *					counters before the programs, write
 *					them to DEVICE after (see dump_gcov())
 *	console=NAME[,OPTIONS]		the shell's terminal (default ttyS0)
 *
 * Built once per word size: the 32-bit build is the init of the ia32 and
 * i386 targets, so their whole user space is 32-bit. Always static: the
 * image may hold shared libraries for the programs, never for init.
 *
 * /lib/modules/rfm/NN-NAME.ko, when the image has them (a prebuilt kernel
 * whose results port is a module, such as Debian's ARM kernels with their
 * virtio console), are loaded in name order before the results port is
 * opened.
 *
 * /etc/rfm-library-path, when the image has one, becomes the programs'
 * LD_LIBRARY_PATH: the guest has no ld.so.cache, so this is how the
 * loader finds libraries the host found through its own cache.
 *
 * /etc/rfm-rerun, when the image has one, names (one a line) programs of
 * another suite (mainline's selftests, with timing races of their own):
 * such a program's output is held back, and if it fails it is run a
 * second time, its first attempt reported as "# rfm-first-attempt:"
 * comments of the subtest (see report_first_attempt()). A case that
 * fails the second time too is run alone (kselftest_harness's "-r
 * fixture.test"), up to CASE_RETRIES more times, each run reported as
 * "# rfm-retry:" comments (see retry_failed_cases()).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define TESTS_DIR	"/tests"
#define RESULTS_PORT	"/dev/ttyS1"	/* without rfm.results= */
#define CONSOLE_PORT	"ttyS0"		/* without console= */
#define LIBRARY_PATH_FILE	"/etc/rfm-library-path"
#define RERUN_FILE		"/etc/rfm-rerun"
#define CASE_RETRIES		3	/* runs of a case alone, until one passes */
#define RETRIED_CASES_MAX	32	/* more failing cases than that: not a race */
#define MODULES_DIR	"/lib/modules/rfm"
#define PF_KTHREAD	0x00200000	/* the kernel's per-task flag */
#define COMPLETE_MARKER	"# rfm-complete"
#define DEBUGFS		"/sys/kernel/debug"
#define GCOV_DIR	DEBUGFS "/gcov"

static FILE *results;

static void report(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(results, fmt, ap);
	va_end(ap);
	fflush(results);
}

/* A message for the console log (the kernel's log, not the results). */
static void say(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("rfm-init: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void power_off(void)
{
	sync();
	reboot(RB_AUTOBOOT);
	/* Not reached; if it is, the host's timeout ends the guest. */
	for (;;)
		pause();
}

static void mount_or_say(const char *src, const char *dst, const char *type,
			 unsigned long flags, const char *data)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, flags, data) && errno != EBUSY)
		say("mount %s on %s: %s", type, dst, strerror(errno));
}

/* Value of "key=" on the kernel command line, or @def. */
static const char *cmdline_get(const char *key, const char *def)
{
	static char buf[4096];
	static int loaded;
	size_t klen = strlen(key);
	char *tok, *save;
	static char value[256];

	if (!loaded) {
		int fd = open("/proc/cmdline", O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = '\0';
		if (fd >= 0)
			close(fd);
		loaded = 1;
	}
	char copy[sizeof(buf)];

	memcpy(copy, buf, sizeof(buf));
	for (tok = strtok_r(copy, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		if (!strncmp(tok, key, klen) && tok[klen] == '=') {
			snprintf(value, sizeof(value), "%s", tok + klen + 1);
			return value;
		}
	}
	return def;
}

static int by_name(const void *a, const void *b);

/* Load the modules of MODULES_DIR, in name order; say what fails. */
static void load_modules(void)
{
	char *names[64], path[512];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(MODULES_DIR);

	if (!d)
		return;
	while ((de = readdir(d)) && n < 64)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", MODULES_DIR, names[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
			say("loading %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(names[i]);
	}
}

/* A port of the host's, raw, for writing; NULL (and a console line) if not. */
static FILE *open_port(const char *port)
{
	struct termios t;
	int fd;

	/* A port a module just made may take a moment to appear. */
	for (int tries = 0; (fd = open(port, O_WRONLY | O_NOCTTY)) < 0 &&
	     (errno == ENOENT || errno == ENODEV || errno == ENXIO) && tries < 50; tries++)
		usleep(100000);
	if (fd < 0) {
		say("cannot open %s: %s", port, strerror(errno));
		return NULL;
	}
	/* Raw: no \r\n translation, the host reads exactly what we write. */
	if (!tcgetattr(fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fdopen(fd, "w");
}

static FILE *open_results_port(void)
{
	char port[256];

	load_modules();
	snprintf(port, sizeof(port), "%s", cmdline_get("rfm.results", RESULTS_PORT));
	return open_port(port);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is @name one of the comma separated programs of rfm.only= (or all)? */
static int selected(const char *name, const char *only)
{
	size_t len = strlen(name);

	if (!*only)
		return 1;
	for (const char *p = only; p; p = strchr(p, ',')) {
		p += *p == ',';
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return 1;
	}
	return 0;
}

/* Every program in /tests (or those of rfm.only=), sorted; no fixed limit. */
static int list_tests(char ***names)
{
	DIR *dir = opendir(TESTS_DIR);
	const char *only = cmdline_get("rfm.only", "");
	struct dirent *de;
	int n = 0, room = 0;

	*names = NULL;
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !selected(de->d_name, only))
			continue;
		if (n == room) {
			room = room ? 2 * room : 64;
			*names = realloc(*names, room * sizeof(**names));
			if (!*names) {
				say("out of memory listing %s", TESTS_DIR);
				break;
			}
		}
		(*names)[n++] = strdup(de->d_name);
	}
	closedir(dir);
	if (!*names)
		return 0;
	qsort(*names, n, sizeof(**names), by_name);
	return n;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * A program's output on its way to the results port: every line indented
 * by four spaces, its first line held back until it is whole, and dropped
 * if it is the program's own version line (init printed the subtest's).
 */
struct relay {
	FILE *to;		/* the results port, or a buffer */
	int at_line_start;
	int first_line;		/* still holding the program's first line */
	size_t held;
	char first[32];		/* longer than any version line */
};

static void relay_char(struct relay *r, char c)
{
	if (r->at_line_start)
		fputs("    ", r->to);
	fputc(c, r->to);
	r->at_line_start = c == '\n';
}

/* "KTAP version 1", "TAP version 13" or "TAP version 14" (and a \r). */
static int is_version_line(const char *line, size_t len)
{
	static const char *const versions[] = {
		"KTAP version 1", "TAP version 13", "TAP version 14", NULL,
	};

	while (len && isspace((unsigned char)line[len - 1]))
		len--;
	for (const char *const *v = versions; *v; v++)
		if (len == strlen(*v) && !memcmp(line, *v, len))
			return 1;
	return 0;
}

/*
 * Let the first line go as far as it came, unless the line @ended and is
 * a version line; returns whether it went.
 */
static int relay_first_line(struct relay *r, int ended)
{
	r->first_line = 0;
	if (ended && is_version_line(r->first, r->held))
		return 0;
	for (size_t i = 0; i < r->held; i++)
		relay_char(r, r->first[i]);
	return 1;
}

/* Copy one chunk of the program's output. */
static void relay(struct relay *r, const char *buf, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		if (r->first_line && buf[i] == '\n') {
			if (relay_first_line(r, 1))
				relay_char(r, '\n');
			continue;
		}
		if (r->first_line && r->held < sizeof(r->first)) {
			r->first[r->held++] = buf[i];
			continue;
		}
		if (r->first_line)
			relay_first_line(r, 0);
		relay_char(r, buf[i]);
	}
	fflush(r->to);
}

/* The program's output has ended: what is held, and an unended line. */
static void relay_end(struct relay *r)
{
	if (r->first_line)
		relay_first_line(r, 1);
	if (!r->at_line_start)
		fputc('\n', r->to);
	fflush(r->to);
}

/* Reap orphans re-parented to us so they do not pile up as zombies. */
static void reap_orphans(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/*
 * The user processes still alive, as "name[pid]" words in @buf: every
 * process but init, kernel threads (PF_KTHREAD) and zombies. Returns how
 * many.
 */
static int list_others(char *buf, size_t size)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	size_t used = 0;
	int count = 0;

	buf[0] = '\0';
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char path[64], stat[512], comm[64], state;
		char *open_paren, *close_paren;
		unsigned long flags;
		ssize_t n;
		int fd, pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, stat, sizeof(stat) - 1);
		close(fd);
		if (n <= 0)
			continue;
		stat[n] = '\0';
		/* pid (comm) state ppid pgrp session tty tpgid flags */
		open_paren = strchr(stat, '(');
		close_paren = strrchr(stat, ')');
		if (!open_paren || !close_paren || close_paren < open_paren ||
		    sscanf(close_paren + 2, "%c %*d %*d %*d %*d %*d %lu",
			   &state, &flags) != 2)
			continue;
		if ((flags & PF_KTHREAD) || state == 'Z')
			continue;
		snprintf(comm, sizeof(comm), "%.*s",
			 (int)(close_paren - open_paren - 1), open_paren + 1);
		if (used < size)
			used += snprintf(buf + used, size - used, "%s%s[%d]",
					 count ? " " : "", comm, pid);
		count++;
	}
	closedir(dir);
	return count;
}

/*
 * End every process but init: whatever a program left running (children
 * in their own process groups or sessions escape a group kill) must not
 * run on into the next program. Returns how many there were once the
 * ones already dying had gone, and names them in @buf.
 */
static int end_others(char *buf, size_t size)
{
	long deadline = now_ms() + 500;
	int left;

	/* A process killed just before its parent ended is not left over. */
	while ((left = list_others(buf, size)) && now_ms() < deadline) {
		reap_orphans();
		usleep(20000);
	}
	if (!left)
		return 0;
	kill(-1, SIGKILL);
	/* Bounded: a task stuck in the kernel is the host's timeout's job. */
	deadline = now_ms() + 10000;
	for (;;) {
		char scratch[8];

		reap_orphans();
		if (!list_others(scratch, sizeof(scratch)))
			break;
		if (now_ms() > deadline) {
			say("processes survive SIGKILL: %s", buf);
			break;
		}
		usleep(20000);
	}
	return left;
}

/*
 * Run one program once, its output relayed (indented) to @to; with
 * @only, the program's one case of that name (kselftest_harness's "-r").
 * Returns 0 if it passed, else 1 with why in @why ("exit status 1",
 * "TIMEOUT after 300 s", ...).
 */
static int attempt(const char *name, const char *only, long timeout_ms, FILE *to,
		   char *why, size_t size)
{
	char path[512], buf[4096], others[512];
	int pipefd[2], status = 0, timed_out = 0, exited = 0;
	int left;
	long deadline = now_ms() + timeout_ms;
	struct relay out = { .to = to, .at_line_start = 1, .first_line = 1 };
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", TESTS_DIR, name);
	if (pipe(pipefd)) {
		snprintf(why, size, "pipe: %s", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		setsid();
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		chdir("/tmp");
		if (only)
			execl(path, name, "-r", only, (char *)NULL);
		else
			execl(path, name, (char *)NULL);
		printf("# exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		snprintf(why, size, "fork: %s", strerror(errno));
		return 1;
	}

	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		long left = deadline - now_ms();
		ssize_t n;

		/*
		 * Only the program is waited for here: orphans are reaped
		 * after it, or reaping could take its status. Once it has
		 * ended only what is already in the pipe is read, as the
		 * children it left may hold the pipe open for ever.
		 */
		if (!exited && waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
		if (left <= 0 && !exited) {
			timed_out = 1;
			break;
		}
		if (poll(&pfd, 1, exited ? 0 : left > 100 ? 100 : (int)left) <= 0) {
			if (exited)
				break;
			continue;
		}
		n = read(pipefd[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		relay(&out, buf, n);
	}
	close(pipefd[0]);
	relay_end(&out);

	if (timed_out) {
		/* Its session holds everything it started. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	left = end_others(others, sizeof(others));

	if (timed_out)
		snprintf(why, size, "TIMEOUT after %ld s", timeout_ms / 1000);
	else if (left)
		snprintf(why, size, "left %d process(es) running: %s", left, others);
	else if (WIFSIGNALED(status))
		snprintf(why, size, "killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		snprintf(why, size, "exit status %d", WEXITSTATUS(status));
	else
		return 0;
	return 1;
}

/*
 * Is @name in /etc/rfm-rerun: another suite's program (mainline's
 * selftests), with timing races of its own, that is run a second time
 * when it fails?
 */
static int rerun_on_failure(const char *name)
{
	char line[256];
	int found = 0;
	FILE *f = fopen(RERUN_FILE, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = !strcmp(line, name);
	}
	fclose(f);
	return found;
}

/*
 * @text (a held attempt's output) as comments inside the program's
 * subtest, each line after @tag; parsers that know nothing of them skip
 * them, the host reads them back.
 */
static void report_as_comments(const char *tag, const char *text)
{
	while (*text) {
		size_t len = strcspn(text, "\n");
		/* Lines come indented by four spaces, as a subtest's. */
		size_t skip = len >= 4 && !strncmp(text, "    ", 4) ? 4 : 0;

		report("    # %s: %.*s\n", tag, (int)(len - skip), text + skip);
		text += len + (text[len] == '\n');
	}
}

/*
 * A failed first attempt, kept as comments of the program's subtest:
 *
 *	    # rfm-first-attempt: ok 1 global.test_a
 *	    # rfm-first-attempt: not ok 2 global.test_b
 *	    # rfm-first-attempt-result: exit status 1
 */
static void report_first_attempt(const char *text, const char *why)
{
	report_as_comments("rfm-first-attempt", text);
	report("    # rfm-first-attempt-result: %s\n", why);
}

/*
 * The name of the case a line of a held attempt reports as failed
 * ("    not ok 6 global.test_b # why", a result of the program's own
 * level), if it is a kselftest_harness name ("fixture.test" or
 * "fixture.variant.test") that "-r" takes; else 0.
 */
static int failed_harness_case(const char *line, size_t len, char *name, size_t size)
{
	const char *p;
	size_t n;

	if (len < 11 || strncmp(line, "    not ok ", 11))
		return 0;
	p = line + 11;
	while (p < line + len && isdigit((unsigned char)*p))
		p++;
	if (p == line + 11 || p >= line + len || *p++ != ' ')
		return 0;
	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
	if (!n || n >= size || p + n > line + len || !memchr(p, '.', n) ||
	    (p + n < line + len && p[n] != ' '))
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	return 1;
}

/*
 * Each case the held second attempt @text reports as failed, run alone
 * until it passes, at most CASE_RETRIES times. Each run is reported as
 * comments of the subtest, before the second attempt's own output:
 *
 *	    # rfm-retry: 1..1
 *	    # rfm-retry: ok 1 global.test_b
 *	    # rfm-retry-result: global.test_b: passed
 *
 * A run that never reports its case (a name the program does not take)
 * counts for nothing on the host. All the runs together get one
 * program's timeout, so that a guest's own timeout still holds.
 */
static void retry_failed_cases(const char *name, const char *text, long timeout_ms)
{
	char only[128], why[640];
	long deadline = now_ms() + timeout_ms;
	int cases = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");

		if (failed_harness_case(text, len, only, sizeof(only)) &&
		    ++cases <= RETRIED_CASES_MAX) {
			int run, failed = 1;

			for (run = 0; failed && run < CASE_RETRIES; run++) {
				long left = deadline - now_ms();
				char *held = NULL;
				size_t size = 0;
				FILE *to;

				if (left < 1000)
					break;
				to = open_memstream(&held, &size);
				if (!to)
					break;
				failed = attempt(name, only, left, to, why, sizeof(why));
				fclose(to);
				report_as_comments("rfm-retry", held ? held : "");
				report("    # rfm-retry-result: %s: %s\n", only,
				       failed ? why : "passed");
				free(held);
			}
		}
		text += len + (text[len] == '\n');
	}
}

/*
 * The run of a program init runs again when it fails: its first attempt
 * held, and reported as comments if it failed; the second's held while
 * its failing cases are run alone. Returns 0 if either attempt passed;
 * -1 if memory to hold them ran out before anything ran.
 */
static int run_rerun_test(const char *name, long timeout_ms, char *why, size_t size)
{
	char *held = NULL;
	size_t held_size = 0;
	FILE *to = open_memstream(&held, &held_size);
	int failed;

	if (!to)
		return -1;
	failed = attempt(name, NULL, timeout_ms, to, why, size);
	fclose(to);
	if (failed)
		report_first_attempt(held ? held : "", why);
	else
		fputs(held ? held : "", results);
	free(held);
	if (!failed)
		return 0;

	held = NULL;
	held_size = 0;
	to = open_memstream(&held, &held_size);
	if (!to)
		return attempt(name, NULL, timeout_ms, results, why, size);
	failed = attempt(name, NULL, timeout_ms, to, why, size);
	fclose(to);
	if (failed)
		retry_failed_cases(name, held ? held : "", timeout_ms);
	fputs(held ? held : "", results);
	free(held);
	return failed;
}

/* Run one program; print its output as a subtest and its result line. */
static int run_test(int number, const char *name, long timeout_ms)
{
	char why[640];
	int failed = -1;

	/* Before it starts, so that a log cut short names the program. */
	report("    KTAP version 1\n");
	report("    # Subtest: %s\n", name);
	if (rerun_on_failure(name))
		failed = run_rerun_test(name, timeout_ms, why, sizeof(why));
	if (failed < 0)
		failed = attempt(name, NULL, timeout_ms, results, why, sizeof(why));
	fflush(results);
	if (failed) {
		report("not ok %d %s # %s\n", number, name, why);
		return 1;
	}
	report("ok %d %s\n", number, name);
	return 0;
}

/*
 * The CPU features the guest kernel reports: the "flags" line of
 * /proc/cpuinfo (x86), or "Features" (ARM). The host reads SMAP, SMEP and
 * SSE2 from it: they decide how user accesses are hardened.
 */
static void report_cpu_flags(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8))) {
			report("# rfm-cpu-flags:%s", colon + 1);
			break;
		}
	}
	fclose(f);
}

/*
 * The CPUs the guest runs on: how many are online (the host compares it
 * with the CPUS= it booted, rfm.cpus: a second vCPU that never came up
 * would leave every SMP case skipped), the preemption model the host
 * read from the kernel's config, and the kernel's own words for both
 * (uname -v: "SMP PREEMPT_DYNAMIC" and the like).
 */
static void report_cpus(const struct utsname *u)
{
	report("# rfm-cpus-online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	report("# rfm-cpus-asked: %s\n", cmdline_get("rfm.cpus", "1"));
	report("# rfm-preempt: %s\n", cmdline_get("rfm.preempt", "unknown"));
	report("# rfm-uts-version: %s\n", u->version);
}

/* LD_LIBRARY_PATH for the programs, from the file the host wrote. */
static void set_library_path(void)
{
	char line[4096];
	FILE *f = fopen(LIBRARY_PATH_FILE, "r");

	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		setenv("LD_LIBRARY_PATH", line, 1);
	}
	fclose(f);
}

static void run_tests(void)
{
	char **names;
	long timeout_s = atol(cmdline_get("rfm.timeout", "300"));
	struct utsname u;
	int n = list_tests(&names);

	uname(&u);
	set_library_path();
	/*
	 * A line of its own first: on a LAVA console the firmware's screen
	 * codes end without one, and KUnit's parser would take their width
	 * as every line's prefix. The plan right after the version line:
	 * KUnit's parser looks for it there.
	 */
	report("\nKTAP version 1\n");
	report("1..%d\n", n);
	report("# rfm-target: %s\n", cmdline_get("rfm.target", "unknown"));
	report("# rfm-kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	report("# rfm-init: %d-bit\n", (int)sizeof(long) * 8);
	report_cpu_flags();
	report_cpus(&u);
	report("# rfm-program-timeout: %ld\n", timeout_s);
	for (int i = 0; i < n; i++)
		run_test(i + 1, names[i], timeout_s * 1000L);
	report(COMPLETE_MARKER " %d\n", n);
}

/* ---- make coverage: the kernel's gcov counters ---- */

/* The counters could not be zeroed: what they hold is not the programs'. */
static int gcov_reset_failed;

/* Zero every counter, so that what is written out is the programs' alone. */
static void reset_gcov(void)
{
	int fd;

	mount_or_say("debugfs", DEBUGFS, "debugfs", 0, NULL);
	fd = open(GCOV_DIR "/reset", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		say("%s/reset: %s", GCOV_DIR, strerror(errno));
		gcov_reset_failed = 1;
	}
	if (fd >= 0)
		close(fd);
}

static void put_base64(FILE *out, const unsigned char *p, size_t n)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char line[80];
	size_t col = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned long v = (unsigned long)p[i] << 16 |
				  (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);

		line[col++] = digits[v >> 18 & 63];
		line[col++] = digits[v >> 12 & 63];
		line[col++] = i + 1 < n ? digits[v >> 6 & 63] : '=';
		line[col++] = i + 2 < n ? digits[v & 63] : '=';
		if (col == 76 || i + 3 >= n) {
			line[col] = '\0';
			fprintf(out, "%s\n", line);
			col = 0;
		}
	}
}

/* A whole file of unknown size (debugfs says 0): malloc'd, or NULL. */
static unsigned char *read_whole(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	size_t room = 0;
	ssize_t got;
	int fd = open(path, O_RDONLY);

	*len = 0;
	if (fd < 0)
		return NULL;
	do {
		if (*len == room) {
			unsigned char *more = realloc(buf, room = room ? 2 * room : 65536);

			if (!more) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = more;
		}
		got = read(fd, buf + *len, room - *len);
		*len += got > 0 ? got : 0;
	} while (got > 0);
	close(fd);
	if (got < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Every .gcda under @dir, recursively; the number written, -1 on an error. */
static int write_gcda(FILE *out, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d) {
		say("%s: %s", dir, strerror(errno));
		return -1;
	}
	while (n >= 0 && (de = readdir(d))) {
		char path[4096];
		size_t len, nlen = strlen(de->d_name);
		unsigned char *data;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st)) {
			say("%s: %s", path, strerror(errno));
			n = -1;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int more = write_gcda(out, path);

			n = more < 0 ? -1 : n + more;
			continue;
		}
		if (!S_ISREG(st.st_mode) || nlen < 5 || strcmp(de->d_name + nlen - 5, ".gcda"))
			continue;
		data = read_whole(path, &len);
		if (!data) {
			say("%s: %s", path, strerror(errno));
			n = -1;
			break;
		}
		/* The kernel's build directory, as the counters name it */
		fprintf(out, "gcda %s %zu\n", path + strlen(GCOV_DIR), len);
		put_base64(out, data, len);
		fprintf(out, "end\n");
		free(data);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * After the programs, to the rfm.coverage= port: for each counter file,
 *
 *	gcda PATH SIZE		(PATH: the .gcda in the kernel's build tree)
 *	BASE64...		(76 characters a line)
 *	end
 *
 * and last "complete N" (N files), or "failed" if one could not be read
 * or the counters could not be zeroed before the programs.
 */
static void dump_gcov(const char *port)
{
	FILE *out = open_port(port);
	int n;

	if (!out)
		return;
	n = gcov_reset_failed ? -1 : write_gcda(out, GCOV_DIR);
	if (n < 0)
		fprintf(out, "failed\n");
	else
		fprintf(out, "complete %d\n", n);
	fclose(out);
}

/* `make shell`: an interactive busybox shell on the console. */
static void run_shell(void)
{
	pid_t pid;
	char console[256];

	/* console=ttyAMA0,115200: the device is the part before the comma. */
	snprintf(console, sizeof(console), "/dev/%s",
		 cmdline_get("console", CONSOLE_PORT));
	console[strcspn(console, ",")] = '\0';
	say("shell mode: busybox sh on %s; 'exit' powers off", console);
	pid = fork();
	if (pid == 0) {
		int fd;

		setsid();
		fd = open(console, O_RDWR);
		if (fd >= 0) {
			ioctl(fd, TIOCSCTTY, 0);
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (fork() == 0) {
			execl("/bin/busybox", "busybox", "--install", "-s", "/bin",
			      (char *)NULL);
			_exit(127);
		}
		wait(NULL);
		setenv("PATH", "/bin:/tests", 1);
		setenv("PS1", "rfm-guest# ", 1);
		chdir("/tests");
		execl("/bin/busybox", "sh", (char *)NULL);
		say("exec busybox: %s", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int main(void)
{
	char mode[64];

	mount_or_say("proc", "/proc", "proc", 0, NULL);
	mount_or_say("sysfs", "/sys", "sysfs", 0, NULL);
	mount_or_say("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount_or_say("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777");
	mount_or_say("tmpfs", "/tmp", "tmpfs", 0, "mode=1777");
	/* A copy: cmdline_get() answers in a buffer of its own, reused. */
	snprintf(mode, sizeof(mode), "%s", cmdline_get("rfm.mode", "tests"));

	if (!strcmp(mode, "crash"))
		return 1;	/* "Attempted to kill init!": a real panic */
	if (!strcmp(mode, "hang")) {
		results = open_results_port();
		if (results)
			report("KTAP version 1\n1..1\n");
		for (;;)
			pause();
	}

	if (!strcmp(mode, "shell")) {
		run_shell();
		power_off();
	}

	results = open_results_port();
	if (!results)
		power_off();
	if (!strcmp(mode, "probe")) {
		report(COMPLETE_MARKER " 0\n");
	} else {
		char coverage[256];

		snprintf(coverage, sizeof(coverage), "%s", cmdline_get("rfm.coverage", ""));
		if (*coverage)
			reset_gcov();
		run_tests();
		if (*coverage)
			dump_gcov(coverage);
	}
	power_off();
	return 0;
}
