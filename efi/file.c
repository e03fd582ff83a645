/*
 * file.c - open, size and read files through EFI_SIMPLE_FILE_SYSTEM_PROTOCOL
 * on the loader's own volume.  Reads go in chunks so that a slow or large
 * read can show progress in verbose mode.  file_read() never reports its
 * own failure: it says which step failed, and its caller, who knows what
 * the file is for, reports it once (file_report()).
 */
#include "file.h"
#include "log.h"
#include "devpath.h"

/* the loader's own path, while its directory is found */
#define FILE_SELF_MAX 512
#include "options.h"

#define FILE_CHUNK (4 * MIB)

EFI_STATUS file_alloc_pages(UINT64 size, void **ret_buf)
{
	EFI_PHYSICAL_ADDRESS addr = 0;
	UINTN pages = EFI_SIZE_TO_PAGES(size ? size : 1);
	EFI_STATUS st;

	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
			       EfiLoaderData, pages, &addr);
	if (EFI_ERROR(st))
		return st;
	*ret_buf = (void *)(UINTN)addr;
	return EFI_SUCCESS;
}

void file_free(void *buf, UINT64 size)
{
	if (buf)
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)(UINTN)buf,
				  EFI_SIZE_TO_PAGES(size ? size : 1));
}

/*
 * GetInfo(EFI_FILE_INFO) into a pool buffer the caller frees, keeping the
 * firmware's status (gnu-efi's LibFileInfo() returns NULL for every
 * failure, an exhausted pool included).  The first guess fits a name of
 * 128 characters; a longer one costs a second call at the size asked for.
 */
static EFI_STATUS file_get_info(EFI_FILE_HANDLE fh, EFI_FILE_INFO **ret)
{
	UINTN size = SIZE_OF_EFI_FILE_INFO + 128 * sizeof(CHAR16);
	EFI_FILE_INFO *info;
	EFI_STATUS st = EFI_BUFFER_TOO_SMALL;
	int tries;

	for (tries = 0; tries < 2 && st == EFI_BUFFER_TOO_SMALL; tries++) {
		info = AllocatePool(size);
		if (!info)
			return EFI_OUT_OF_RESOURCES;
		st = uefi_call_wrapper(fh->GetInfo, 4, fh, &GenericFileInfo, &size, info);
		if (!EFI_ERROR(st) && size >= SIZE_OF_EFI_FILE_INFO) {
			*ret = info;
			return EFI_SUCCESS;
		}
		FreePool(info);
		if (!EFI_ERROR(st))
			st = EFI_DEVICE_ERROR; /* "success" with less than the fixed part */
	}
	return st == EFI_BUFFER_TOO_SMALL ? EFI_DEVICE_ERROR : st;
}

EFI_STATUS file_read(EFI_HANDLE device, const CHAR16 *path, UINT64 max_size,
		     void **ret_buf, UINT64 *ret_size, struct file_failure *ret_fail)
{
	EFI_FILE_IO_INTERFACE *vol = NULL;
	EFI_FILE_HANDLE root = NULL, fh = NULL;
	EFI_FILE_INFO *info = NULL;
	struct file_failure fail = { FILE_STEP_VOLUME, 0, 0, max_size };
	void *buf = NULL;
	UINT64 size = 0, done = 0;
	EFI_STATUS st;

	/* not LibOpenRoot(): it turns every failure into NULL */
	st = uefi_call_wrapper(BS->HandleProtocol, 3, device, &FileSystemProtocol,
			       (void **)&vol);
	if (!EFI_ERROR(st))
		st = uefi_call_wrapper(vol->OpenVolume, 2, vol, &root);
	if (EFI_ERROR(st)) {
		root = NULL;
		goto out;
	}
	fail.step = FILE_STEP_OPEN;
	st = uefi_call_wrapper(root->Open, 5, root, &fh, (CHAR16 *)path,
			       EFI_FILE_MODE_READ, 0);
	if (EFI_ERROR(st)) {
		fh = NULL;
		goto out;
	}
	fail.step = FILE_STEP_INFO;
	st = file_get_info(fh, &info);
	if (EFI_ERROR(st))
		goto out;
	fail.step = FILE_STEP_DIRECTORY;
	if (info->Attribute & EFI_FILE_DIRECTORY) {
		st = EFI_INVALID_PARAMETER;
		goto out;
	}
	size = info->FileSize;
	fail.size = size;
	fail.step = FILE_STEP_TOO_BIG;
	if (size > max_size) {
		st = EFI_BAD_BUFFER_SIZE;
		goto out;
	}
	fail.step = FILE_STEP_ALLOC;
	st = file_alloc_pages(size, &buf);
	if (EFI_ERROR(st))
		goto out;
	fail.step = FILE_STEP_READ;
	while (done < size) {
		UINTN n = size - done > FILE_CHUNK ? FILE_CHUNK : (UINTN)(size - done);

		fail.done = done;
		st = uefi_call_wrapper(fh->Read, 3, fh, &n, (UINT8 *)buf + done);
		if (EFI_ERROR(st))
			goto out;
		/* a file that shrank after GetInfo, or a volume that lies */
		if (n == 0 || n > size - done) {
			fail.step = FILE_STEP_SHORT;
			st = EFI_END_OF_FILE;
			goto out;
		}
		done += n;
		/* verbose: a progress line every ~10% of a big file (not an
		 * error, so the helper may say it) */
		if (size > 8 * MIB && done * 10 / size != (done - n) * 10 / size)
			log_info(L"reading %s: %ld%%", path, done * 100 / size);
	}
	*ret_buf = buf;
	*ret_size = size;
	buf = NULL;
	st = EFI_SUCCESS;
out:
	file_free(buf, size);
	if (info)
		FreePool(info);
	if (fh)
		uefi_call_wrapper(fh->Close, 1, fh);
	if (root)
		uefi_call_wrapper(root->Close, 1, root);
	if (EFI_ERROR(st) && ret_fail)
		*ret_fail = fail;
	return st;
}

EFI_STATUS file_report(EFI_STATUS st, const CHAR16 *what, const CHAR16 *path,
		       const struct file_failure *f)
{
	CHAR16 name[64];

	StatusToString(name, st);
	switch (f->step) {
	case FILE_STEP_VOLUME:
		return log_fail(st, L"cannot open the file system the loader was started from, to read the %s: %s",
				what, name);
	case FILE_STEP_OPEN:
		if (st == EFI_NOT_FOUND)
			return log_fail(st, L"%s %s: no such file on the loader's volume", what, path);
		return log_fail(st, L"cannot open %s %s: %s", what, path, name);
	case FILE_STEP_INFO:
		return log_fail(st, L"cannot read the size of %s %s: %s", what, path, name);
	case FILE_STEP_DIRECTORY:
		return log_fail(st, L"%s %s is a directory, not a file", what, path);
	case FILE_STEP_TOO_BIG:
		return log_fail(st, L"%s %s is %ld bytes, over the %ld-byte limit", what, path,
				f->size, f->limit);
	case FILE_STEP_ALLOC:
		return log_fail(st, L"no memory for the %ld bytes of %s %s: %s", f->size, what,
				path, name);
	case FILE_STEP_READ:
		return log_fail(st, L"reading %s %s failed after %ld of %ld bytes: %s", what, path,
				f->done, f->size, name);
	case FILE_STEP_SHORT:
		return log_fail(st, L"%s %s ended after %ld of the %ld bytes its size promised",
				what, path, f->done, f->size);
	}
	return log_fail(st, L"reading %s %s: %s", what, path, name);
}

/* the loader's own directory, from its device path once: "\EFI\BOOT\" */
static struct {
	const EFI_LOADED_IMAGE *li; /* whose it is; NULL: not yet read */
	CHAR16 path[FILE_SELF_MAX];
	UINTN len;                  /* through the last backslash; 0: none */
} file_self;

static void file_self_dir(const EFI_LOADED_IMAGE *li)
{
	UINTN i;

	if (file_self.li == li)
		return;
	file_self.li = li;
	file_self.len = 0;
	/* read in place: a directory silently lost to a failed allocation
	 * would make the loader read the volume root's files instead */
	if (devpath_file_path(li->FilePath, file_self.path, FILE_SELF_MAX))
		for (i = 0; file_self.path[i]; i++)
			if (file_self.path[i] == L'\\')
				file_self.len = i + 1;
}

EFI_STATUS file_path_beside_image(EFI_LOADED_IMAGE *li, const CHAR16 *name,
				  CHAR16 *out, UINTN cap)
{
	const CHAR16 *self = file_self.path;
	UINTN dir_len, i, n;

	if (name[0] == L'\\' || name[0] == L'/') {
		if (StrLen(name) + 1 > cap)
			return EFI_BUFFER_TOO_SMALL;
		StrCpy(out, name);
		goto slashes;
	}
	file_self_dir(li);
	dir_len = file_self.len;
	n = StrLen(name);
	if (dir_len + n + 2 > cap)
		return EFI_BUFFER_TOO_SMALL;
	if (dir_len == 0) {
		/* the image has no file path: its directory is the root */
		out[0] = L'\\';
		dir_len = 1;
	} else {
		CopyMem(out, self, dir_len * sizeof(CHAR16));
	}
	CopyMem(out + dir_len, name, (n + 1) * sizeof(CHAR16));
slashes:
	for (i = 0; out[i]; i++)
		if (out[i] == L'/')
			out[i] = L'\\';
	return EFI_SUCCESS;
}

EFI_STATUS file_path_of_option(EFI_LOADED_IMAGE *li, const char *name, CHAR16 *out, UINTN cap)
{
	CHAR16 wide[OPT_PATH_MAX];
	UINTN i;

	for (i = 0; name[i] && i + 1 < OPT_PATH_MAX; i++)
		wide[i] = (CHAR16)name[i];
	wide[i] = 0;
	return file_path_beside_image(li, wide, out, cap);
}
