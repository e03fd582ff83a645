# fmt-pie-zlib - the pie-zlib payload variant boots and passes
boot_format pie zlib
