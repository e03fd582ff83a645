# test/kconfig/kconfig.mk - the kernel-configuration matrix (test/kconfig/),
# included by the top Makefile.
#
#   make test-kconfig [KCONFIG_CELLS="tiny-norandom tiny-fixed"]
#       every cell of test/kconfig/cells (or those named): Linux built from
#       Debian's linux-source-6.1 (cached under build/kconfig/, one
#       out-of-tree build per cell, KCONFIG_JOBS=2 make jobs), each swept
#       through the loader at 512 MiB and 4 GiB, random and every edge
#       (KCONFIG_JOBS boots at a time too);
#       prints the table (cell, compression, relocation, boots, passed,
#       build cost).  The first run builds every cell: about 15 CPU-minutes
#       for the first tiny cell, x86_64_defconfig far more.
#   make test-kconfig-quick
#       what make test runs: the two kinds of kernel the loader refused
#       before, made from Debian's cloud kernel without building (about 11
#       boots).

.PHONY: test-kconfig test-kconfig-quick
test-kconfig: all
	@test/kconfig/run.sh $(KCONFIG_CELLS)
test-kconfig-quick: all
	@test/kconfig/run.sh --quick
