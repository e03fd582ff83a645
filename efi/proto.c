/*
 * proto.c - the boot protocols this loader speaks, in the order they are
 * asked whether a kernel is theirs.  A new protocol is one more file
 * implementing efi/proto.h and one more line here.
 */
#include "proto.h"

static const struct boot_proto *const protos[] = {
	&proto_linux,  /* an x86-64 vmlinux: recognised by its own marks */
	&proto_native, /* any other ELF kernel: last, it takes the rest */
};

const struct boot_proto *proto_for(struct loader *L)
{
	UINTN i;

	for (i = 0; i + 1 < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i]->probe(L))
			return protos[i];
	return protos[i];
}
