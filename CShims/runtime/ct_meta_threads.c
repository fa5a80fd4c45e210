// The recording threads: a lock-free registry (also the run-delay sampler's list) and their names,
// as THREAD records in the metadata stream, from /proc (written when they change, and at the end).
#include "ct_meta.h"
#include "ct_meta_stream.h"
#include "ct_proc.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CT_MAX_THREADS 4096

struct known_thread {
    _Atomic uint32_t stream;      // 0: free slot
    uint64_t tid;
    char name[16];
    bool final;
};

// The registry is lock-free; names are written under the stream's lock (ct_meta_lock).
static struct {
    struct known_thread threads[CT_MAX_THREADS];
    _Atomic uint32_t nthreads;
} T;

CT_NO_INSTRUMENT void ct_meta_register_thread(uint32_t stream, uint64_t tid) {
    uint32_t i = atomic_fetch_add_explicit(&T.nthreads, 1, memory_order_relaxed);
    if (i >= CT_MAX_THREADS) return; // its name stays unknown; the tid is in its blocks
    T.threads[i].tid = tid;
    atomic_store_explicit(&T.threads[i].stream, stream, memory_order_release);
}

CT_NO_INSTRUMENT uint32_t ct_meta_thread_count(void) {
    uint32_t n = atomic_load_explicit(&T.nthreads, memory_order_acquire);
    return n < CT_MAX_THREADS ? n : CT_MAX_THREADS;
}

CT_NO_INSTRUMENT bool ct_meta_thread_at(uint32_t i, uint32_t *stream, uint64_t *tid) {
    if (i >= CT_MAX_THREADS) return false;
    // The stream is stored last, with release (ct_meta_register_thread): once it is set, so is the tid.
    *stream = atomic_load_explicit(&T.threads[i].stream, memory_order_acquire);
    *tid = T.threads[i].tid;
    return *stream != 0;
}

// The calling thread's own name with one system call (a thread's end, the main thread's at exit);
// another's from /proc (open, read, close: 0.015 ms of a hello world's exit).
CT_NO_INSTRUMENT static long read_name(uint64_t tid, char name[17]) {
    if ((uint64_t)syscall(SYS_gettid) == tid && syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) == 0)
        return (long)strnlen(name, 16);
    return ct_proc_read_task(tid, "comm", name, 17);
}

CT_NO_INSTRUMENT static void write_thread_locked(struct known_thread *t) {
    char name[17] = { 0 };
    long n = read_name(t->tid, name);
    if (n <= 0) return;
    if (name[n - 1] == '\n') n--;
    name[n] = '\0';
    if (strncmp(name, t->name, sizeof t->name) == 0) return;
    memcpy(t->name, name, sizeof t->name);
    struct ct_body b = { 0 };
    ct_body_varint(&b, atomic_load_explicit(&t->stream, memory_order_relaxed));
    ct_body_varint(&b, t->tid);
    ct_meta_put_string(&b, name);
    ct_meta_emit_locked(CT_REC_THREAD, &b);
    ct_body_free(&b);
}

CT_NO_INSTRUMENT void ct_meta_thread_final(uint32_t stream, uint64_t tid) {
    ct_meta_lock();
    uint32_t n = atomic_load_explicit(&T.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < CT_MAX_THREADS; i++) {
        struct known_thread *t = &T.threads[i];
        if (atomic_load_explicit(&t->stream, memory_order_acquire) == stream && t->tid == tid && !t->final) {
            write_thread_locked(t);
            t->final = true;
        }
    }
    ct_meta_unlock();
}

CT_NO_INSTRUMENT void ct_meta_poll_threads(void) {
    ct_meta_lock();
    uint32_t n = atomic_load_explicit(&T.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < CT_MAX_THREADS; i++) {
        struct known_thread *t = &T.threads[i];
        if (atomic_load_explicit(&t->stream, memory_order_acquire) && !t->final) write_thread_locked(t);
    }
    ct_meta_unlock();
}

// In a fork child: the threads were the parent's.
CT_NO_INSTRUMENT void ct_meta_forget_threads(void) {
    memset(T.threads, 0, sizeof T.threads);
    atomic_store_explicit(&T.nthreads, 0, memory_order_relaxed);
}
