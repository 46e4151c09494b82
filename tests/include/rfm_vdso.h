/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rfm_vdso.h - find a function in the vDSO the kernel mapped, by name
 * and version, as a C library does: the auxiliary vector's
 * AT_SYSINFO_EHDR, its PT_DYNAMIC, the dynamic symbol table, its hash
 * table for the number of symbols, and the version tables. ElfW() is
 * the ELF class of this ABI, which is the vDSO's (x32's is ELF32).
 */
#ifndef RFM_VDSO_H
#define RFM_VDSO_H

#include "rfm_test.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

/* The robust futex try-unlocks (mainline v7.2; the series' patch 14). */
typedef uint32_t (*rfm_try_unlock64_fn)(uint32_t *lock, uint32_t tid,
					 uint64_t *pop);
typedef uint32_t (*rfm_try_unlock32_fn)(uint32_t *lock, uint32_t tid,
					 uint32_t *pop);
#define RFM_VDSO_VERSION	"LINUX_2.6"
#define RFM_TRY_UNLOCK64	"__vdso_futex_robust_list64_try_unlock"
#define RFM_TRY_UNLOCK32	"__vdso_futex_robust_list32_try_unlock"

struct rfm_vdso {
	uintptr_t bias;		/* load address minus link address */
	const ElfW(Sym) *sym;
	const char *str;
	const ElfW(Half) *versym;
	const ElfW(Verdef) *verdef;
	size_t nsym;
};

static inline int rfm_vdso_open(struct rfm_vdso *v)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Word) *hash = NULL;
	int have_load = 0;

	memset(v, 0, sizeof(*v));
	if (!eh)
		return 0;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			v->bias = (uintptr_t)eh + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const void *)((const char *)eh + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		const void *p = (const void *)(dyn->d_un.d_ptr + v->bias);

		switch (dyn->d_tag) {
		case DT_SYMTAB:
			v->sym = p;
			break;
		case DT_STRTAB:
			v->str = p;
			break;
		case DT_HASH:
			hash = p;
			break;
		case DT_VERSYM:
			v->versym = p;
			break;
		case DT_VERDEF:
			v->verdef = p;
			break;
		}
	}
	if (!v->sym || !v->str || !hash)
		return 0;
	v->nsym = hash[1];	/* nchain: one per symbol */
	return 1;
}

/* The name of version index @ndx, or NULL. */
static inline const char *rfm_vdso_version(const struct rfm_vdso *v,
					    unsigned int ndx)
{
	const ElfW(Verdef) *d = v->verdef;

	while (d) {
		if ((d->vd_ndx & 0x7fff) == ndx) {
			const ElfW(Verdaux) *a = (const void *)((const char *)d + d->vd_aux);

			return v->str + a->vda_name;
		}
		d = d->vd_next ? (const void *)((const char *)d + d->vd_next) : NULL;
	}
	return NULL;
}

/*
 * The address of function @name at @version in the vDSO, or NULL; its
 * size in *@size if @size is not NULL.
 */
static inline void *rfm_vdso_func(const char *name, const char *version,
				  unsigned long *size)
{
	struct rfm_vdso v;

	if (!rfm_vdso_open(&v))
		return NULL;
	for (size_t i = 0; i < v.nsym; i++) {
		const ElfW(Sym) *s = &v.sym[i];
		const char *ver;

		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC ||
		    s->st_shndx == SHN_UNDEF || strcmp(v.str + s->st_name, name))
			continue;
		if (v.versym) {
			ver = rfm_vdso_version(&v, v.versym[i] & 0x7fff);
			if (!ver || strcmp(ver, version))
				continue;
		}
		if (size)
			*size = s->st_size;
		return (void *)(v.bias + s->st_value);
	}
	return NULL;
}

static inline void *rfm_vdso_sym(const char *name, const char *version)
{
	return rfm_vdso_func(name, version, NULL);
}

#endif /* RFM_VDSO_H */
