/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rfm_mutex.h - a robust mutex in user space, as a C library builds one
 * on the robust-list ABI, with the 2026 unlock where the kernel has it.
 *
 * The word holds the owner's TID, FUTEX_WAITERS when someone sleeps on
 * it, and FUTEX_OWNER_DIED once the kernel has recovered it from a dead
 * owner; every lock a thread holds is on that thread's robust list, and
 * list_op_pending names the lock while it is being taken or released.
 * The word and its waits are shared, not private: the kernel's exit
 * walk wakes a waiter by a shared wake.
 *
 * Three ways to unlock (enum rfm_unlock_path, in rfm_unlock.h):
 *
 *  - classic: what every C library does today, release the word, wake a
 *    waiter if there is one, then clear list_op_pending; a thread that
 *    dies between the release and the clear leaves its exit walk a lock
 *    that may be someone else's memory by then (glibc bug 14485);
 *  - syscall: FUTEX_WAKE | FUTEX_ROBUST_UNLOCK releases the word and
 *    clears the slot in the kernel, every time;
 *  - vdso: the vDSO try-unlock when the word is ours alone, the system
 *    call when it has waiters (mainline's intended use).
 *
 * rfm_mutex_choose() picks the best the kernel has: vdso, else syscall,
 * else classic. Each thread has its own struct rfm_mutex_thread, which
 * holds the robust list head it registers; the head is not in TLS, so a
 * thread's state outlives it for whoever looks afterwards.
 *
 * The stress test can run a hook (@park) at the point where each unlock
 * is most exposed: in the classic window, after the release and the
 * wake (a woken waiter may take the CPU there) and before the clear; for
 * the 2026 ways, right after the call, where nothing is pending any
 * more. NULL: no hook.
 */
#ifndef RFM_MUTEX_H
#define RFM_MUTEX_H

#include "rfm_unlock.h"

struct rfm_mutex_thread {
	struct robust_list_head head;
	uint32_t tid;
	enum rfm_unlock_path how;
	void *try_unlock;			/* the vDSO function, for vdso */
	void (*park)(struct rfm_mutex_thread *t);
	unsigned long errors;	/* system calls that failed: never expected */
};

/* The best way this kernel has: vdso, syscall or classic. */
static inline enum rfm_unlock_path rfm_mutex_choose(void)
{
	if (!rfm_have_robust_unlock())
		return RFM_UNLOCK_CLASSIC;
	return rfm_own_try_unlock(NULL) ? RFM_UNLOCK_VDSO : RFM_UNLOCK_SYSCALL;
}

/*
 * Set up the calling thread's state and register its list. 0, or -1
 * (errno set) if the kernel refused the list or @how needs a vDSO
 * function it does not have.
 */
static inline int rfm_mutex_thread_init(struct rfm_mutex_thread *t,
					enum rfm_unlock_path how)
{
	rfm_head_init(&t->head);
	t->tid = (uint32_t)rfm_gettid();
	t->how = how;
	t->try_unlock = how == RFM_UNLOCK_VDSO ? rfm_own_try_unlock(NULL) : NULL;
	if (how == RFM_UNLOCK_VDSO && !t->try_unlock) {
		errno = ENOENT;
		return -1;
	}
	return rfm_set_robust_list(&t->head, sizeof(t->head)) ? -1 : 0;
}

/*
 * The exit walk sees this thread's memory as a signal handler of it
 * would, at whatever instruction it died: the compiler must keep the
 * slot's store between the list's and the word's, hence the fences.
 */
static inline void rfm_mutex_set_pending(struct rfm_mutex_thread *t,
					 struct rfm_lock *m)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->head.list_op_pending, m ? &m->link : NULL,
			 __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Take @m off @t's list, wherever it is on it. */
static inline void rfm_mutex_list_del(struct rfm_mutex_thread *t,
				      struct rfm_lock *m)
{
	struct robust_list **pp = &t->head.list.next;

	while (*pp != &t->head.list && *pp != &m->link)
		pp = &(*pp)->next;
	if (*pp == &m->link)
		*pp = m->link.next;
}

/*
 * Lock @m: 0, EOWNERDEAD if its owner died holding it (the caller owns
 * it now and decides whether the data it guards is whole), ETIMEDOUT if
 * no one released it for @timeout_ms in a row (a lost wakeup, or an
 * owner that never comes back), or the errno of a FUTEX_WAIT that failed
 * otherwise (counted in t->errors).
 */
static inline int rfm_mutex_lock(struct rfm_mutex_thread *t, struct rfm_lock *m,
				 long timeout_ms)
{
	uint32_t want = t->tid, v;
	int ret = 0;

	rfm_mutex_set_pending(t, m);
	for (;;) {
		v = __atomic_load_n(&m->futex, __ATOMIC_RELAXED);
		if (!(v & FUTEX_TID_MASK)) {
			/* Free, or its dead owner's: keep the waiters bit */
			if (__atomic_compare_exchange_n(&m->futex, &v,
							want | (v & FUTEX_WAITERS), 0,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				ret = v & FUTEX_OWNER_DIED ? EOWNERDEAD : 0;
				break;
			}
			continue;
		}
		if (!(v & FUTEX_WAITERS) &&
		    !__atomic_compare_exchange_n(&m->futex, &v, v | FUTEX_WAITERS, 0,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		if (rfm_futex_wait(&m->futex, v | FUTEX_WAITERS, timeout_ms) &&
		    errno != EAGAIN && errno != EINTR) {
			ret = errno;
			t->errors += ret != ETIMEDOUT;
			rfm_mutex_set_pending(t, NULL);
			return ret;
		}
		/* Woken: others may still sleep, so keep the bit when taking it */
		want = t->tid | FUTEX_WAITERS;
	}
	rfm_list_add(&t->head, m);
	rfm_mutex_set_pending(t, NULL);
	return ret;
}

/* Unlock @m, which @t holds, the way @t was set up for. */
static inline void rfm_mutex_unlock(struct rfm_mutex_thread *t, struct rfm_lock *m)
{
	void *slot = &t->head.list_op_pending;
	uint32_t old;

	rfm_mutex_set_pending(t, m);
	rfm_mutex_list_del(t, m);
	switch (t->how) {
	case RFM_UNLOCK_CLASSIC:
		old = __atomic_exchange_n(&m->futex, 0, __ATOMIC_RELEASE);
		if (old & FUTEX_WAITERS)
			t->errors += rfm_futex_wake(&m->futex, 1) < 0;
		if (t->park)
			t->park(t);		/* the window */
		rfm_mutex_set_pending(t, NULL);
		return;
	case RFM_UNLOCK_VDSO:
		if (rfm_own_try_unlock_call(t->try_unlock, &m->futex, t->tid, slot) == t->tid)
			break;
		/* Waiters: the word is not ours alone, the kernel wakes one */
		/* fall through */
	case RFM_UNLOCK_SYSCALL:
		/* Fails only on a kernel without it, or with a bad word or slot */
		t->errors += rfm_robust_unlock_wake(&m->futex, slot, 1) < 0;
		break;
	}
	if (t->park)
		t->park(t);
}

#endif /* RFM_MUTEX_H */
