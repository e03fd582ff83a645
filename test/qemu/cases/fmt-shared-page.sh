# fmt-shared-page - the shared payload variant: its text and rodata
# segments share the page that holds the entry point, which must be mapped
# R+X (the union of both segments' permissions, elf_page_map()); the
# payload checks that page's permissions and the rest of its W^X itself
# placement: edges
place
boot_format shared
