# fmt-pie-xz - the pie payload as xz (x86 BCJ + LZMA2, CRC32, as Linux) boots and passes
# placement: random - fmt-pie-gz boots this kernel at the edges; how its file is compressed does not change where it lands
place
boot_format pie xz
