// SPDX-License-Identifier: GPL-2.0
/*
 * abi_check.c - the robust-futex ABI as compile-time facts.
 *
 * Compiled once per ABI (-m64, -m32, -mx32) and header set (the kernel
 * tree's exported uapi headers, the system's /usr/include), with
 * -include of a header generated from abi/expected.abi that defines
 * RFM_ABI and the EXPECT_* values. A drifted field fails the compile with
 * a message naming the ABI and the field. The RFM_VALUE lines put the
 * real values into the assembly output (the kernel's asm-offsets trick),
 * so the table can show them without running a program of that ABI.
 * Built with -g, its object also feeds pahole.
 */
#include <stddef.h>
#include <linux/futex.h>
#include <asm/unistd.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0
#endif
#ifdef __ILP32__
#ifdef __x86_64__
#define NR_BASE __X32_SYSCALL_BIT	/* x32 numbers carry the x32 bit */
#endif
#endif
#ifndef NR_BASE
#define NR_BASE 0
#endif

#define SAME(expr, expected, what) \
	_Static_assert((expr) == (expected), RFM_ABI ": " what " drifted")

SAME(sizeof(struct robust_list), EXPECT_sizeof_robust_list,
     "sizeof(struct robust_list)");
SAME(offsetof(struct robust_list, next), EXPECT_offset_robust_list_next,
     "offsetof(struct robust_list, next)");
SAME(sizeof(struct robust_list_head), EXPECT_sizeof_robust_list_head,
     "sizeof(struct robust_list_head)");
SAME(offsetof(struct robust_list_head, list),
     EXPECT_offset_robust_list_head_list,
     "offsetof(struct robust_list_head, list)");
SAME(offsetof(struct robust_list_head, futex_offset),
     EXPECT_offset_robust_list_head_futex_offset,
     "offsetof(struct robust_list_head, futex_offset)");
SAME(offsetof(struct robust_list_head, list_op_pending),
     EXPECT_offset_robust_list_head_list_op_pending,
     "offsetof(struct robust_list_head, list_op_pending)");
SAME(FUTEX_WAITERS, EXPECT_const_FUTEX_WAITERS, "FUTEX_WAITERS");
SAME(FUTEX_OWNER_DIED, EXPECT_const_FUTEX_OWNER_DIED, "FUTEX_OWNER_DIED");
SAME(FUTEX_TID_MASK, EXPECT_const_FUTEX_TID_MASK, "FUTEX_TID_MASK");
SAME(ROBUST_LIST_LIMIT, EXPECT_const_ROBUST_LIST_LIMIT, "ROBUST_LIST_LIMIT");
SAME(__NR_set_robust_list - NR_BASE, EXPECT_nr_set_robust_list,
     "__NR_set_robust_list");
SAME(__NR_get_robust_list - NR_BASE, EXPECT_nr_get_robust_list,
     "__NR_get_robust_list");
/*
 * The 2026 robust-unlock modifiers (mainline v7.2): in the series'
 * headers (patch 12), not in 6.1's. The gate requires them of the
 * series' headers only.
 */
#ifdef FUTEX_ROBUST_UNLOCK
SAME(FUTEX_ROBUST_UNLOCK, EXPECT_const_FUTEX_ROBUST_UNLOCK, "FUTEX_ROBUST_UNLOCK");
SAME(FUTEX_ROBUST_LIST32, EXPECT_const_FUTEX_ROBUST_LIST32, "FUTEX_ROBUST_LIST32");
SAME(FUTEX_CMD_MASK, EXPECT_const_FUTEX_CMD_MASK, "FUTEX_CMD_MASK");
#endif
#ifdef FUTEX_ROBUST_MOD_PI
SAME(FUTEX_ROBUST_MOD_PI, EXPECT_const_FUTEX_ROBUST_MOD_PI, "FUTEX_ROBUST_MOD_PI");
SAME(FUTEX_ROBUST_MOD_MASK, EXPECT_const_FUTEX_ROBUST_MOD_MASK, "FUTEX_ROBUST_MOD_MASK");
#endif
#ifdef EXPECT_const___X32_SYSCALL_BIT
SAME(__X32_SYSCALL_BIT, EXPECT_const___X32_SYSCALL_BIT, "__X32_SYSCALL_BIT");
#endif

/* For pahole: objects of the types, so -g describes them. */
struct robust_list_head rfm_abi_head;
struct robust_list rfm_abi_entry;

/*
 * In two 16-bit halves: x32 rejects %c of an immediate with bit 31 set.
 * MIPS has no %c, and s390's prints the low byte alone; both print an
 * immediate bare without it.
 */
#if defined(__mips__) || defined(__s390__)
#define RFM_IMM(n)	"%" #n
#else
#define RFM_IMM(n)	"%c" #n
#endif
/*
 * In a data section: PowerPC's assembler refuses bytes that leave the
 * next instruction unaligned in an executable one.
 */
#define RFM_VALUE(name, expr) \
	__asm__ volatile("\n.pushsection .rodata.rfm_abi\n" \
			 ".ascii \"->" name " " RFM_IMM(0) " " RFM_IMM(1) "\"\n.popsection" : : \
			 "i" ((int)(((unsigned int)(expr)) >> 16)),	\
			 "i" ((int)(((unsigned int)(expr)) & 0xffff)))

void rfm_abi_values(void);
void rfm_abi_values(void)
{
	RFM_VALUE("sizeof.robust_list", sizeof(struct robust_list));
	RFM_VALUE("offset.robust_list.next", offsetof(struct robust_list, next));
	RFM_VALUE("sizeof.robust_list_head", sizeof(struct robust_list_head));
	RFM_VALUE("offset.robust_list_head.list",
		  offsetof(struct robust_list_head, list));
	RFM_VALUE("offset.robust_list_head.futex_offset",
		  offsetof(struct robust_list_head, futex_offset));
	RFM_VALUE("offset.robust_list_head.list_op_pending",
		  offsetof(struct robust_list_head, list_op_pending));
	RFM_VALUE("const.FUTEX_WAITERS", FUTEX_WAITERS);
	RFM_VALUE("const.FUTEX_OWNER_DIED", FUTEX_OWNER_DIED);
	RFM_VALUE("const.FUTEX_TID_MASK", FUTEX_TID_MASK);
	RFM_VALUE("const.ROBUST_LIST_LIMIT", ROBUST_LIST_LIMIT);
#ifdef FUTEX_ROBUST_UNLOCK
	RFM_VALUE("const.FUTEX_ROBUST_UNLOCK", FUTEX_ROBUST_UNLOCK);
	RFM_VALUE("const.FUTEX_ROBUST_LIST32", FUTEX_ROBUST_LIST32);
	RFM_VALUE("const.FUTEX_CMD_MASK", FUTEX_CMD_MASK);
#endif
#ifdef FUTEX_ROBUST_MOD_PI
	RFM_VALUE("const.FUTEX_ROBUST_MOD_PI", FUTEX_ROBUST_MOD_PI);
	RFM_VALUE("const.FUTEX_ROBUST_MOD_MASK", FUTEX_ROBUST_MOD_MASK);
#endif
	RFM_VALUE("const.__X32_SYSCALL_BIT", __X32_SYSCALL_BIT);
	RFM_VALUE("nr.set_robust_list", __NR_set_robust_list - NR_BASE);
	RFM_VALUE("nr.get_robust_list", __NR_get_robust_list - NR_BASE);
}
