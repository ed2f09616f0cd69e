/*
 * eng_funcreloc_cfi.c - unwind information for a relocated function's
 * copy: the original function's FDE with every location moved to the
 * copy (x86_funcreloc_cfi), so that C++ exceptions, backtrace(), pthread_exit
 * and pthread_cancel unwind through a frame in the copy exactly as
 * through the original.
 *
 * The rules are not recomputed: the original CFA program is replayed
 * verbatim, only its advance_loc steps are rewritten (as advance_loc4)
 * to the copy's addresses of the same instruction boundaries.  The
 * original's own CIE initial instructions are kept; the new CIE says
 * "zR" with absolute 8-byte addresses (no personality: a function with
 * an LSDA, i.e. C++ cleanups or catch blocks, is refused, since its
 * landing pads would be in the original).  The FDE is found through
 * .eh_frame_hdr's sorted table.
 */
#include "eng_funcreloc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

struct blob {
	uint8_t *b;
	size_t len, cap;
	bool oom;
};

static void put(struct blob *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 256;
		uint8_t *nb;

		while (nc < o->len + n)
			nc *= 2;
		nb = realloc(o->b, nc);
		if (nb == NULL) {
			o->oom = true;
			return;
		}
		o->b = nb;
		o->cap = nc;
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

static void put_u8(struct blob *o, uint8_t v) { put(o, &v, 1); }
static void put_u32(struct blob *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(struct blob *o, uint64_t v) { put(o, &v, 8); }

static void put_uleb(struct blob *o, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		put_u8(o, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

static void put_sleb(struct blob *o, int64_t v)
{
	bool more = true;

	while (more) {
		uint8_t b = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		put_u8(o, (uint8_t)(b | (more ? 0x80 : 0)));
	}
}

/* Reading: a cursor that refuses to run past the end. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned sh = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static void rd_skip(struct rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return;
	}
	r->p += n;
}

static uint64_t rd_fixed(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n);
	r->p += n;
	return v;
}

/* Size of a DW_EH_PE value (0 for leb128 forms we do not expect). */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: return 8;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
	default: return 0;
	}
}

/* An encoded pointer at p (section address `at`), as a link-time
 * address; pcrel and absolute forms only. */
static bool read_ptr(uint8_t enc, const uint8_t *p, uint64_t at,
		     uint64_t *out)
{
	size_t n = enc_size(enc);
	int64_t v = 0;

	if (n == 0 || (enc & 0x70) > DW_EH_PE_pcrel || (enc & 0x80))
		return false;
	if (n == 2) {
		int16_t x;
		memcpy(&x, p, 2);
		v = (enc & 0x08) ? x : (uint16_t)x;
	} else if (n == 4) {
		int32_t x;
		memcpy(&x, p, 4);
		v = (enc & 0x08) ? x : (int64_t)(uint32_t)x;
	} else {
		memcpy(&v, p, 8);
	}
	*out = (uint64_t)v + ((enc & 0x70) == DW_EH_PE_pcrel ? at : 0);
	return true;
}

/* The CIE's FDE pointer encoding and LSDA encoding, from its
 * augmentation ("z" then P, L, R, S in any order). */
static enum eng_refusal cie_encodings(const Dwarf_CIE *c, uint8_t *fde_enc,
				      uint8_t *lsda_enc)
{
	struct rd r = { c->augmentation_data,
			c->augmentation_data + c->augmentation_data_size,
			false };
	const char *a = c->augmentation;

	*fde_enc = DW_EH_PE_absptr;
	*lsda_enc = DW_EH_PE_omit;
	if (a[0] != 'z' && a[0] != 0)
		return ENG_REFUSAL_CFI_AUGMENTATION;
	for (a = a[0] ? a + 1 : a; *a; a++) {
		uint8_t e;

		switch (*a) {
		case 'R':
			*fde_enc = (uint8_t)rd_fixed(&r, 1);
			break;
		case 'L':
			*lsda_enc = (uint8_t)rd_fixed(&r, 1);
			break;
		case 'P':
			e = (uint8_t)rd_fixed(&r, 1);
			rd_skip(&r, enc_size(e) ? enc_size(e) : 8);
			break;
		case 'S':
			return ENG_REFUSAL_CFI_SIGNAL_FRAME;
		default:
			return ENG_REFUSAL_CFI_AUGMENTATION;
		}
	}
	return r.bad ? ENG_REFUSAL_CFI_AUG_TRUNCATED : ENG_REFUSAL_NONE;
}

/* Rewrite a CFA program: advance_loc steps move to the copy. */
static enum eng_refusal rewrite_insns(struct rd *r, uint64_t loc,
				      const struct x86_funcreloc *fr, uint64_t bias,
				      struct blob *o)
{
	uint64_t nloc = fr->to;

	while (r->p < r->end && !r->bad) {
		const uint8_t *start = r->p;
		uint8_t op = *r->p++;
		uint64_t delta = 0, cl;
		bool adv = true;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc: delta = op & 0x3f; break;
		case DW_CFA_offset: rd_uleb(r); adv = false; break;
		case DW_CFA_restore: adv = false; break;
		default:
			adv = false;
			switch (op) {
			case DW_CFA_nop: case DW_CFA_remember_state:
			case DW_CFA_restore_state:
				break;
			case DW_CFA_advance_loc1: delta = rd_fixed(r, 1); adv = true; break;
			case DW_CFA_advance_loc2: delta = rd_fixed(r, 2); adv = true; break;
			case DW_CFA_advance_loc4: delta = rd_fixed(r, 4); adv = true; break;
			case DW_CFA_offset_extended: case DW_CFA_register:
			case DW_CFA_def_cfa: case DW_CFA_val_offset:
			case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf:
			case DW_CFA_val_offset_sf:
			case DW_CFA_GNU_negative_offset_extended:
				rd_uleb(r); rd_uleb(r);   /* sleb skips alike */
				break;
			case DW_CFA_restore_extended: case DW_CFA_undefined:
			case DW_CFA_same_value: case DW_CFA_def_cfa_register:
			case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
			case DW_CFA_GNU_args_size:
				rd_uleb(r);
				break;
			case DW_CFA_def_cfa_expression:
				rd_skip(r, rd_uleb(r));
				break;
			case DW_CFA_expression: case DW_CFA_val_expression:
				rd_uleb(r);
				rd_skip(r, rd_uleb(r));
				break;
			default:
				return ENG_REFUSAL_CFI_UNKNOWN_INSN;
			}
		}
		if (!adv) {
			put(o, start, (size_t)(r->p - start));
			continue;
		}
		loc += delta;
		cl = x86_funcreloc_cfi(fr, loc + bias);
		if (cl == 0 || cl < nloc)
			return ENG_REFUSAL_CFI_ROW_INSIDE;
		put_u8(o, DW_CFA_advance_loc4);
		put_u32(o, (uint32_t)(cl - nloc));
		nloc = cl;
	}
	return r->bad ? ENG_REFUSAL_CFI_TRUNCATED : ENG_REFUSAL_NONE;
}

static void pad8(struct blob *o, size_t from)
{
	while ((o->len - from) % 8 != 4)    /* length word excluded */
		put_u8(o, DW_CFA_nop);
}

/* CIE: version 1, "zR", absolute pointers, the original's factors and
 * initial instructions. */
static void emit_cie(struct blob *o, const Dwarf_CIE *c)
{
	size_t at = o->len;
	uint32_t len;

	put_u32(o, 0);                  /* length, patched */
	put_u32(o, 0);                  /* CIE id */
	put_u8(o, 1);
	put(o, "zR", 3);
	put_uleb(o, c->code_alignment_factor);
	put_sleb(o, c->data_alignment_factor);
	put_u8(o, (uint8_t)c->return_address_register);
	put_uleb(o, 1);
	put_u8(o, DW_EH_PE_absptr);
	put(o, c->initial_instructions,
	    (size_t)(c->initial_instructions_end - c->initial_instructions));
	pad8(o, at);
	len = (uint32_t)(o->len - at - 4);
	if (!o->oom)
		memcpy(o->b + at, &len, 4);
}

/* The FDE covering link-time address `link`: its offset in .eh_frame,
 * from .eh_frame_hdr's table (datarel sdata4 pairs, sorted). */
static bool hdr_lookup(const struct fr_elf *e, uint64_t link, uint64_t *off)
{
	const uint8_t *h = e->hdr;
	size_t lo = 0, hi;
	uint32_t n;

	if (e->hdr_len < 12 || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(&n, h + 8, 4);
	if (12 + (size_t)n * 8 > e->hdr_len)
		return false;
	hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int32_t l;

		memcpy(&l, h + 12 + mid * 8, 4);
		if (e->hdr_addr + (uint64_t)(int64_t)l <= link)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	{
		int32_t fa;

		memcpy(&fa, h + 12 + (lo - 1) * 8 + 4, 4);
		*off = e->hdr_addr + (uint64_t)(int64_t)fa - e->eh_addr;
	}
	return *off < e->eh->d_size;
}

int eng_funcreloc_cfi_build(const struct fr_elf *e, uint64_t link,
			    uint64_t bias, const struct x86_funcreloc *fr,
			    uint8_t **out, size_t *outlen,
			    enum eng_refusal *why)
{
	Dwarf_CFI_Entry fde, cie;
	Dwarf_Off off, next;
	struct blob o = { 0 };
	uint8_t fenc, lenc;
	uint64_t pc, range;
	struct rd r;
	size_t at, n;
	uint32_t len;

	*out = NULL;
	*outlen = 0;
	if (e->eh == NULL || e->hdr_len < 12 || e->hdr[0] != 1 ||
	    e->hdr[2] != 0x03 || e->hdr[3] != 0x3b)
		return *why = ENG_REFUSAL_CFI_NO_HDR, -ENOTSUP;
	if (!hdr_lookup(e, link, &off))
		return 1;           /* no CFI: unwinds as the original does */
	if (dwarf_next_cfi(e->ident, e->eh, true, off, &next, &fde) != 0 ||
	    dwarf_cfi_cie_p(&fde) ||
	    dwarf_next_cfi(e->ident, e->eh, true, fde.fde.CIE_pointer, &next,
			   &cie) != 0 || !dwarf_cfi_cie_p(&cie))
		return *why = ENG_REFUSAL_CFI_FDE, -ENOTSUP;
	if ((*why = cie_encodings(&cie.cie, &fenc, &lenc)) != ENG_REFUSAL_NONE)
		return -ENOTSUP;
	n = enc_size(fenc);
	if (n == 0 || !read_ptr(fenc, fde.fde.start, e->eh_addr +
			       (uint64_t)(fde.fde.start -
					  (const uint8_t *)e->eh->d_buf), &pc))
		return *why = ENG_REFUSAL_CFI_ENCODING, -ENOTSUP;
	range = 0;
	memcpy(&range, fde.fde.start + n, n);
	if (link < pc || link >= pc + range)
		return 1;           /* not covered: no CFI for it */
	if (pc != link || range != fr->size)
		return *why = ENG_REFUSAL_CFI_COVER, -ENOTSUP;
	r = (struct rd){ fde.fde.start + 2 * n, fde.fde.end, false };
	if (cie.cie.augmentation[0] == 'z') {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *a = r.p;

		rd_skip(&r, alen);
		for (uint64_t i = 0; i < alen && lenc != DW_EH_PE_omit; i++)
			if (a[i] != 0)
				return *why = ENG_REFUSAL_CFI_LSDA, -ENOTSUP;
	}
	if (cie.cie.code_alignment_factor != 1)
		return *why = ENG_REFUSAL_CFI_ALIGN, -ENOTSUP;
	emit_cie(&o, &cie.cie);
	at = o.len;
	put_u32(&o, 0);
	put_u32(&o, (uint32_t)(o.len));        /* back to the CIE at 0 */
	put_u64(&o, fr->to);
	put_u64(&o, fr->len);
	put_uleb(&o, 0);
	*why = rewrite_insns(&r, pc, fr, bias, &o);
	if (*why != ENG_REFUSAL_NONE) {
		free(o.b);
		return -ENOTSUP;
	}
	pad8(&o, at);
	len = (uint32_t)(o.len - at - 4);
	if (!o.oom)
		memcpy(o.b + at, &len, 4);
	put_u32(&o, 0);                         /* terminator */
	if (o.oom) {
		free(o.b);
		return -ENOMEM;
	}
	*out = o.b;
	*outlen = o.len;
	return 0;
}

int eng_funcreloc_cfi_elf_open(struct fr_elf *e, const char *path)
{
	size_t shstrndx;
	Elf_Scn *s = NULL;

	memset(e, 0, sizeof *e);
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (e->elf == NULL || elf_getshdrstrndx(e->elf, &shstrndx) != 0) {
		eng_funcreloc_cfi_elf_close(e);
		return -EINVAL;
	}
	memcpy(e->ident, elf_getident(e->elf, NULL), EI_NIDENT);
	while ((s = elf_nextscn(e->elf, s)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(s, &sh) == NULL ||
		    (name = elf_strptr(e->elf, shstrndx, sh.sh_name)) == NULL)
			continue;
		/* lld marks them SHT_X86_64_UNWIND */
		if (strcmp(name,
			   ".eh_frame") == 0 && sh.sh_type != SHT_NOBITS) {
			e->eh = elf_getdata(s, NULL);
			e->eh_addr = sh.sh_addr;
		} else if (strcmp(name, ".eh_frame_hdr") == 0) {
			Elf_Data *d = elf_getdata(s, NULL);

			e->hdr = d ? d->d_buf : NULL;
			e->hdr_len = d ? d->d_size : 0;
			e->hdr_addr = sh.sh_addr;
		}
	}
	if (e->hdr == NULL)
		e->eh = NULL;
	return 0;
}

void eng_funcreloc_cfi_elf_close(struct fr_elf *e)
{
	if (e->elf != NULL)
		elf_end(e->elf);
	if (e->fd > 0)
		close(e->fd);
	memset(e, 0, sizeof *e);
}
