#include "ct_maps.h"
#include "ct_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

CT_NO_INSTRUMENT struct ct_maps *ct_maps_read(void) {
    size_t len = 0;
    char *text = ct_proc_read_all("/proc/self/maps", &len);
    if (!text) return NULL;
    struct ct_maps *m = calloc(1, sizeof *m);
    size_t cap = 0;
    for (char *line = text; m && line < text + len && *line;) {
        char *next = strchr(line, '\n');
        next = next ? next + 1 : text + len;
        struct ct_proc_map_line l;
        if (!ct_proc_parse_map_line(line, &l)) {
            line = next;
            continue;
        }
        if (m->n == cap) {
            struct ct_map *p = realloc(m->map, (cap = cap ? cap * 2 : 256) * sizeof *p);
            if (!p) break;
            m->map = p;
        }
        struct ct_map *e = &m->map[m->n++];
        e->start = l.start;
        e->end = l.end;
        e->offset = l.offset;
        e->prot = (l.perms[0] == 'r' ? PROT_READ : 0) | (l.perms[1] == 'w' ? PROT_WRITE : 0) |
                  (l.perms[2] == 'x' ? PROT_EXEC : 0);
        e->inode = l.inode;
        e->private_file = l.perms[3] == 'p' && l.inode != 0 && l.path[0] == '/';
        snprintf(e->path, sizeof e->path, "%.*s", (int)l.path_len, l.path);
        line = next;
    }
    free(text);
    return m;
}

CT_NO_INSTRUMENT void ct_maps_free(struct ct_maps *m) {
    if (!m) return;
    free(m->map);
    free(m);
}

CT_NO_INSTRUMENT const struct ct_map *ct_maps_find(const struct ct_maps *m, uintptr_t addr) {
    if (!m) return NULL;
    for (size_t i = 0; i < m->n; i++)
        if (addr >= m->map[i].start && addr < m->map[i].end) return &m->map[i];
    return NULL;
}

CT_NO_INSTRUMENT bool ct_maps_readable(const struct ct_maps *m, uintptr_t addr, size_t len) {
    const struct ct_map *e = ct_maps_find(m, addr);
    return e && (e->prot & PROT_READ) && addr + len <= e->end && addr + len > addr;
}

CT_NO_INSTRUMENT const struct ct_map *ct_maps_text(const struct ct_maps *m, uintptr_t addr, size_t len) {
    const struct ct_map *e = ct_maps_find(m, addr);
    if (!e || (e->prot & (PROT_READ | PROT_EXEC)) != (PROT_READ | PROT_EXEC) || addr + len > e->end) return NULL;
    return e;
}
