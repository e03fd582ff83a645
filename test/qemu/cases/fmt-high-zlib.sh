# fmt-high-zlib - the high-zlib payload variant boots and passes
# placement: random - fmt-high boots this kernel at the edges; how its file is compressed does not change where it lands
place
boot_format high zlib
