# fmt-exec-gz - the exec-gz payload variant boots and passes
boot_format exec gz
