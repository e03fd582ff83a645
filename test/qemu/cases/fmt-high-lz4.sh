# fmt-high-lz4 - the high payload as an LZ4 legacy frame (lz4 -l, as Linux) boots and passes
# placement: random - fmt-high boots this kernel at the edges; how its file is compressed does not change where it lands
place
boot_format high lz4
