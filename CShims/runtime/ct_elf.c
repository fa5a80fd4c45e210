#include "ct_elf.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// A module's file, mapped read-only once and kept (only the drain thread uses them).
#define CT_ELF_CACHE 8
static struct { unsigned long inode; char path[256]; const uint8_t *bytes; size_t size; } elf_cache[CT_ELF_CACHE];

CT_NO_INSTRUMENT static const uint8_t *module_file(const struct ct_map *e, size_t *size) {
    for (int i = 0; i < CT_ELF_CACHE; i++)
        if (elf_cache[i].bytes && elf_cache[i].inode == e->inode && strcmp(elf_cache[i].path, e->path) == 0) {
            *size = elf_cache[i].size;
            return elf_cache[i].bytes;
        }
    int fd = open(e->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (unsigned long)st.st_ino == e->inode && st.st_size > (off_t)sizeof(Elf64_Ehdr))
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return NULL;
    for (int i = 0; i < CT_ELF_CACHE; i++) {
        if (elf_cache[i].bytes) continue;
        elf_cache[i].inode = e->inode;
        snprintf(elf_cache[i].path, sizeof elf_cache[i].path, "%s", e->path);
        elf_cache[i].bytes = p;
        elf_cache[i].size = (size_t)st.st_size;
        break;
    }
    *size = (size_t)st.st_size;
    return p; // with a full cache it stays mapped anyway: a handful of modules at most
}

CT_NO_INSTRUMENT uint64_t ct_elf_function_size(const struct ct_map *e, uintptr_t fn) {
    size_t size = 0;
    const uint8_t *f = module_file(e, &size);
    if (!f) return 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return 0;
    if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size || eh->e_shentsize != sizeof(Elf64_Shdr))
        return 0;
    // The load bias: the mapping at file offset `e->offset` starts at e->start.
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(f + eh->e_phoff);
    uintptr_t bias = 0;
    bool found = false;
    for (int i = 0; i < eh->e_phnum && !found; i++) {
        uint64_t lo = ph[i].p_offset & ~(uint64_t)4095;
        if (ph[i].p_type == PT_LOAD && e->offset >= lo && e->offset < ph[i].p_offset + ph[i].p_filesz) {
            bias = e->start - (ph[i].p_vaddr - (ph[i].p_offset - e->offset));
            found = true;
        }
    }
    if (!found) return 0;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    for (int pass = 0; pass < 2; pass++) {
        uint32_t want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (int i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type != want || sh[i].sh_offset + sh[i].sh_size > size) continue;
            const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
            size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
            for (size_t k = 0; k < n; k++)
                if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_shndx != SHN_UNDEF &&
                    sym[k].st_value + bias == fn && sym[k].st_size > 0)
                    return sym[k].st_size;
        }
    }
    return 0;
}

// The symbols of section `sh` (a symbol table whose sh_link names its strings), if in bounds.
CT_NO_INSTRUMENT static const Elf64_Sym *symbols(const uint8_t *f, size_t size, const Elf64_Shdr *all, int count,
                                                 const Elf64_Shdr *sh, size_t *n, const char **strings,
                                                 size_t *strings_size) {
    if (sh->sh_offset + sh->sh_size > size || sh->sh_link >= (uint32_t)count) return NULL;
    const Elf64_Shdr *str = &all[sh->sh_link];
    if (str->sh_offset + str->sh_size > size) return NULL;
    *n = sh->sh_size / sizeof(Elf64_Sym);
    *strings = (const char *)(f + str->sh_offset);
    *strings_size = str->sh_size;
    return (const Elf64_Sym *)(f + sh->sh_offset);
}

CT_NO_INSTRUMENT bool ct_elf_each_function(const char *path, bool *instrumented,
                                           void (*visit)(const char *name, uint64_t value, void *context),
                                           void *context) {
    *instrumented = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr))
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return false;
    const uint8_t *f = p;
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    bool ok = memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
              eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size;
    if (ok) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
        const Elf64_Shdr *symtab = NULL, *dynsym = NULL;
        const Elf64_Shdr *names = eh->e_shstrndx < eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
        if (names && names->sh_offset + names->sh_size > size) names = NULL;
        for (int i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type == SHT_SYMTAB) symtab = &sh[i];
            if (sh[i].sh_type == SHT_DYNSYM) dynsym = &sh[i];
            // Built with sleds (the compiler's table of them: docs/design.md, "Sleds").
            static const char sleds[] = "xray_instr_map";
            if (names && sh[i].sh_name + sizeof sleds <= names->sh_size &&
                memcmp(f + names->sh_offset + sh[i].sh_name, sleds, sizeof sleds) == 0)
                *instrumented = true;
        }
        size_t n = 0, strings_size = 0;
        const char *strings = NULL;
        const Elf64_Sym *sym = dynsym ? symbols(f, size, sh, eh->e_shnum, dynsym, &n, &strings, &strings_size) : NULL;
        for (size_t k = 0; sym && k < n; k++) {
            if (sym[k].st_shndx == SHN_UNDEF && sym[k].st_name < strings_size &&
                strncmp(strings + sym[k].st_name, "__cyg_profile_func_enter", strings_size - sym[k].st_name) == 0)
                *instrumented = true;
        }
        const Elf64_Shdr *table = symtab ? symtab : dynsym;
        sym = table && *instrumented ?  symbols(f, size, sh, eh->e_shnum, table, &n, &strings, &strings_size) : NULL;
        // A name must end inside its string table (the walk reads it as a C string).
        if (sym && strings_size > 0 && strings[strings_size - 1] == '\0') {
            for (size_t k = 0; k < n; k++)
                if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_shndx != SHN_UNDEF && sym[k].st_value != 0 &&
                    sym[k].st_name < strings_size)
                    visit(strings + sym[k].st_name, sym[k].st_value, context);
        }
    }
    munmap(p, size);
    return ok;
}
