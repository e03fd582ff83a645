# test/matrix/matrix.mk - the compatibility matrix (test/matrix/cells),
# included by the top Makefile.
#
#   make test-matrix        every cell (MATRIX_JOBS=N boots at a time)
#   make test-matrix-fast   the cells marked fast (the subset for make test)

.PHONY: test-matrix test-matrix-fast
test-matrix: $(BUILD)/BOOTX64.EFI payloads
	@test/matrix/run.sh
test-matrix-fast: $(BUILD)/BOOTX64.EFI payloads
	@test/matrix/run.sh --fast
