// A small ELF symbol reader for the patcher (tail jumps need a function's bounds): a module's file
// is mapped read-only once and kept in a small cache; only the drain thread uses it.
#ifndef CT_ELF_H
#define CT_ELF_H

#include "ct_maps.h"

// The size of the function symbol starting exactly at `fn` (in the mapping `e`), from the module's
// .symtab (or .dynsym); 0 when there is none.
uint64_t ct_elf_function_size(const struct ct_map *e, uintptr_t fn);

#endif
