# fmt-high-zlib - the high-zlib payload variant boots and passes
boot_format high zlib
