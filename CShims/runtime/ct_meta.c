
#include "ct_meta.h"
#include "ct_clock.h"
#include "ct_file.h"

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
    bool seen;                    // in the scan under way
};

struct known_thread {
    _Atomic uint32_t stream;      // 0: free slot
    uint64_t tid;
    char name[16];
    bool final;
};

static struct {
    pthread_mutex_t lock;
    struct ct_block_header *block;
    uint32_t used, capacity;
    uint64_t seq;
    struct known_module modules[CT_MAX_MODULES];
    uint32_t nmodules;
    unsigned long long last_adds, last_subs;
    struct known_thread threads[CT_MAX_THREADS];
    _Atomic uint32_t nthreads;
} M = { .lock = PTHREAD_MUTEX_INITIALIZER };

// A growable byte buffer for one record body (metadata is small and written off the hot path).
struct body {
    uint8_t *bytes;
    size_t len, cap;
};

CT_NO_INSTRUMENT static void body_reserve(struct body *b, size_t more) {
    if (b->len + more <= b->cap) return;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + more) cap *= 2;
    uint8_t *p = realloc(b->bytes, cap);
    if (!p) return;
    b->bytes = p;
    b->cap = cap;
}

CT_NO_INSTRUMENT static void put_varint(struct body *b, uint64_t v) {
    body_reserve(b, 10);
    if (b->len + 10 > b->cap) return;
    while (v >= 0x80) {
        b->bytes[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->bytes[b->len++] = (uint8_t)v;
}

CT_NO_INSTRUMENT static void put_bytes(struct body *b, const void *p, size_t n) {
    put_varint(b, n);
    body_reserve(b, n);
    if (b->len + n > b->cap) return;
    memcpy(b->bytes + b->len, p, n);
    b->len += n;
}

CT_NO_INSTRUMENT static void put_string(struct body *b, const char *s) { put_bytes(b, s, strlen(s)); }

// Appends one sized record (tag, varint length, body) to the metadata stream. Caller holds M.lock.
CT_NO_INSTRUMENT static void emit_locked(uint8_t tag, struct body *b) {
    uint32_t need = 1 + 10 + (uint32_t)b->len;
    if (!M.block || M.capacity - M.used < need) {
        struct ct_file_header *h = ct_file_header();
        if (!h || need > h->block_size - CT_BLOCK_HEADER_SIZE) return;
        struct ct_block_header *nb = ct_file_new_block();
        if (!nb) return;
        if (M.block) {
            atomic_fetch_or_explicit(&M.block->flags, CT_BLOCK_SEALED, memory_order_release);
            munmap(M.block, h->block_size);
        }
        memcpy(nb->magic, "CTBK", 4);
        nb->stream = 0;
        nb->seq = M.seq++;
        M.block = nb;
        M.used = 0;
        M.capacity = h->block_size - CT_BLOCK_HEADER_SIZE;
    }
    uint8_t *p = (uint8_t *)M.block + CT_BLOCK_HEADER_SIZE + M.used;
    uint8_t *q = p;
    *q++ = tag;
    uint64_t n = b->len;
    while (n >= 0x80) {
        *q++ = (uint8_t)(n | 0x80);
        n >>= 7;
    }
    *q++ = (uint8_t)n;
    memcpy(q, b->bytes, b->len);
    q += b->len;
    M.used += (uint32_t)(q - p);
    atomic_store_explicit(&M.block->used, M.used, memory_order_release);
}

CT_NO_INSTRUMENT static void emit(uint8_t tag, struct body *b) {
    pthread_mutex_lock(&M.lock);
    emit_locked(tag, b);
    pthread_mutex_unlock(&M.lock);
    free(b->bytes);
    *b = (struct body){ 0 };
}

CT_NO_INSTRUMENT void ct_meta_write_process(void) {
    struct body b = { 0 };
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    put_varint(&b, (uint64_t)getpid());
    put_varint(&b, (uint64_t)getppid());
    put_string(&b, exe);
    // The command line, from /proc (argv itself is not ours to read before main).
    char *args = NULL;
    size_t len = 0, cap = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        for (;;) {
            if (len + 4096 > cap) {
                char *p = realloc(args, cap = cap ? cap * 2 : 8192);
                if (!p) break;
                args = p;
            }
            ssize_t r = read(fd, args + len, cap - len);
            if (r <= 0) break;
            len += (size_t)r;
        }
        close(fd);
    }
    uint64_t argc = 0;
    for (size_t i = 0; i < len; i++) argc += args[i] == '\0';
    put_varint(&b, argc);
    for (size_t i = 0, start = 0; i < len; i++) {
        if (args[i] == '\0') {
            put_bytes(&b, args + start, i - start);
            start = i + 1;
        }
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

struct scan {
    int index;
    uint64_t tick;
};

CT_NO_INSTRUMENT static int on_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct scan *scan = data;
    int index = scan->index++;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    if (hi == 0) return 0;
    for (uint32_t i = 0; i < M.nmodules; i++) {
        if (M.modules[i].base == info->dlpi_addr && M.modules[i].lo == lo) {
            M.modules[i].seen = true;
            return 0;
        }
    }
    if (M.nmodules == CT_MAX_MODULES) return 0;
    M.modules[M.nmodules++] = (struct known_module){ info->dlpi_addr, lo, true };

    char exe[4096];
    const char *path = info->dlpi_name;
    if (index == 0 && (!path || !*path)) { // the main program
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        path = exe;
    }
    const uint8_t *id = NULL;
    size_t idlen = build_id(info, &id);
    struct body b = { 0 };
    put_varint(&b, info->dlpi_addr);
    put_varint(&b, lo);
    put_varint(&b, hi);
    put_varint(&b, scan->tick);
    put_bytes(&b, id, idlen);
    put_string(&b, path ? path : "");
    emit_locked(CT_REC_MODULE, &b);
    free(b.bytes);
    return 0;
}

CT_NO_INSTRUMENT void ct_meta_scan_modules(void) {
    if (!ct_file_is_open()) return;
    pthread_mutex_lock(&M.lock);
    for (uint32_t i = 0; i < M.nmodules; i++) M.modules[i].seen = false;
    struct scan scan = { 0, ct_now() };
    dl_iterate_phdr(on_module, &scan);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < M.nmodules; i++) {
        if (M.modules[i].seen) {
            M.modules[kept++] = M.modules[i];
            continue;
        }
        struct body b = { 0 };
        put_varint(&b, M.modules[i].base);
        put_varint(&b, M.modules[i].lo);
        put_varint(&b, scan.tick);
        emit_locked(CT_REC_MODULE_GONE, &b);
        free(b.bytes);
    }
    M.nmodules = kept;
    pthread_mutex_unlock(&M.lock);
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

CT_NO_INSTRUMENT static void write_thread_locked(struct known_thread *t) {
    char path[64], name[17] = { 0 };
    snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, name, 16);
    close(fd);
    if (n <= 0) return;
    if (name[n - 1] == '\n') n--;
    name[n] = '\0';
    if (strncmp(name, t->name, sizeof t->name) == 0) return;
    memcpy(t->name, name, sizeof t->name);
    struct body b = { 0 };
    put_varint(&b, atomic_load_explicit(&t->stream, memory_order_relaxed));
    put_varint(&b, t->tid);
    put_string(&b, name);
    emit_locked(CT_REC_THREAD, &b);
    free(b.bytes);
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

CT_NO_INSTRUMENT void ct_meta_poll(void) {
    unsigned long long c[2] = { 0, 0 };
    dl_iterate_phdr(read_counters, c);
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
    if (M.block) atomic_fetch_or_explicit(&M.block->flags, CT_BLOCK_SEALED, memory_order_release);
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT void ct_meta_forget_after_fork(void) {
    // M.block is one of the parent's shared pages: unmap it here (call this before
    // ct_file_forget_after_fork, which unmaps the header that holds block_size) and never touch it.
    struct ct_file_header *h = ct_file_header();
    if (M.block && h) munmap(M.block, h->block_size);
    memset(&M, 0, sizeof M);
    pthread_mutex_init(&M.lock, NULL);
}
