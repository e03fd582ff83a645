# fmt-high-gz - the high-gz payload variant boots and passes
boot_format high gz
