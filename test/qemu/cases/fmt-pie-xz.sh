# fmt-pie-xz - the pie payload as xz (x86 BCJ + LZMA2, CRC32, as Linux) boots and passes
boot_format pie xz
