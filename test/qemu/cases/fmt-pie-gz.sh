# fmt-pie-gz - the pie-gz payload variant boots and passes
# placement: edges
place
boot_format pie gz
