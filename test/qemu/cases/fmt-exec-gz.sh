# fmt-exec-gz - the exec-gz payload variant boots and passes
# placement: random - fmt-exec boots this kernel at the edges; how its file is compressed does not change where it lands
place
boot_format exec gz
