#include "ct_meta.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_proc.h"
#include "ct_ring.h"
#include "ct_writer.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CT_MAX_MODULES 1024
#define CT_MAX_THREADS 4096

struct known_module {
    uint64_t base, lo;
    uint64_t ident;               // hash of path and build-id: another module may come to the same address
    bool seen;                    // in the scan under way
    uint8_t *record;              // its MODULE record's body (malloc'ed), for a fork child
    size_t record_len;
};

struct known_thread {
    _Atomic uint32_t stream;      // 0: free slot
    uint64_t tid;
    char name[16];
    bool final;
};

static struct {
    pthread_mutex_t lock;
    struct ct_cursor cursor;
    uint64_t seq;
    struct known_module modules[CT_MAX_MODULES];
    uint32_t nmodules;
    unsigned long long last_adds, last_subs;       // the drain thread's poll
    unsigned long long applied_adds, applied_subs; // the newest scan applied
    struct known_thread threads[CT_MAX_THREADS];
    _Atomic uint32_t nthreads;
    _Atomic bool loader_trusted;  // dl_iterate_phdr cannot block for ever (see ct_meta_forget)
    bool replayed;                // a fork child wrote the parent's modules
    char exe[4096];               // the program's path, as first read (see program_path)
} M = { .lock = PTHREAD_MUTEX_INITIALIZER, .loader_trusted = true };

// Appends one sized record to the metadata stream, moving to a fresh block when it does not fit.
// A record larger than a block's payload is not written (callers keep theirs smaller). Caller
// holds M.lock.
CT_NO_INSTRUMENT static void emit_locked(uint8_t tag, const struct ct_body *b) {
    if (b->failed || !ct_header_get()) return;
    if (ct_cursor_put_sized(&M.cursor, tag, b->bytes, b->len)) return;
    struct ct_block_header *nb = ct_ring_take();
    if (!nb) return;
    ct_cursor_seal(&M.cursor);
    ct_cursor_start(&M.cursor, nb, ct_ring_block_size(), 0, 0, M.seq++);
    ct_cursor_put_sized(&M.cursor, tag, b->bytes, b->len);
}

CT_NO_INSTRUMENT static void emit(uint8_t tag, struct ct_body *b) {
    pthread_mutex_lock(&M.lock);
    emit_locked(tag, b);
    pthread_mutex_unlock(&M.lock);
    ct_body_free(b);
}

CT_NO_INSTRUMENT void ct_meta_write(uint8_t tag, struct ct_body *b) { emit(tag, b); }

CT_NO_INSTRUMENT void ct_meta_start(void) {
    pthread_mutex_lock(&M.lock);
    struct ct_block_header *nb = M.cursor.block ? NULL : ct_ring_take();
    if (nb) ct_cursor_start(&M.cursor, nb, ct_ring_block_size(), 0, 0, M.seq++);
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT static void put_string(struct ct_body *b, const char *s) { ct_body_bytes(b, s, strlen(s)); }

// The program's path. Read once and kept: /proc/self/exe cannot be read once the main thread has
// ended while other threads run on (ct_raw_exit.h), and the program must not come to look unloaded.
CT_NO_INSTRUMENT static void program_path(char *path, size_t size) {
    if (!M.exe[0]) {
        ssize_t n = readlink("/proc/self/exe", M.exe, sizeof M.exe - 1);
        M.exe[n > 0 ? n : 0] = '\0';
    }
    snprintf(path, size, "%s", M.exe);
}

CT_NO_INSTRUMENT void ct_meta_write_process(void) {
    struct ct_body b = { 0 };
    char exe[4096];
    program_path(exe, sizeof exe);
    ct_body_varint(&b, (uint64_t)getpid());
    ct_body_varint(&b, (uint64_t)getppid());
    put_string(&b, exe);
    // The command line, from /proc (argv itself is not ours to read before main). Arguments that
    // would not fit one block are left out and counted, so the record is never lost whole.
    size_t len = 0;
    char *args = ct_proc_read_all("/proc/self/cmdline", &len);
    uint64_t argc = 0;
    for (size_t i = 0; i < len; i++) argc += args[i] == '\0';
    size_t budget = ct_ring_block_size() - CT_BLOCK_HEADER_SIZE - 64 - b.len - 10;
    uint64_t kept = 0;
    for (size_t i = 0, start = 0, used = 0; i < len; i++) {
        if (args[i] != '\0') continue;
        size_t n = i - start + 10;
        if (used + n > budget) break;
        used += n;
        kept++;
        start = i + 1;
    }
    ct_body_varint(&b, kept);
    for (size_t i = 0, start = 0, k = 0; i < len && k < kept; i++) {
        if (args[i] != '\0') continue;
        ct_body_bytes(&b, args + start, i - start);
        start = i + 1;
        k++;
    }
    if (kept < argc) {
        ct_body_varint(&b, argc - kept); // omitted_args
        ct_header_lose(CT_LOST_ARGS_CUT, 0);
    }
    free(args);
    emit(CT_REC_PROCESS, &b);
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

// The path of the file mapped at `addr`, from /proc/self/maps (always absolute): for modules the
// loader knows by a relative path ("./plugin.so"), which would mean nothing from another directory.
CT_NO_INSTRUMENT static bool mapped_path(uint64_t addr, char *out, size_t cap) {
    size_t len = 0;
    char *maps = ct_proc_read_all("/proc/self/maps", &len);
    bool found = false;
    for (char *line = maps; line && *line && !found;) {
        char *next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        struct ct_proc_map_line l;
        if (ct_proc_parse_map_line(line, &l) && addr >= l.start && addr < l.end && l.path[0] == '/') {
            snprintf(out, cap, "%.*s", (int)l.path_len, l.path);
            found = true;
        }
        line = next;
    }
    free(maps);
    return found;
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
        program_path(m->path, sizeof m->path);
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

// MODULE for each module not written yet, MODULE_GONE for each one that went. Caller holds M.lock.
CT_NO_INSTRUMENT static uint64_t identity(const struct module_info *m) {
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (const char *p = m->path; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (size_t i = 0; i < m->idlen; i++) h = (h ^ m->id[i]) * 1099511628211ull;
    return h;
}

CT_NO_INSTRUMENT static void emit_changes_locked(struct module_info *list, size_t n, uint64_t tick) {
    for (uint32_t i = 0; i < M.nmodules; i++) M.modules[i].seen = false;
    for (size_t k = 0; k < n; k++) {
        struct module_info *m = &list[k];
        uint64_t ident = identity(m);
        bool known = false;
        for (uint32_t i = 0; i < M.nmodules && !known; i++) {
            if (M.modules[i].base == m->base && M.modules[i].lo == m->lo && M.modules[i].ident == ident)
                known = M.modules[i].seen = true;
        }
        if (known || M.nmodules == CT_MAX_MODULES) continue;
        if (m->path[0] == '\x01') { // a relative name: the kernel's path of the mapping, if it has one
            char name[4096];
            snprintf(name, sizeof name, "%s", m->path + 1);
            if (!mapped_path(m->lo, m->path, sizeof m->path)) snprintf(m->path, sizeof m->path, "%s", name);
        }
        struct ct_body b = { 0 };
        ct_body_varint(&b, m->base);
        ct_body_varint(&b, m->lo);
        ct_body_varint(&b, m->hi);
        ct_body_varint(&b, tick);
        ct_body_bytes(&b, m->id, m->idlen);
        put_string(&b, m->path);
        emit_locked(CT_REC_MODULE, &b);
        // The record is kept: a fork child writes it into its own trace without asking the loader.
        M.modules[M.nmodules++] = (struct known_module){ m->base, m->lo, ident, true, b.failed ? NULL : b.bytes,
                                                         b.failed ? 0 : b.len };
        if (b.failed) ct_body_free(&b);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < M.nmodules; i++) {
        if (M.modules[i].seen) {
            M.modules[kept++] = M.modules[i];
            continue;
        }
        struct ct_body b = { 0 };
        ct_body_varint(&b, M.modules[i].base);
        ct_body_varint(&b, M.modules[i].lo);
        ct_body_varint(&b, tick);
        emit_locked(CT_REC_MODULE_GONE, &b);
        ct_body_free(&b);
        free(M.modules[i].record);
    }
    M.nmodules = kept;
}

// In a fork child whose loader may be locked for ever: the modules the parent knew, from its records.
CT_NO_INSTRUMENT static void replay_modules_locked(void) {
    for (uint32_t i = 0; i < M.nmodules; i++) {
        if (!M.modules[i].record) continue;
        struct ct_body b = { .bytes = M.modules[i].record, .len = M.modules[i].record_len };
        emit_locked(CT_REC_MODULE, &b);
    }
}

CT_NO_INSTRUMENT void ct_meta_scan_modules(void) {
    if (!ct_header_get()) return;
    if (!atomic_load_explicit(&M.loader_trusted, memory_order_acquire)) {
        pthread_mutex_lock(&M.lock);
        if (!M.replayed) replay_modules_locked();
        M.replayed = true;
        pthread_mutex_unlock(&M.lock);
        return;
    }
    uint64_t tick = ct_now();
    struct scan scan = { 0 };
    dl_iterate_phdr(collect_module, &scan);
    pthread_mutex_lock(&M.lock);
    // Scans run outside our lock, so one (the drain thread's) can finish after a later one (a
    // dlclose's): a list older than the last one applied would bring back an unloaded module.
    if (scan.adds >= M.applied_adds && scan.subs >= M.applied_subs) {
        M.applied_adds = scan.adds;
        M.applied_subs = scan.subs;
        emit_changes_locked(scan.list, scan.n, tick);
    }
    pthread_mutex_unlock(&M.lock);
    free(scan.list);
}

CT_NO_INSTRUMENT void ct_meta_loader_works(void) {
    atomic_store_explicit(&M.loader_trusted, true, memory_order_release);
}

CT_NO_INSTRUMENT static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
    unsigned long long *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; // the counters are the same in every entry: one is enough
}

CT_NO_INSTRUMENT void ct_meta_register_thread(uint32_t stream, uint64_t tid) {
    uint32_t i = atomic_fetch_add_explicit(&M.nthreads, 1, memory_order_relaxed);
    if (i >= CT_MAX_THREADS) return; // its name stays unknown; the tid is in its blocks
    M.threads[i].tid = tid;
    atomic_store_explicit(&M.threads[i].stream, stream, memory_order_release);
}

CT_NO_INSTRUMENT uint32_t ct_meta_thread_count(void) {
    uint32_t n = atomic_load_explicit(&M.nthreads, memory_order_acquire);
    return n < CT_MAX_THREADS ? n : CT_MAX_THREADS;
}

CT_NO_INSTRUMENT bool ct_meta_thread_at(uint32_t i, uint32_t *stream, uint64_t *tid) {
    if (i >= CT_MAX_THREADS) return false;
    // The stream is stored last, with release (ct_meta_register_thread): once it is set, so is the tid.
    *stream = atomic_load_explicit(&M.threads[i].stream, memory_order_acquire);
    *tid = M.threads[i].tid;
    return *stream != 0;
}

CT_NO_INSTRUMENT void ct_meta_write_record(uint8_t tag, const uint8_t *body, size_t len) {
    struct ct_body b = { .bytes = (uint8_t *)body, .len = len, .cap = len };
    pthread_mutex_lock(&M.lock);
    emit_locked(tag, &b);
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT static void write_thread_locked(struct known_thread *t) {
    char name[17] = { 0 };
    long n = ct_proc_read_task(t->tid, "comm", name, sizeof name);
    if (n <= 0) return;
    if (name[n - 1] == '\n') n--;
    name[n] = '\0';
    if (strncmp(name, t->name, sizeof t->name) == 0) return;
    memcpy(t->name, name, sizeof t->name);
    struct ct_body b = { 0 };
    ct_body_varint(&b, atomic_load_explicit(&t->stream, memory_order_relaxed));
    ct_body_varint(&b, t->tid);
    put_string(&b, name);
    emit_locked(CT_REC_THREAD, &b);
    ct_body_free(&b);
}

CT_NO_INSTRUMENT void ct_meta_thread_final(uint32_t stream, uint64_t tid) {
    pthread_mutex_lock(&M.lock);
    uint32_t n = atomic_load_explicit(&M.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < CT_MAX_THREADS; i++) {
        struct known_thread *t = &M.threads[i];
        if (atomic_load_explicit(&t->stream, memory_order_acquire) == stream && t->tid == tid && !t->final) {
            write_thread_locked(t);
            t->final = true;
        }
    }
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT void ct_meta_scan_if_changed(void) {
    if (!atomic_load_explicit(&M.loader_trusted, memory_order_acquire)) {
        ct_meta_scan_modules(); // the parent's records, once
        return;
    }
    unsigned long long c[2] = { 0, 0 };
    dl_iterate_phdr(read_counters, c);
    pthread_mutex_lock(&M.lock);
    bool applied = c[0] == M.applied_adds && c[1] == M.applied_subs && (c[0] || c[1]);
    pthread_mutex_unlock(&M.lock);
    if (!applied) ct_meta_scan_modules();
}

CT_NO_INSTRUMENT void ct_meta_poll(void) {
    unsigned long long c[2] = { M.last_adds, M.last_subs };
    if (atomic_load_explicit(&M.loader_trusted, memory_order_acquire)) dl_iterate_phdr(read_counters, c);
    if (c[0] != M.last_adds || c[1] != M.last_subs) {
        M.last_adds = c[0];
        M.last_subs = c[1];
        ct_meta_scan_modules();
    }
    pthread_mutex_lock(&M.lock);
    uint32_t n = atomic_load_explicit(&M.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < CT_MAX_THREADS; i++) {
        struct known_thread *t = &M.threads[i];
        if (atomic_load_explicit(&t->stream, memory_order_acquire) && !t->final) write_thread_locked(t);
    }
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT void ct_meta_close(void) {
    pthread_mutex_lock(&M.lock);
    ct_cursor_seal(&M.cursor);
    pthread_mutex_unlock(&M.lock);
}

// Fork: the prepare handler takes the lock (never held across a loader call, so this waits for a
// short section only), so that the child gets a consistent copy of the module list.
CT_NO_INSTRUMENT void ct_meta_before_fork(void) { pthread_mutex_lock(&M.lock); }
CT_NO_INSTRUMENT void ct_meta_after_fork_in_parent(void) { pthread_mutex_unlock(&M.lock); }

CT_NO_INSTRUMENT void ct_meta_forget(void) {
    // The metadata block is one of the parent's shared pages (ct_drain_forget unmaps it); the
    // threads are the parent's. The module list stays: it is the child's too. Another thread of
    // the parent may have been inside dlopen at the fork and left the loader's lock taken for
    // ever in the child, so the child asks the loader nothing until the program's own dlopen or
    // dlclose has shown that it works (ct_meta_loader_works), and writes the parent's records.
    M.cursor = (struct ct_cursor){ 0 };
    M.seq = 0;
    memset(M.threads, 0, sizeof M.threads);
    atomic_store_explicit(&M.nthreads, 0, memory_order_relaxed);
    atomic_store_explicit(&M.loader_trusted, false, memory_order_relaxed);
    M.replayed = false;
    pthread_mutex_init(&M.lock, NULL);
}
