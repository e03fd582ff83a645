# fmt-exec - the exec payload variant boots and passes
# placement: edges
place
boot_format exec 
