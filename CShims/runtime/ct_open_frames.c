#include "ct_open_frames.h"
#include "ct_thread_state.h"

#include <pthread.h>
#include <stdatomic.h>

// Recording threads at once; beyond that, ct_open_frames_visit answers "cannot tell".
#define CT_OPEN_FRAMES_MAX 1024u

static struct {
    pthread_mutex_t lock;
    uint32_t n;
    uint32_t unlisted;          // recording threads the list had no room for
    struct ct_thread *threads[CT_OPEN_FRAMES_MAX];
} L = { .lock = PTHREAD_MUTEX_INITIALIZER };

CT_NO_INSTRUMENT void ct_open_frames_add(struct ct_thread *t) {
    pthread_mutex_lock(&L.lock);
    uint32_t i = 0;
    while (i < L.n && L.threads[i] != t) i++; // a fork child's thread is listed already
    if (i < L.n) { }
    else if (L.n < CT_OPEN_FRAMES_MAX) L.threads[L.n++] = t;
    else L.unlisted++;
    pthread_mutex_unlock(&L.lock);
}

CT_NO_INSTRUMENT void ct_open_frames_remove(struct ct_thread *t) {
    pthread_mutex_lock(&L.lock);
    uint32_t i = 0;
    while (i < L.n && L.threads[i] != t) i++;
    if (i < L.n) L.threads[i] = L.threads[--L.n];
    else if (L.unlisted > 0) L.unlisted--;
    pthread_mutex_unlock(&L.lock);
}

CT_NO_INSTRUMENT void ct_open_frames_after_fork(struct ct_thread *self) {
    pthread_mutex_init(&L.lock, NULL); // the drain thread may have held it: it is not in the child
    L.n = 0;
    L.unlisted = 0;
    if (self) L.threads[L.n++] = self;
}

CT_NO_INSTRUMENT bool ct_open_frames_visit(void (*visit)(uintptr_t fn, void *context), void *context) {
    pthread_mutex_lock(&L.lock);
    bool complete = L.unlisted == 0;
    for (uint32_t i = 0; i < L.n; i++) {
        const struct ct_thread *t = L.threads[i];
        // A frame below the depth read here is written before that depth was published and is
        // not rewritten while its call is open.
        uint64_t depth = *(volatile const uint64_t *)&t->depth;
        atomic_thread_fence(memory_order_acquire);
        if (depth > t->cap) depth = t->cap;
        for (uint64_t d = 0; d < depth; d++) visit(((volatile const struct ct_frame *)t->frames)[d].fn, context);
    }
    pthread_mutex_unlock(&L.lock);
    return complete;
}

CT_NO_INSTRUMENT uint32_t ct_open_frames_oldest_starts(struct ct_open_frames_oldest *out, uint32_t cap) {
    uint32_t n = 0;
    pthread_mutex_lock(&L.lock);
    for (uint32_t i = 0; i < L.n && n < cap; i++) {
        const struct ct_thread *t = L.threads[i];
        uint64_t depth = *(volatile const uint64_t *)&t->depth;
        atomic_thread_fence(memory_order_acquire);
        out[n].tid = t->stream.tid;
        out[n].start = depth > 0 && t->cap > 0 ? ((volatile const struct ct_frame *)t->frames)[0].start : 0;
        n++;
    }
    pthread_mutex_unlock(&L.lock);
    return n;
}

CT_NO_INSTRUMENT void ct_open_frames_take_all(void (*visit)(struct ct_thread *t, void *context), void *context) {
    pthread_mutex_lock(&L.lock);
    for (uint32_t i = 0; i < L.n; i++) visit(L.threads[i], context);
    L.n = 0;
    pthread_mutex_unlock(&L.lock);
}
