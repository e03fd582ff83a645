# fmt-high-lz4 - the high payload as an LZ4 legacy frame (lz4 -l, as Linux) boots and passes
boot_format high lz4
