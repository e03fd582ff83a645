/*
 * icount.c - a QEMU TCG plugin that counts every guest instruction executed,
 * from QEMU's start to its exit, and the count at each mark the loader's
 * code carries (include/ldr.h, LDR_MARK: a NOP whose 32-bit displacement
 * says "kaslr-loader mark N", a single instruction that does nothing on any
 * CPU).  Written for the plugin interface of QEMU 7.2 (version 1); Debian
 * ships no qemu-plugin.h, so the few functions used are declared here.
 *
 *   qemu-system-x86_64 -icount shift=0,sleep=off \
 *       -plugin build/bench/icount.so,out=FILE ...
 *
 * FILE (default: QEMU's plugin log, -d plugin) gets one line per mark as it
 * executes, "mark ID INSNS", and at exit "high INSNS" (see below) and
 * "total INSNS".  INSNS counts
 * instructions up to and including the mark.  Every translation block adds
 * its length to one counter when it starts (one inline add, no call); a
 * mark's callback subtracts the instructions of its block that follow it.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the QEMU 7.2 plugin interface (version 1), as far as used here */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t; /* only passed through */
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
				    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
			       char **argv);

/* ---- the mark: nopl 0x4b4c00NN(%rax) = 0f 1f 80 NN 00 4c 4b */
#define MARK_LEN 7
static const unsigned char mark_prefix[3] = {0x0f, 0x1f, 0x80};
static const unsigned char mark_magic[3] = {0x00, 0x4c, 0x4b};

/*
 * With -icount, TCG runs one vCPU thread at a time: a plain counter is
 * exact.  high counts, apart, the instructions of blocks at virtual
 * addresses in the upper half (from 0xffff800000000000): an x86-64 kernel
 * proper once it runs at its link address, never firmware, loaders or
 * user space, so that two boot paths can be compared on the kernel's share.
 */
#define HIGH_HALF 0xffff800000000000ull
static uint64_t insns, high;
static FILE *out;

static void emit(const char *line)
{
	if (out) {
		fputs(line, out);
		fflush(out);
	} else {
		qemu_plugin_outs(line);
	}
}

/* userdata: the mark's id in bits 0-7, the instructions after it in its block above */
static void on_mark(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;
	char line[64];

	(void)vcpu;
	snprintf(line, sizeof(line), "mark %u %" PRIu64 "\n", (unsigned)(u & 0xff),
		 insns - (uint64_t)(u >> 8));
	emit(line);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, n);
	if (qemu_plugin_tb_vaddr(tb) >= HIGH_HALF)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &high, n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const unsigned char *b = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) != MARK_LEN || memcmp(b, mark_prefix, 3) != 0 ||
		    memcmp(b + 4, mark_magic, 3) != 0)
			continue;
		qemu_plugin_register_vcpu_insn_exec_cb(
			insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
			(void *)(uintptr_t)(b[3] | ((uintptr_t)(n - 1 - i) << 8)));
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	char line[64];

	(void)id;
	(void)udata;
	snprintf(line, sizeof(line), "high %" PRIu64 "\n", high);
	emit(line);
	snprintf(line, sizeof(line), "total %" PRIu64 "\n", insns);
	emit(line);
	if (out)
		fclose(out);
	out = NULL;
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0) {
			out = fopen(argv[i] + 4, "w");
			if (!out) {
				fprintf(stderr, "icount plugin: cannot write %s\n", argv[i] + 4);
				return -1;
			}
		} else {
			fprintf(stderr, "icount plugin: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
