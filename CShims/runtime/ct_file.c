// The trace file and its block pool.
//
// Space for records comes in blocks of block_size bytes. The drain thread allocates each block at the
// end of the file (grow with ftruncate), maps it MAP_SHARED and puts it into `slots`, a ring of
// ready blocks. A recording thread that fills its block takes the next one with one CAS on `taken`,
// so the thread that records never blocks, allocates or makes a syscall for space (it only wakes the
// drain thread with a futex when the pool runs low). When the ring is empty the record is dropped and
// counted in the header: a slow disk costs records, never the program's time.
//
// The ring: the drain thread is the only writer of slots and `filled`; takers only advance `taken`.
// Slot i % cap is refilled only once taken > i, and a taker reads its slot before its CAS on `taken`
// succeeds, so a slot is never read while it is rewritten. `taken` and `filled` only grow (64-bit),
// so the CAS cannot suffer ABA.

#include "ct_file.h"
#include "ct_clock.h"
#include "ct_log.h"
#include "ct_meta.h"
#include "ct_settings.h"
#include "calltrace_runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CT_POOL_MAX 256
#define CT_HANDED_MAX 1024

static struct {
    bool open;
    int fd;
    struct ct_file_header *hdr;
    uint32_t block_size;
    pthread_mutex_t grow_lock;
    uint64_t size;                         // bytes the file is known to have (grow_lock)

    uint32_t pool_cap;
    struct ct_block_header *slots[CT_POOL_MAX];
    uint64_t slot_offset[CT_POOL_MAX];
    _Atomic uint64_t filled, taken;
    _Atomic uint32_t wake;                 // futex word: takers bump it to wake the drain thread

    // Blocks handed out to threads, owned by the drain thread, unmapped once their writer seals them.
    struct ct_block_header *handed[CT_HANDED_MAX];
    uint32_t nhanded;
    uint64_t handed_upto;
    uint64_t prefaulted_upto;              // pool blocks before this index are pre-faulted

    pthread_t drain;
    bool drain_started;
    _Atomic bool stop;
} F = { .fd = -1, .grow_lock = PTHREAD_MUTEX_INITIALIZER };

CT_NO_INSTRUMENT bool ct_file_is_open(void) { return F.open; }
CT_NO_INSTRUMENT struct ct_file_header *ct_file_header(void) { return F.hdr; }

// "%p" -> pid. Anything else is copied as it is.
CT_NO_INSTRUMENT static void expand_path(const char *tmpl, char *out, size_t cap) {
    size_t n = 0;
    for (const char *p = tmpl; *p && n + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(out + n, cap - n, "%d", (int)getpid());
            if (n >= cap) n = cap - 1;
            p++;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

// The path taken, with "-N" before the extension when it must not replace an existing file (a
// trace written before exec by the same pid, or any file we did not create).
CT_NO_INSTRUMENT static void alternative_path(const char *path, int n, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1)) dot = path + strlen(path);
    snprintf(out, cap, "%.*s-%d%s", (int)(dot - path), path, n, dot);
}

CT_NO_INSTRUMENT static bool grow_to(uint64_t size) {
    bool ok = true;
    pthread_mutex_lock(&F.grow_lock);
    if (size > F.size) {
        if (ftruncate(F.fd, (off_t)size) == 0) F.size = size;
        else ok = false;
    }
    pthread_mutex_unlock(&F.grow_lock);
    return ok;
}

CT_NO_INSTRUMENT static struct ct_block_header *map_new_block(uint64_t *offset_out) {
    uint64_t off = atomic_fetch_add_explicit(&F.hdr->next_block, F.block_size, memory_order_relaxed);
    if (!grow_to(off + F.block_size)) return NULL;
    void *p = mmap(NULL, F.block_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                   F.fd, (off_t)off);
    if (p == MAP_FAILED) return NULL;
    if (offset_out) *offset_out = off;
    return p;
}

CT_NO_INSTRUMENT struct ct_block_header *ct_file_new_block(void) {
    if (!F.open) return NULL;
    return map_new_block(NULL);
}

CT_NO_INSTRUMENT static void wake_drain(void) {
    atomic_fetch_add_explicit(&F.wake, 1, memory_order_release);
    syscall(SYS_futex, &F.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

CT_NO_INSTRUMENT struct ct_block_header *ct_file_take_block(void) {
    if (!F.open) return NULL;
    uint64_t t = atomic_load_explicit(&F.taken, memory_order_relaxed);
    for (;;) {
        uint64_t f = atomic_load_explicit(&F.filled, memory_order_acquire); // slots up to f are written
        if (t >= f) {
            wake_drain();
            return NULL;
        }
        struct ct_block_header *b = F.slots[t % F.pool_cap];
        if (atomic_compare_exchange_weak_explicit(&F.taken, &t, t + 1, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            if (f - (t + 1) <= F.pool_cap / 2) wake_drain();
            return b;
        }
    }
}

// Drain thread: keep the pool full (`want` blocks at most), pre-fault them once the program
// records (prefault_pool), unmap blocks their writers sealed.
CT_NO_INSTRUMENT static void refill_pool(uint64_t want) {
    uint64_t taken = atomic_load_explicit(&F.taken, memory_order_acquire);
    // Blocks handed out since the last pass move to the handed list before their slots are reused.
    for (; F.handed_upto < taken; F.handed_upto++) {
        struct ct_block_header *b = F.slots[F.handed_upto % F.pool_cap];
        if (F.nhanded < CT_HANDED_MAX) F.handed[F.nhanded++] = b; // else: stays mapped until exit
    }
    uint64_t filled = atomic_load_explicit(&F.filled, memory_order_relaxed);
    while (filled - taken < want && !atomic_load_explicit(&F.stop, memory_order_relaxed)) {
        uint64_t off;
        struct ct_block_header *b = map_new_block(&off);
        if (!b) break; // disk full or out of maps: takers drop and count until space comes back
        F.slots[filled % F.pool_cap] = b;
        F.slot_offset[filled % F.pool_cap] = off;
        filled++;
        atomic_store_explicit(&F.filled, filled, memory_order_release); // publishes the slot
    }
}

// Once the program has taken a block (it records), the blocks waiting in the pool are faulted in
// ahead of it (MADV_POPULATE_WRITE, Linux 5.14; elsewhere the recording thread takes the faults).
CT_NO_INSTRUMENT static void prefault_pool(void) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    uint64_t taken = atomic_load_explicit(&F.taken, memory_order_acquire);
    if (taken == 0) return;
    uint64_t filled = atomic_load_explicit(&F.filled, memory_order_relaxed);
    if (F.prefaulted_upto < taken) F.prefaulted_upto = taken;
    for (; F.prefaulted_upto < filled; F.prefaulted_upto++) {
        madvise(F.slots[F.prefaulted_upto % F.pool_cap], F.block_size, MADV_POPULATE_WRITE);
    }
}

CT_NO_INSTRUMENT static void unmap_sealed(void) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < F.nhanded; i++) {
        struct ct_block_header *b = F.handed[i];
        if (atomic_load_explicit(&b->flags, memory_order_acquire) & CT_BLOCK_SEALED) munmap(b, F.block_size);
        else F.handed[kept++] = b;
    }
    F.nhanded = kept;
}

CT_NO_INSTRUMENT static void *drain_main(void *arg) {
    (void)arg;
    uint64_t last_poll = 0;
    while (!atomic_load_explicit(&F.stop, memory_order_acquire)) {
        uint32_t seen = atomic_load_explicit(&F.wake, memory_order_acquire);
        // Blocks are pre-faulted only once the program records: one that records little should
        // not pay 16 MB of page cache, nor see the drain thread's faulting in its CPU time.
        refill_pool(F.pool_cap);
        prefault_pool();
        unmap_sealed();
        uint64_t now = ct_monotonic_ns();
        if (now - last_poll > 20 * 1000000ull) { // new modules (dlopen), thread names
            ct_meta_poll();
            last_poll = now;
        }
        struct timespec timeout = { 0, 2 * 1000000 };
        syscall(SYS_futex, &F.wake, FUTEX_WAIT_PRIVATE, seen, &timeout, NULL, 0);
    }
    return NULL;
}

CT_NO_INSTRUMENT void ct_file_start_drain(void) {
    if (!F.open || F.drain_started) return;
    // The first 4 MiB of blocks are ready before main runs (mapped, not yet faulted in: cheap), so a
    // program that records at once has runway while the drain thread starts and maps the rest.
    uint64_t first = (4u << 20) / F.block_size;
    refill_pool(first < 2 ? 2 : first > F.pool_cap ? F.pool_cap : first);
    // The drain thread must not receive the program's signals: block them all while creating it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    F.drain_started = pthread_create(&F.drain, &attr, drain_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (F.drain_started) pthread_setname_np(F.drain, "calltrace-drain");
}

CT_NO_INSTRUMENT void ct_file_stop_drain(void) {
    if (!F.drain_started) return;
    atomic_store_explicit(&F.stop, true, memory_order_release);
    wake_drain();
    pthread_join(F.drain, NULL);
    F.drain_started = false;
}

CT_NO_INSTRUMENT static int create_exclusive(const char *path) {
    return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

CT_NO_INSTRUMENT bool ct_file_open(const struct ct_settings *settings) {
    char path[4096], alt[4200];
    expand_path(settings->output, path, sizeof path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { // a directory: the default name inside it
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "%scalltrace-%d.trace", n && path[n - 1] == '/' ? "" : "/", (int)getpid());
    }
    int fd = create_exclusive(path);
    // Never replace a file that is there already (a trace this pid wrote before exec, or anything
    // else): take the first free "name-N.ext" instead.
    for (int n = 1; fd < 0 && errno == EEXIST && n < 1000; n++) {
        alternative_path(path, n, alt, sizeof alt);
        fd = create_exclusive(alt);
    }
    if (fd < 0) {
        ct_warn("cannot create the trace file %s: %s; the program runs untraced", path, strerror(errno));
        return false;
    }
    // Many small blocks rather than a few big ones: every recording thread holds one, so many
    // threads starting together must not run the pool dry (16M: 256 blocks of 64k).
    uint64_t block = settings->buffer / CT_POOL_MAX;
    if (block > (1u << 20)) block = 1u << 20;
    if (block < (16u << 10)) block = 16u << 10;
    block &= ~(uint64_t)4095;
    if (block > settings->buffer / 2) block = (settings->buffer / 2) & ~(uint64_t)4095;
    if (block < 4096) block = 4096;
    uint64_t cap = settings->buffer / block;
    if (cap < 2) cap = 2;
    if (cap > CT_POOL_MAX) cap = CT_POOL_MAX;

    if (ftruncate(fd, CT_HEADER_SIZE) != 0) goto fail;
    struct ct_file_header *h = mmap(NULL, CT_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) goto fail;
    F.fd = fd;
    F.hdr = h;
    F.size = CT_HEADER_SIZE;
    F.block_size = (uint32_t)block;
    F.pool_cap = (uint32_t)cap;
    memcpy(h->magic, CT_MAGIC, 8);
    h->version = CALLTRACE_FORMAT_VERSION;
    h->header_size = CT_HEADER_SIZE;
    h->block_size = F.block_size;
    h->pid = (uint64_t)getpid();
    h->threads_mode = settings->threads;
    h->max_depth = (uint32_t)settings->max_depth;
    atomic_store_explicit(&h->next_block, CT_HEADER_SIZE, memory_order_relaxed);
    F.open = true;
    return true;
fail:
    ct_warn("cannot write the trace file %s: %s; the program runs untraced", path, strerror(errno));
    close(fd);
    unlink(path);
    return false;
}

CT_NO_INSTRUMENT void ct_file_close(uint64_t end_tick) {
    if (!F.open) return;
    struct ct_file_header *h = F.hdr;
    uint64_t tick, ns;
    ct_clock_pair(&tick, &ns);
    if (ct_clock_is_tsc && ns > h->calib_ns0 + 1000000) { // a longer baseline gives a better rate
        h->calib_tick1 = tick;
        h->calib_ns1 = ns;
    }
    h->end_tick = end_tick;

    // Claim the blocks still in the pool so that nobody can start writing into them, then cut those
    // at the end of the file off: a short program leaves a short trace.
    uint64_t t = atomic_load_explicit(&F.taken, memory_order_relaxed);
    uint64_t f = atomic_load_explicit(&F.filled, memory_order_acquire);
    while (t < f && !atomic_compare_exchange_weak_explicit(&F.taken, &t, f, memory_order_acq_rel,
                                                           memory_order_relaxed)) {
        f = atomic_load_explicit(&F.filled, memory_order_acquire);
    }
    uint64_t end = atomic_load_explicit(&h->next_block, memory_order_relaxed);
    for (bool cut = true; cut && end > CT_HEADER_SIZE;) {
        cut = false;
        for (uint64_t i = t; i < f; i++) {
            if (F.slot_offset[i % F.pool_cap] == end - F.block_size) {
                end -= F.block_size;
                cut = true;
            }
        }
    }
    for (uint64_t i = t; i < f; i++) munmap(F.slots[i % F.pool_cap], F.block_size);
    pthread_mutex_lock(&F.grow_lock);
    if (end < F.size && ftruncate(F.fd, (off_t)end) == 0) F.size = end;
    atomic_store_explicit(&h->next_block, F.size, memory_order_relaxed); // readers check the size against it
    pthread_mutex_unlock(&F.grow_lock);
    atomic_fetch_or_explicit(&h->flags, CT_FILE_CLOSED, memory_order_release);
}

CT_NO_INSTRUMENT void ct_file_forget_after_fork(void) {
    // The mappings are the parent's shared pages: unmap them here (the parent keeps its own) and
    // never write to them again.
    if (F.open) {
        uint64_t t = atomic_load_explicit(&F.taken, memory_order_relaxed);
        uint64_t f = atomic_load_explicit(&F.filled, memory_order_relaxed);
        for (uint64_t i = t; i < f; i++) munmap(F.slots[i % F.pool_cap], F.block_size);
        for (uint32_t i = 0; i < F.nhanded; i++) munmap(F.handed[i], F.block_size);
        munmap(F.hdr, CT_HEADER_SIZE);
        close(F.fd);
    }
    memset(&F, 0, sizeof F);
    F.fd = -1;
    pthread_mutex_init(&F.grow_lock, NULL);
}
