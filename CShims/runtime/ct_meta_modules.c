// The loaded modules, as MODULE and MODULE_GONE records in the metadata stream: the loader's list
// (dl_iterate_phdr) with each image's build-id, compared with the modules written so far.
#include "ct_meta.h"
#include "ct_meta_stream.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_proc.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CT_MAX_MODULES 1024

struct known_module {
    uint64_t base, lo;
    uint64_t ident;               // hash of path and build-id: another module may come to the same address
    bool seen;                    // in the scan under way
    uint8_t *record;              // its MODULE record's body (malloc'ed), for a fork child
    size_t record_len;
};

// Under the stream's lock (ct_meta_lock), except the atomics and the drain thread's own counts.
static struct {
    struct known_module modules[CT_MAX_MODULES];
    uint32_t nmodules;
    unsigned long long last_adds, last_subs;       // the drain thread's poll
    unsigned long long applied_adds, applied_subs; // the newest scan applied
    _Atomic bool loader_trusted;  // dl_iterate_phdr cannot block for ever (see ct_meta_forget)
    bool replayed;                // a fork child wrote the parent's modules
    char exe[4096];               // the program's path, as first read (see ct_meta_program_path)
} Mod = { .loader_trusted = true };

// The program's path. Read once and kept: /proc/self/exe cannot be read once the main thread has
// ended while other threads run on (ct_raw_exit.h), and the program must not come to look unloaded.
CT_NO_INSTRUMENT void ct_meta_program_path(char *path, size_t size) {
    if (!Mod.exe[0]) ct_proc_program_path(Mod.exe, sizeof Mod.exe);
    snprintf(path, size, "%s", Mod.exe);
}

// The GNU build-id note of a loaded image, read from its mapped PT_NOTE segments.
CT_NO_INSTRUMENT static size_t build_id(const struct dl_phdr_info *info, const uint8_t **id) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof *nh;
            const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
            const uint8_t *next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                *id = desc;
                return nh->n_descsz;
            }
            p = next;
        }
    }
    return 0;
}

// One loaded module as dl_iterate_phdr shows it, copied out so that the scan holds no lock of ours
// while it holds the loader's.
struct module_info {
    uint64_t base, lo, hi;
    uint8_t id[64];
    size_t idlen;
    char path[4096];
};

struct scan {
    struct module_info *list;
    size_t n, cap;
    unsigned long long adds, subs;   // the loader's load and unload counts when the scan ran
};

CT_NO_INSTRUMENT static int collect_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct scan *scan = data;
    size_t index = scan->n;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        scan->adds = info->dlpi_adds;
        scan->subs = info->dlpi_subs;
    }
    if (hi == 0) return 0;
    if (scan->n == scan->cap) {
        size_t cap = scan->cap ? scan->cap * 2 : 32;
        struct module_info *p = realloc(scan->list, cap * sizeof *p);
        if (!p) return 1;
        scan->list = p;
        scan->cap = cap;
    }
    struct module_info *m = &scan->list[scan->n++];
    m->base = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    const uint8_t *id = NULL;
    m->idlen = build_id(info, &id);
    if (m->idlen > sizeof m->id) m->idlen = 0;
    if (m->idlen) memcpy(m->id, id, m->idlen);
    const char *name = info->dlpi_name;
    m->path[0] = '\0';
    if (index == 0 && (!name || !*name)) { // the main program
        ct_meta_program_path(m->path, sizeof m->path);
    } else if (name && name[0] && name[0] != '/' && lo == getauxval(AT_SYSINFO_EHDR)) {
        // The vDSO ("linux-vdso.so.1"): no file to name, so no /proc/self/maps to read for it
        // (that read was a tenth of a hello world's traced start-up).
        snprintf(m->path, sizeof m->path, "%s", name);
    } else if (name && name[0] && name[0] != '/') {
        // A relative path ("./plugin.so") would mean nothing from another directory; the kernel's
        // view of the mapping is absolute. Marked here, resolved for new modules only, outside the
        // loader's lock (emit_changes_locked).
    } else {
        snprintf(m->path, sizeof m->path, "%s", name ? name : "");
    }
    if (!m->path[0] && name) snprintf(m->path, sizeof m->path, "\x01%s", name); // resolve below
    return 0;
}

// MODULE for each module not written yet, MODULE_GONE for each one that went. Caller holds Mod.lock.
CT_NO_INSTRUMENT static uint64_t identity(const struct module_info *m) {
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (const char *p = m->path; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (size_t i = 0; i < m->idlen; i++) h = (h ^ m->id[i]) * 1099511628211ull;
    return h;
}

CT_NO_INSTRUMENT static void emit_changes_locked(struct module_info *list, size_t n, uint64_t tick) {
    for (uint32_t i = 0; i < Mod.nmodules; i++) Mod.modules[i].seen = false;
    for (size_t k = 0; k < n; k++) {
        struct module_info *m = &list[k];
        uint64_t ident = identity(m);
        bool known = false;
        for (uint32_t i = 0; i < Mod.nmodules && !known; i++) {
            if (Mod.modules[i].base == m->base && Mod.modules[i].lo == m->lo && Mod.modules[i].ident == ident)
                known = Mod.modules[i].seen = true;
        }
        if (known || Mod.nmodules == CT_MAX_MODULES) continue;
        if (m->path[0] == '\x01') { // a relative name: the kernel's path of the mapping, if it has one
            char name[4096];
            snprintf(name, sizeof name, "%s", m->path + 1);
            if (!ct_proc_mapped_path(m->lo, m->path, sizeof m->path)) snprintf(m->path, sizeof m->path, "%s", name);
        }
        struct ct_body b = { 0 };
        ct_body_varint(&b, m->base);
        ct_body_varint(&b, m->lo);
        ct_body_varint(&b, m->hi);
        ct_body_varint(&b, tick);
        ct_body_bytes(&b, m->id, m->idlen);
        ct_meta_put_string(&b, m->path);
        ct_meta_emit_locked(CT_REC_MODULE, &b);
        // The record is kept: a fork child writes it into its own trace without asking the loader.
        Mod.modules[Mod.nmodules++] = (struct known_module){ m->base, m->lo, ident, true, b.failed ? NULL : b.bytes,
                                                         b.failed ? 0 : b.len };
        if (b.failed) ct_body_free(&b);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < Mod.nmodules; i++) {
        if (Mod.modules[i].seen) {
            Mod.modules[kept++] = Mod.modules[i];
            continue;
        }
        struct ct_body b = { 0 };
        ct_body_varint(&b, Mod.modules[i].base);
        ct_body_varint(&b, Mod.modules[i].lo);
        ct_body_varint(&b, tick);
        ct_meta_emit_locked(CT_REC_MODULE_GONE, &b);
        ct_body_free(&b);
        free(Mod.modules[i].record);
    }
    Mod.nmodules = kept;
}

// In a fork child whose loader may be locked for ever: the modules the parent knew, from its records.
CT_NO_INSTRUMENT static void replay_modules_locked(void) {
    for (uint32_t i = 0; i < Mod.nmodules; i++) {
        if (!Mod.modules[i].record) continue;
        struct ct_body b = { .bytes = Mod.modules[i].record, .len = Mod.modules[i].record_len };
        ct_meta_emit_locked(CT_REC_MODULE, &b);
    }
}

struct ct_module_scan {
    struct scan scan;
    uint64_t tick;
};

CT_NO_INSTRUMENT struct ct_module_scan *ct_meta_modules_gather(void) {
    if (!atomic_load_explicit(&Mod.loader_trusted, memory_order_acquire)) return NULL;
    struct ct_module_scan *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->tick = ct_now();
    dl_iterate_phdr(collect_module, &g->scan);
    return g;
}

// At most what the MODULE records of `g` take in the stream (a varint is at most 10 bytes; a
// relative path becomes the kernel's absolute one); NULL: the modules a fork child replays.
CT_NO_INSTRUMENT size_t ct_meta_modules_bytes(const struct ct_module_scan *g) {
    size_t bytes = 0;
    if (!g) {
        for (uint32_t i = 0; i < Mod.nmodules; i++) bytes += Mod.modules[i].record_len + 16;
        return bytes;
    }
    for (size_t i = 0; i < g->scan.n; i++) {
        const struct module_info *m = &g->scan.list[i];
        bytes += 4 * 10 + 2 * 3 + m->idlen + 16 + (m->path[0] == '\x01' ? sizeof m->path : strlen(m->path));
    }
    return bytes;
}

CT_NO_INSTRUMENT void ct_meta_modules_write(struct ct_module_scan *g) {
    if (!g) {
        ct_meta_scan_modules();
        return;
    }
    if (ct_header_get()) {
        ct_meta_lock();
        // Scans run outside our lock, so one (the drain thread's) can finish after a later one (a
        // dlclose's): a list older than the last one applied would bring back an unloaded module.
        if (g->scan.adds >= Mod.applied_adds && g->scan.subs >= Mod.applied_subs) {
            Mod.applied_adds = g->scan.adds;
            Mod.applied_subs = g->scan.subs;
            emit_changes_locked(g->scan.list, g->scan.n, g->tick);
        }
        ct_meta_unlock();
    }
    free(g->scan.list);
    free(g);
}

CT_NO_INSTRUMENT void ct_meta_scan_modules(void) {
    if (!ct_header_get()) return;
    if (!atomic_load_explicit(&Mod.loader_trusted, memory_order_acquire)) {
        ct_meta_lock();
        if (!Mod.replayed) replay_modules_locked();
        Mod.replayed = true;
        ct_meta_unlock();
        return;
    }
    ct_meta_modules_write(ct_meta_modules_gather());
}

CT_NO_INSTRUMENT void ct_meta_loader_works(void) {
    atomic_store_explicit(&Mod.loader_trusted, true, memory_order_release);
}

CT_NO_INSTRUMENT bool ct_meta_loader_trusted(void) {
    return atomic_load_explicit(&Mod.loader_trusted, memory_order_acquire);
}

CT_NO_INSTRUMENT static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
    unsigned long long *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; // the counters are the same in every entry: one is enough
}

CT_NO_INSTRUMENT void ct_meta_scan_if_changed(void) {
    if (!atomic_load_explicit(&Mod.loader_trusted, memory_order_acquire)) {
        ct_meta_scan_modules(); // the parent's records, once
        return;
    }
    unsigned long long c[2] = { 0, 0 };
    dl_iterate_phdr(read_counters, c);
    ct_meta_lock();
    bool applied = c[0] == Mod.applied_adds && c[1] == Mod.applied_subs && (c[0] || c[1]);
    ct_meta_unlock();
    if (!applied) ct_meta_scan_modules();
}

CT_NO_INSTRUMENT void ct_meta_poll_modules(void) {
    unsigned long long c[2] = { Mod.last_adds, Mod.last_subs };
    if (atomic_load_explicit(&Mod.loader_trusted, memory_order_acquire)) dl_iterate_phdr(read_counters, c);
    if (c[0] != Mod.last_adds || c[1] != Mod.last_subs) {
        Mod.last_adds = c[0];
        Mod.last_subs = c[1];
        ct_meta_scan_modules();
    }
}

// In a fork child: the module list stays (it is the child's too), but the loader may be locked
// for ever (see ct_meta_forget).
CT_NO_INSTRUMENT void ct_meta_forget_modules(void) {
    atomic_store_explicit(&Mod.loader_trusted, false, memory_order_relaxed);
    Mod.replayed = false;
}
