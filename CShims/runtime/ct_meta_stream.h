// Inside the metadata stream's files (ct_meta.c and ct_meta_*.c): the stream's lock and writer,
// and each job's part of the drain thread's poll and of a fork child's forgetting (walked by
// ct_meta_jobs.c).
#ifndef CT_META_STREAM_H
#define CT_META_STREAM_H

#include "ct_writer.h"

void ct_meta_lock(void);
void ct_meta_unlock(void);
// Appends one sized record, moving to a fresh block when it does not fit. Caller holds the lock.
void ct_meta_emit_locked(uint8_t tag, const struct ct_body *b);
void ct_meta_put_string(struct ct_body *b, const char *s);
// The program's path, read once and kept (ct_meta_modules.c).
void ct_meta_program_path(char *path, size_t size);
void ct_meta_poll_modules(void);
void ct_meta_poll_threads(void);
void ct_meta_forget_modules(void);
// The writer's part of a fork child's forgetting: no block, no sequence, a fresh lock.
void ct_meta_forget_stream(void);
void ct_meta_forget_threads(void);

#endif
