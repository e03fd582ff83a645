# fmt-high - the high payload variant boots and passes
boot_format high 
