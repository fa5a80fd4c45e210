// The metadata stream's writer (stream 0): its lock, its block, and the records written into it.
// What goes in is each job's own file: the process (ct_meta_process.c), the modules
// (ct_meta_modules.c), the threads' names (ct_meta_threads.c), and records built elsewhere
// (MUTED, FILTER; and the program's events, unless a flight recorder gives them a stream of their
// own: ct_event_stream.c).
#include "ct_meta.h"
#include "ct_meta_stream.h"
#include "ct_own_stream.h"

#include <pthread.h>
#include <string.h>

static struct {
    pthread_mutex_t lock;
    struct ct_own_stream out;
} M = { .lock = PTHREAD_MUTEX_INITIALIZER };

CT_NO_INSTRUMENT void ct_meta_lock(void) { pthread_mutex_lock(&M.lock); }
CT_NO_INSTRUMENT void ct_meta_unlock(void) { pthread_mutex_unlock(&M.lock); }

// Appends one sized record to the metadata stream (ct_own_stream.c). A record larger than a
// block's payload is not written (callers keep theirs smaller). Caller holds M.lock.
CT_NO_INSTRUMENT void ct_meta_emit_locked(uint8_t tag, const struct ct_body *b) {
    if (!b->failed) ct_own_stream_put(&M.out, tag, b->bytes, b->len);
}

CT_NO_INSTRUMENT static void emit(uint8_t tag, struct ct_body *b) {
    pthread_mutex_lock(&M.lock);
    ct_meta_emit_locked(tag, b);
    pthread_mutex_unlock(&M.lock);
    ct_body_free(b);
}

CT_NO_INSTRUMENT void ct_meta_write(uint8_t tag, struct ct_body *b) { emit(tag, b); }

CT_NO_INSTRUMENT void ct_meta_start(void) {
    pthread_mutex_lock(&M.lock);
    ct_own_stream_start(&M.out);
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT size_t ct_meta_room(void) {
    pthread_mutex_lock(&M.lock);
    size_t room = M.out.cursor.block ? ct_cursor_room(&M.out.cursor) : 0;
    pthread_mutex_unlock(&M.lock);
    return room;
}

CT_NO_INSTRUMENT void ct_meta_put_string(struct ct_body *b, const char *s) { ct_body_bytes(b, s, strlen(s)); }

CT_NO_INSTRUMENT void ct_meta_write_record(uint8_t tag, const uint8_t *body, size_t len) {
    struct ct_body b = { .bytes = (uint8_t *)body, .len = len, .cap = len };
    pthread_mutex_lock(&M.lock);
    ct_meta_emit_locked(tag, &b);
    pthread_mutex_unlock(&M.lock);
}

CT_NO_INSTRUMENT void ct_meta_close(void) {
    pthread_mutex_lock(&M.lock);
    ct_own_stream_seal(&M.out);
    pthread_mutex_unlock(&M.lock);
}

// Fork: the prepare handler takes the lock (never held across a loader call, so this waits for a
// short section only), so that the child gets a consistent copy of the module list.
CT_NO_INSTRUMENT void ct_meta_before_fork(void) { pthread_mutex_lock(&M.lock); }
CT_NO_INSTRUMENT void ct_meta_after_fork_in_parent(void) { pthread_mutex_unlock(&M.lock); }

CT_NO_INSTRUMENT void ct_meta_forget_stream(void) {
    ct_own_stream_forget(&M.out);
    pthread_mutex_init(&M.lock, NULL);
}
