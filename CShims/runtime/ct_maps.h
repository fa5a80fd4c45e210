// A snapshot of /proc/self/maps, taken before a batch of patches (ct_patch.c) and asked what is
// mapped where: every address the patcher reads or writes is checked against it first.
#ifndef CT_MAPS_H
#define CT_MAPS_H

#include "ct_base.h"

struct ct_map {
    uintptr_t start, end, offset;
    int prot;
    bool private_file;
    unsigned long inode;
    char path[256];
};

struct ct_maps {
    struct ct_map *map;
    size_t n;
};

struct ct_maps *ct_maps_read(void);
void ct_maps_free(struct ct_maps *m);
// The mapping that holds `addr`, or NULL.
const struct ct_map *ct_maps_find(const struct ct_maps *m, uintptr_t addr);
// Can [addr, addr + len) be read without a fault? (One mapping; enough for what is read here.)
bool ct_maps_readable(const struct ct_maps *m, uintptr_t addr, size_t len);
// Code of the program's own files (readable and executable): text we may patch (and read).
const struct ct_map *ct_maps_text(const struct ct_maps *m, uintptr_t addr, size_t len);

#endif
