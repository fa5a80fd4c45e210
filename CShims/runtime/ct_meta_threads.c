// The recording threads: a lock-free registry of the live ones (also the run-delay sampler's list)
// and their names, as THREAD records read from /proc, written when they change and at the end.
//
// A thread's slot is free again once it has ended, so a service that starts a short thread every
// few milliseconds for weeks keeps as many slots as it has threads at once, not one per thread it
// ever had. Without a limit the names go into the metadata stream. In a flight recorder's trace,
// whose metadata stream is never reused, they go where they can be: a live thread's into the events
// stream (kept through a reuse while it is its latest name: ct_meta_thread_is_current), and a thread
// that ends writes its last into its own stream, after its calls (ct_stream_name_at_end), so it
// lives as long as they do and a thread that leaves no calls leaves no name ("The flight recorder",
// docs/design.md).
#include "ct_meta.h"
#include "ct_meta_stream.h"
#include "ct_event_stream.h"
#include "ct_header.h"
#include "ct_proc.h"
#include "ct_syscall.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

// A slot's stream while the registering thread fills it in: no thread's stream (ct_thread.c).
#define CT_SLOT_FILLING CT_STREAM_EVENTS

struct known_thread {
    _Atomic uint32_t stream;      // 0: free; CT_SLOT_FILLING while taken and not yet filled in
    _Atomic uint64_t tid;
    // The name last written for it, NUL-padded: written under the stream's lock, read lock-free by
    // the events stream's carry (ct_meta_thread_is_current) through a sequence lock, `version` odd
    // while it changes.
    _Atomic uint32_t version;
    _Atomic uint64_t written[2];
};

// The registry is lock-free; names are written, and slots freed, under the stream's lock
// (ct_meta_lock), so that a slot never changes hands while a name is written for it.
static struct {
    struct known_thread threads[CT_META_MAX_THREADS];
    _Atomic uint32_t end;         // every slot ever taken is below it
    _Atomic bool full;            // a thread found no free slot: the poll looks for slots left behind
} T;

CT_NO_INSTRUMENT static bool limited(void) {
    struct ct_file_header *h = ct_header_get();
    return h && h->limit;
}

// The lowest free slot: with few threads at once, the slots looked at stay few however many come
// and go.
CT_NO_INSTRUMENT void ct_meta_register_thread(uint32_t stream, uint64_t tid) {
    for (uint32_t i = 0; i < CT_META_MAX_THREADS; i++) {
        struct known_thread *t = &T.threads[i];
        uint32_t free = 0;
        if (atomic_load_explicit(&t->stream, memory_order_relaxed) != 0 ||
            !atomic_compare_exchange_strong_explicit(&t->stream, &free, CT_SLOT_FILLING, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        // No one else writes a slot being filled: the poll and the carry pass it by.
        atomic_store_explicit(&t->tid, tid, memory_order_relaxed);
        atomic_store_explicit(&t->written[0], 0, memory_order_relaxed);
        atomic_store_explicit(&t->written[1], 0, memory_order_relaxed);
        uint32_t end = atomic_load_explicit(&T.end, memory_order_relaxed);
        while (end <= i && !atomic_compare_exchange_weak_explicit(&T.end, &end, i + 1, memory_order_relaxed,
                                                                  memory_order_relaxed)) { }
        atomic_store_explicit(&t->stream, stream, memory_order_release);
        return;
    }
    // More recording threads at once than slots: this one is not sampled (the header says some
    // were not), nor named while it runs.
    atomic_store_explicit(&T.full, true, memory_order_relaxed);
    struct ct_file_header *h = ct_header_get();
    if (h) atomic_fetch_or_explicit(&h->sched_flags, CT_SCHED_PARTIAL, memory_order_relaxed);
}

CT_NO_INSTRUMENT uint32_t ct_meta_thread_slots(void) {
    return atomic_load_explicit(&T.end, memory_order_acquire);
}

CT_NO_INSTRUMENT bool ct_meta_thread_at(uint32_t i, uint32_t *stream, uint64_t *tid) {
    if (i >= CT_META_MAX_THREADS) return false;
    // The stream is stored last, with release (ct_meta_register_thread): once it is set, so is the
    // tid. A slot freed and taken again meanwhile has another stream (stream ids are never reused
    // within a trace), so reading the stream again tells a tid that is not its thread's.
    *stream = atomic_load_explicit(&T.threads[i].stream, memory_order_acquire);
    if (*stream == 0 || *stream == CT_SLOT_FILLING) return false;
    *tid = atomic_load_explicit(&T.threads[i].tid, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&T.threads[i].stream, memory_order_relaxed) == *stream;
}

// The calling thread's own name with one system call (a thread's end, the main thread's at exit);
// another's from /proc (open, read, close: 0.015 ms of a hello world's exit).
CT_NO_INSTRUMENT long ct_meta_read_thread_name(uint64_t tid, char name[17]) {
    long n;
    if ((uint64_t)ct_syscall(SYS_gettid) == tid && ct_syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) == 0)
        n = (long)strnlen(name, 16);
    else
        n = ct_proc_read_task(tid, "comm", name, 17);
    if (n > 0 && name[n - 1] == '\n') n--;
    if (n > 0) name[n] = '\0';
    return n;
}

// The live thread of `stream` (0 for a thread that never recorded: none).
CT_NO_INSTRUMENT static struct known_thread *slot_of(uint32_t stream) {
    if (stream == 0 || stream == CT_SLOT_FILLING) return NULL;
    uint32_t end = atomic_load_explicit(&T.end, memory_order_acquire);
    for (uint32_t i = 0; i < end; i++)
        if (atomic_load_explicit(&T.threads[i].stream, memory_order_acquire) == stream) return &T.threads[i];
    return NULL;
}

CT_NO_INSTRUMENT bool ct_meta_thread_is_current(uint32_t stream, const char *name, size_t len) {
    struct known_thread *t = len <= 16 ? slot_of(stream) : NULL;
    if (!t) return false;
    uint32_t v = atomic_load_explicit(&t->version, memory_order_acquire);
    uint64_t words[2] = { atomic_load_explicit(&t->written[0], memory_order_relaxed),
                          atomic_load_explicit(&t->written[1], memory_order_relaxed) };
    atomic_thread_fence(memory_order_acquire);
    if ((v & 1) || atomic_load_explicit(&t->version, memory_order_relaxed) != v ||
        atomic_load_explicit(&t->stream, memory_order_relaxed) != stream)
        return false;
    char written[17] = { 0 };
    memcpy(written, words, 16);
    return strnlen(written, 16) == len && memcmp(written, name, len) == 0;
}

// Writes the thread's name unless it is the one written last (then noted, for the carry): into the
// metadata stream, or a flight recorder's events stream while it runs. Caller holds the stream's lock.
CT_NO_INSTRUMENT static void write_name_locked(struct known_thread *t, uint32_t stream, uint64_t tid,
                                               const char name[17], bool events) {
    uint64_t words[2] = { 0, 0 };
    memcpy(words, name, strnlen(name, 16));
    if (atomic_load_explicit(&t->written[0], memory_order_relaxed) == words[0] &&
        atomic_load_explicit(&t->written[1], memory_order_relaxed) == words[1])
        return;
    uint32_t v = atomic_load_explicit(&t->version, memory_order_relaxed);
    atomic_store_explicit(&t->version, v + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&t->written[0], words[0], memory_order_relaxed);
    atomic_store_explicit(&t->written[1], words[1], memory_order_relaxed);
    atomic_store_explicit(&t->version, v + 2, memory_order_release);
    struct ct_body b = { 0 };
    ct_body_varint(&b, stream);
    ct_body_varint(&b, tid);
    ct_meta_put_string(&b, name);
    if (b.failed) {
        // nothing: the next poll finds the same name written and does not try again
    } else if (events) {
        ct_event_stream_write(CT_REC_THREAD, b.bytes, b.len);
    } else {
        ct_meta_emit_locked(CT_REC_THREAD, &b);
    }
    ct_body_free(&b);
}

// Frees the slot (caller holds the stream's lock): a later thread takes it over.
CT_NO_INSTRUMENT static void free_slot(struct known_thread *t) {
    atomic_store_explicit(&t->stream, 0, memory_order_release);
}

// Once per thread: its slot goes with the name. Into the metadata stream, whatever the limit: this
// is the exit's, at most once per thread then.
CT_NO_INSTRUMENT void ct_meta_thread_final(uint32_t stream, uint64_t tid) {
    ct_meta_lock();
    struct known_thread *t = slot_of(stream);
    char name[17] = { 0 };
    if (t && ct_meta_read_thread_name(tid, name) > 0) write_name_locked(t, stream, tid, name, false);
    if (t) free_slot(t);
    ct_meta_unlock();
}

CT_NO_INSTRUMENT void ct_meta_thread_forget(uint32_t stream) {
    ct_meta_lock();
    struct known_thread *t = slot_of(stream);
    if (t) free_slot(t);
    ct_meta_unlock();
}

// Every live thread's name, written when it changed. A full registry may hold slots of threads that
// ended without telling (the raw exit system call, ct_raw_exit.h): those no longer listed in /proc
// are freed.
CT_NO_INSTRUMENT void ct_meta_poll_threads(void) {
    bool sweep = atomic_exchange_explicit(&T.full, false, memory_order_relaxed);
    bool events = limited();
    ct_meta_lock();
    uint32_t end = atomic_load_explicit(&T.end, memory_order_acquire);
    for (uint32_t i = 0; i < end; i++) {
        struct known_thread *t = &T.threads[i];
        uint32_t stream = atomic_load_explicit(&t->stream, memory_order_acquire);
        if (stream == 0 || stream == CT_SLOT_FILLING) continue;
        uint64_t tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
        char name[17] = { 0 };
        if (ct_meta_read_thread_name(tid, name) > 0) write_name_locked(t, stream, tid, name, events);
        else if (sweep && !ct_proc_task_listed(tid)) free_slot(t);
    }
    ct_meta_unlock();
}

// In a fork child: the threads were the parent's.
CT_NO_INSTRUMENT void ct_meta_forget_threads(void) {
    memset(T.threads, 0, sizeof T.threads);
    atomic_store_explicit(&T.end, 0, memory_order_relaxed);
    atomic_store_explicit(&T.full, false, memory_order_relaxed);
}
