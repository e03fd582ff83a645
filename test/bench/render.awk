# render.awk - build/bench/bench.csv ("section,item,metric,value" rows) as
# Markdown: one table per section (rows = items, columns = metrics, both in
# order of first appearance), each under a heading and a line saying what
# it measures.  Columns are padded so the same text reads well on a
# terminal.  Usage: awk -F, -f test/bench/render.awk bench.csv
BEGIN {
	title["machine"] = "Machine"
	note["machine"] = "where and when this run happened; other load on the machine shows in the timings"
	title["pipeline"] = "Load pipeline on the host (ms, median)"
	note["pipeline"] = "decomp_image (bzImage: bzimage_parse + bzimage_decompress) against the bare library on the same stream " \
		"into an exact-size buffer (goal: decomp_image/library <= 1.10); pipeline: decompression + elf_parse + elf_load + " \
		"reloc_apply + page tables (4 GiB identity at 2 MiB, segments at 4 KiB); memcpy of the output; " \
		"src/ at -O2, buffers and library state from a pre-touched arena"
	title["pipeline-steps"] = "Pipeline steps and the library in chunks (ms, median)"
	note["pipeline-steps"] = "chunks/library: the library handed DECOMP_CHUNK of output per call, as src/decompress.c does (zstd: streaming, with its window buffer)"
	title["fgkaslr"] = "Function-granular KASLR on the host (ms, median)"
	note["fgkaslr"] = "synthetic kernels of one section and one .rela section per function (test/unit/fgk_build.h); " \
		"fgk = elf_load + fgk_apply - elf_load: check, shuffle with drbg_below draws, copy, every relocation, both tables re-sorted; " \
		"reference: elf_load + reloc_apply of the same image, no shuffle; entropy: log2(n!) capped by the 256-bit seed; " \
		"goal: fgk <= 50 ms for 40000 functions (Linux's unmerged series was reported at about 1 s of boot)"
	title["sha256"] = "SHA-256 on the host (16 MiB)"
	note["sha256"] = "src/sha256.c (portable) against src/sha256_x86.c (the SHA extensions, where CPUID offers them), " \
		"thread CPU time, median; portable / extensions: how many times faster a pinned kernel is hashed with them"
	title["entropy-phys"] = "Physical entropy per captured OVMF map (2 MiB slots at or above 16 MiB)"
	note["entropy-phys"] = "loader: free memory as efi/place.c sees it; theoretical: every RAM byte (slot_theoretical); " \
		"Linux rule: each EfiConventionalMemory descriptor above 16 MiB on its own, without its mem_avoid list (an upper bound)"
	title["entropy-virt"] = "Virtual entropy (2 MiB slots)"
	note["entropy-virt"] = "loader: image inside [0xffffffff80000000, 0xffffffffffe00000); Linux: image inside [16 MiB, 1 GiB) of the kernel map"
	title["uniformity"] = "Uniformity of slot choices"
	note["uniformity"] = "slot_pick() with drbg_below() on a fixed seed; chi2 against uniform, z = (chi2 - df) / sqrt(2 df): |z| < 3 is consistent with uniform"
	title["boot"] = "Boot under QEMU + OVMF (TCG, no KVM; wall seconds)"
	note["boot"] = "from starting test/qemu/boot.sh to the target line on the serial console (the payload's PASS, or the Linux banner " \
		"booted by this loader, quiet); OVMF's \"BdsDxe: starting\" line splits firmware time from loader + kernel time"
	title["boot-steps"] = "The loader's own time per step (verbose boot; us)"
	note["boot-steps"] = "TSC calibrated against BS->Stall; verbose output (the memory map dump) is part of the time measured"
	title["linux-boot"] = "Linux: this loader against systemd-boot + the kernel's EFI stub"
	note["linux-boot"] = "test/linux/compare-boot.sh: QEMU start to \"Linux version\", alternating runs"
	title["count"] = "Linux counted: this loader against systemd-boot + the kernel's EFI stub (guest instructions)"
	note["count"] = "test/bench/count.sh: QEMU's TCG plugin test/bench/icount.c under -icount shift=0,sleep=off counts every guest " \
		"instruction from QEMU's start until a busybox initramfs powers off from userspace; same bzImage, initrd, command line and VM " \
		"(q35, OVMF, 1 GiB, -cpu max); TPM: swtpm attached and the kernel pinned (sha256 in kaslr.conf); " \
		"spread: (max - min) / min of the runs; goals: ratio <= 0.93 (xz), <= 1.00 (LZ4), <= 1.00 with TPM + pin"
	title["count-steps"] = "Linux counted: the loader's path by step (M instructions, first run)"
	note["count-steps"] = "from the loader's marks (LOG_MARK, efi/log.h: a NOP the plugin recognises); " \
		"decode the bzImage payload is part of parse and lay out's span, shown on its own"
	title["fgk-boot"] = "Function-granular KASLR under QEMU + OVMF (TCG, no KVM)"
	note["fgk-boot"] = "kernel-fgk.elf (1202 function sections) shuffled against the same file without its note " \
		"(relocated as a whole, placed the same way); quiet boots alternating, medians: wall s from starting QEMU and ms from OVMF's " \
		"\"BdsDxe: starting\" to the payload's PASS line; difference: median of the paired differences. " \
		"icount: one verbose boot of each with -icount shift=3 (8 virtual ns per guest instruction, independent of the host's load): " \
		"the loader's parse step (the note is checked there) and its relocation (fgk_apply against reloc_apply)"
	title["size"] = "Size (bytes)"
	note["size"] = "the loader image next to Debian's systemd-boot"
}
NF >= 4 && !(NR == 1 && $1 == "section") {
	s = $1; it = $2; m = $3
	v = $4
	for (i = 5; i <= NF; i++)
		v = v "," $i
	if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
	if (!((s, it) in hasitem)) { hasitem[s, it] = 1; items[s, ++ni[s]] = it }
	if (!((s, m) in hasmet)) { hasmet[s, m] = 1; mets[s, ++nm[s]] = m }
	val[s, it, m] = v
}
function pad(str, w) {
	while (length(str) < w)
		str = str " "
	return str
}
END {
	for (k = 1; k <= ns; k++) {
		s = order[k]
		w[0] = length(s == "size" || s == "machine" ? "what" : "item")
		for (r = 1; r <= ni[s]; r++)
			if (length(items[s, r]) > w[0]) w[0] = length(items[s, r])
		for (c = 1; c <= nm[s]; c++) {
			w[c] = length(mets[s, c])
			for (r = 1; r <= ni[s]; r++)
				if (length(val[s, items[s, r], mets[s, c]]) > w[c])
					w[c] = length(val[s, items[s, r], mets[s, c]])
		}
		printf "### %s\n\n", (s in title) ? title[s] : s
		if (s in note) printf "%s.\n\n", note[s]
		line = "| " pad(s == "size" || s == "machine" ? "what" : "item", w[0]) " |"
		sep = "|" sprintf("%" (w[0] + 2) "s", "") "|"
		gsub(/ /, "-", sep)
		for (c = 1; c <= nm[s]; c++) {
			line = line " " pad(mets[s, c], w[c]) " |"
			dash = sprintf("%" (w[c] + 2) "s", "")
			gsub(/ /, "-", dash)
			sep = sep dash "|"
		}
		print line
		print sep
		for (r = 1; r <= ni[s]; r++) {
			line = "| " pad(items[s, r], w[0]) " |"
			for (c = 1; c <= nm[s]; c++)
				line = line " " pad(val[s, items[s, r], mets[s, c]], w[c]) " |"
			print line
		}
		print ""
	}
}
