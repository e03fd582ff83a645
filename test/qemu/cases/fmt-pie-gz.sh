# fmt-pie-gz - the pie-gz payload variant boots and passes
boot_format pie gz
