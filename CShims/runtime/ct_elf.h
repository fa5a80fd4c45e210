// A small ELF symbol reader for the patcher (tail jumps need a function's bounds): a module's file
// is mapped read-only once and kept in a small cache; only the drain thread uses it.
#ifndef CT_ELF_H
#define CT_ELF_H

#include "ct_maps.h"

// The size of the function symbol starting exactly at `fn` (in the mapping `e`), from the module's
// .symtab (or .dynsym); 0 when there is none.
uint64_t ct_elf_function_size(const struct ct_map *e, uintptr_t fn);

// Sets `instrumented` when the ELF file at `path` imports __cyg_profile_func_enter (was built with
// -finstrument-functions) or has a table of sleds (xray_instr_map), and then calls `visit` with each of its defined function symbols (its
// .symtab, or its .dynsym when it was stripped): name and value (add the module's load bias for the
// address). False when the file cannot be read as a 64-bit ELF file. For the filter
// (ct_filter.c), on the thread that opens the trace: the file is mapped for the walk only.
bool ct_elf_each_function(const char *path, bool *instrumented,
                          void (*visit)(const char *name, uint64_t value, void *context), void *context);

#endif
