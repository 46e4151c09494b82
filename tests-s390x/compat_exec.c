// SPDX-License-Identifier: GPL-2.0
/*
 * compat_exec: does this s390x kernel run a 31-bit program at all?
 *
 * 6.1 does (CONFIG_COMPAT: the s390x-s390 target's every case), 7.3 has
 * no 31-bit compat any more: its execve() refuses a 31-bit ELF with
 * ENOEXEC. The s390x-s390 column cannot show that on such a kernel (its
 * init is 31-bit), so the native task shows it: it writes the smallest
 * 31-bit program, one that exits with 42, and executes it.
 */
#include "rfm_test.h"	/* first: it defines _GNU_SOURCE */

#include <fcntl.h>

#define EXIT_CODE	42
#define LOAD_ADDR	0x00400000u
#define CODE_OFFSET	84	/* the ELF header (52) and one program header (32) */

/* lhi %r2,42; svc 1 (exit), in 31-bit mode */
static const unsigned char code[] = { 0xa7, 0x28, 0x00, EXIT_CODE, 0x0a, 0x01 };

static void be16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void be32(unsigned char *p, uint32_t v)
{
	be16(p, v >> 16);
	be16(p + 2, v);
}

/* ELFCLASS32, big-endian, EM_S390, ET_EXEC, one PT_LOAD R+X of it all. */
static size_t elf31(unsigned char *b)
{
	static const unsigned char ident[] = { 0x7f, 'E', 'L', 'F', 1, 2, 1 };
	size_t size = CODE_OFFSET + sizeof(code);

	memset(b, 0, size);
	memcpy(b, ident, sizeof(ident));
	be16(b + 16, 2);			/* e_type: ET_EXEC */
	be16(b + 18, 22);			/* e_machine: EM_S390 */
	be32(b + 20, 1);			/* e_version */
	be32(b + 24, LOAD_ADDR + CODE_OFFSET);	/* e_entry */
	be32(b + 28, 52);			/* e_phoff */
	be16(b + 40, 52);			/* e_ehsize */
	be16(b + 42, 32);			/* e_phentsize */
	be16(b + 44, 1);			/* e_phnum */
	be32(b + 52, 1);			/* p_type: PT_LOAD */
	be32(b + 52 + 8, LOAD_ADDR);		/* p_vaddr */
	be32(b + 52 + 12, LOAD_ADDR);		/* p_paddr */
	be32(b + 52 + 16, size);		/* p_filesz */
	be32(b + 52 + 20, size);		/* p_memsz */
	be32(b + 52 + 24, 5);			/* p_flags: R + X */
	be32(b + 52 + 28, 4096);		/* p_align */
	memcpy(b + CODE_OFFSET, code, sizeof(code));
	return size;
}

/*
 * Runs it, or is refused with ENOEXEC: either is a kernel's answer, and
 * the observation tells them apart (the kernels' deviations files name
 * the one that differs). The child reports a failed execve() through a
 * close-on-exec pipe, so no exit status can stand for two things.
 */
static int exec_31bit_program(void)
{
	const char *path = "/tmp/rfm-31bit";
	unsigned char image[CODE_OFFSET + sizeof(code)];
	size_t size = elf31(image);
	int fd, pipefd[2], err = 0, status;
	ssize_t got;
	pid_t pid;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	RFM_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	RFM_CHECK(write(fd, image, size) == (ssize_t)size, "write: %s", strerror(errno));
	close(fd);
	RFM_CHECK(!pipe2(pipefd, O_CLOEXEC), "pipe2: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL }, *envp[] = { NULL };

		close(pipefd[0]);
		execve(path, argv, envp);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		_exit(0);
	}
	RFM_CHECK(pid > 0, "fork: %s", strerror(errno));
	close(pipefd[1]);
	got = read(pipefd[0], &err, sizeof(err));
	close(pipefd[0]);
	RFM_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	unlink(path);
	if (got == sizeof(err)) {
		rfm_obs("exec", "%s", rfm_errno_name(err));
		RFM_CHECK(err == ENOEXEC, "execve: %s, where a kernel without 31-bit compat "
			  "gives ENOEXEC", rfm_errno_name(err));
		return RFM_PASS;
	}
	RFM_CHECK(got == 0, "read from the exec pipe: %zd", got);
	rfm_obs("exec", "ran");
	RFM_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_CODE,
		  "the 31-bit program ended with status %#x, not exit(%d)", status, EXIT_CODE);
	return RFM_PASS;
}

static const struct rfm_case cases[] = {
	RFM_CASE(exec_31bit_program),
};

RFM_MAIN(cases)
