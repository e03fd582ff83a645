# fmt-high - the high payload variant boots and passes
# placement: edges
place
boot_format high 
