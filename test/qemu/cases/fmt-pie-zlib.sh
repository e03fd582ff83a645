# fmt-pie-zlib - the pie-zlib payload variant boots and passes
# placement: random - fmt-pie-gz boots this kernel at the edges; how its file is compressed does not change where it lands
place
boot_format pie zlib
