# fmt-exec-zstd - the exec payload as zstd boots and passes
boot_format exec zst
