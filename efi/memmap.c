/*
 * memmap.c - GetMemoryMap with a buffer that has room for the allocations
 * made after the call (each can split a descriptor in two).
 */
#include "memmap.h"
#include "log.h"

/* descriptors of slack: AllocatePool for the buffer itself adds one or two */
#define MMAP_SLACK_DESCS 64

EFI_STATUS mmap_refresh(struct efi_mmap *m)
{
	UINTN size = m->cap;
	EFI_STATUS st;

	st = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, m->buf, &m->key,
			       &m->desc_size, &m->desc_version);
	if (EFI_ERROR(st))
		return st;
	m->size = size;
	return EFI_SUCCESS;
}

EFI_STATUS mmap_probe(UINTN *ret_size, UINTN *ret_desc_size)
{
	/* a NULL buffer must come with size 0: a stale size from an earlier
	 * try is EFI_INVALID_PARAMETER */
	UINTN size = 0, key = 0, dsize = 0;
	UINT32 dver = 0;
	EFI_STATUS st;

	st = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, NULL, &key, &dsize, &dver);
	if (st != EFI_BUFFER_TOO_SMALL)
		return EFI_ERROR(st) ? st : EFI_DEVICE_ERROR;
	*ret_size = size;
	*ret_desc_size = dsize;
	return dsize < sizeof(EFI_MEMORY_DESCRIPTOR) ? EFI_UNSUPPORTED : EFI_SUCCESS;
}

EFI_STATUS mmap_get(struct efi_mmap *m)
{
	UINTN size = 0, dsize = 0;
	EFI_STATUS st;
	int tries;

	m->buf = NULL;
	for (tries = 0; tries < 4; tries++) {
		st = mmap_probe(&size, &dsize);
		if (EFI_ERROR(st))
			return st;
		m->cap = size + MMAP_SLACK_DESCS * dsize;
		m->buf = AllocatePool(m->cap);
		if (!m->buf)
			return EFI_OUT_OF_RESOURCES;
		st = mmap_refresh(m);
		if (st == EFI_SUCCESS)
			return st;
		FreePool(m->buf); /* on any error: the caller gets no buffer */
		m->buf = NULL;
		if (st != EFI_BUFFER_TOO_SMALL)
			return st;
	}
	return EFI_BUFFER_TOO_SMALL;
}

void mmap_free(struct efi_mmap *m)
{
	/* a map taken after placement lists the kernel's pages: wiped */
	if (m->buf) {
		ldr_wipe(m->buf, m->cap);
		FreePool(m->buf);
	}
	m->buf = NULL;
}

/* the entries mmap_convert_how allocates for m */
static size_t mmap_regions_cap(const struct efi_mmap *m)
{
	return E820_CAP_FOR(m->size / m->desc_size) + 8;
}

static EFI_STATUS mmap_convert_how(const struct efi_mmap *m, mmap_convert_fn conv,
				   struct mem_region **ret_regions, size_t *ret_count, int quiet)
{
	size_t cap = mmap_regions_cap(m), n = 0;
	struct mem_region *r;
	enum ldr_err err;

	r = AllocatePool(cap * sizeof(*r));
	if (!r)
		return quiet ? EFI_OUT_OF_RESOURCES :
			       log_efi(EFI_OUT_OF_RESOURCES, L"AllocatePool for the memory map");
	err = conv(m->buf, m->size, m->desc_size, r, cap, &n);
	if (err != LDR_OK) {
		FreePool(r);
		return quiet ? EFI_DEVICE_ERROR :
			       log_ldr(EFI_DEVICE_ERROR, err, L"firmware memory map");
	}
	*ret_regions = r;
	*ret_count = n;
	return EFI_SUCCESS;
}

void mmap_regions_free(const struct efi_mmap *m, struct mem_region *r)
{
	if (!r)
		return;
	ldr_wipe(r, mmap_regions_cap(m) * sizeof(*r));
	FreePool(r);
}

EFI_STATUS mmap_convert(const struct efi_mmap *m, mmap_convert_fn conv,
			struct mem_region **ret_regions, size_t *ret_count)
{
	return mmap_convert_how(m, conv, ret_regions, ret_count, 0);
}

EFI_STATUS mmap_convert_quiet(const struct efi_mmap *m, mmap_convert_fn conv,
			      struct mem_region **ret_regions, size_t *ret_count)
{
	return mmap_convert_how(m, conv, ret_regions, ret_count, 1);
}
