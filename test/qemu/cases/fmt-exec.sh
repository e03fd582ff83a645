# fmt-exec - the exec payload variant boots and passes
boot_format exec 
