// Metadata stream (stream 0): the process, its loaded modules, its threads' names and the functions
// muted (ct_mute.c). Written by
// the drain thread, dlclose, thread exit and process exit, under one mutex; never from a hook.
#ifndef CT_META_H
#define CT_META_H

#include "ct_base.h"

// The stream's first block, taken from the ring by the drain thread as it creates the file, so that
// its first write (a page fault of up to a millisecond on ext4) is not the opening thread's.
void ct_meta_start(void);
void ct_meta_write_process(void);
// Writes a MODULE record for each module not written yet and MODULE_GONE for those unloaded.
void ct_meta_scan_modules(void);
// The same two in halves, for the opening thread: what they read (the program's path and command
// line, the loader's list with build-ids) is gathered while the drain thread creates the file, and
// written once the metadata stream exists ("Start-up", docs/design.md). A write frees what its
// gather returned, and writes nothing when the trace did not open; NULL (nothing could be
// gathered, or the loader is not to be asked) makes it read everything then.
struct ct_process_facts;
struct ct_module_scan;
struct ct_process_facts *ct_meta_process_gather(void);
void ct_meta_process_write(struct ct_process_facts *facts);
struct ct_module_scan *ct_meta_modules_gather(void);
void ct_meta_modules_write(struct ct_module_scan *scan);
// At most what those records take in the stream, and the room left in its block: at a threshold the
// opener writes them before the ring has a block to spare ("Start-up", docs/design.md).
size_t ct_meta_process_bytes(const struct ct_process_facts *facts);
size_t ct_meta_modules_bytes(const struct ct_module_scan *scan);
size_t ct_meta_room(void);
// Remembers a recording thread, so that its name is written when it is known, in a slot of the
// registry that a thread which ended left free. Lock-free. More threads at once than this are not
// remembered (nor named while they run, nor sampled).
#define CT_META_MAX_THREADS 4096u
void ct_meta_register_thread(uint32_t stream, uint64_t tid);
// Thread `tid`'s name now (the calling thread's with one prctl, another's from /proc), without
// its newline; its length, or <= 0 when it cannot be read.
long ct_meta_read_thread_name(uint64_t tid, char name[17]);
// Is `name` (`len` bytes) the name last written for the live thread of `stream`? Lock-free: the
// events stream's carry keeps a THREAD record through a reuse only then (ct_limit.c hands it this).
bool ct_meta_thread_is_current(uint32_t stream, const char *name, size_t len);
// The live recording threads (lock-free), for the run-delay sampler: every slot taken so far is
// below ct_meta_thread_slots(); slot i's stream and kernel id, false while it is free or being
// filled. A slot taken again holds another stream: stream ids are never reused in a trace.
uint32_t ct_meta_thread_slots(void);
bool ct_meta_thread_at(uint32_t i, uint32_t *stream, uint64_t *tid);
// Appends a sized record built elsewhere (an event, through ct_event_stream.c) to the metadata stream.
// Never from a hook.
void ct_meta_write_record(uint8_t tag, const uint8_t *body, size_t len);
// Writes the thread's name now (at thread exit, or at process exit for the main thread), once,
// and frees its slot.
void ct_meta_thread_final(uint32_t stream, uint64_t tid);
// Frees the thread's slot without a name: in a flight recorder's trace a thread that ends writes
// its name into its own stream, or none (ct_stream_name_at_end).
void ct_meta_thread_forget(uint32_t stream);
// The loader's list again, unless it has not changed since the last scan written (its load and
// unload counts): the drain thread's last look, at exit.
void ct_meta_scan_if_changed(void);
// From the drain thread every few ms: new modules, changed thread names (in a flight recorder's
// trace, into the events stream: ct_meta_threads.c).
void ct_meta_poll(void);
// Writes one record of another kind (a MUTED record) with body `b`, and frees the body.
struct ct_body;
void ct_meta_write(uint8_t tag, struct ct_body *b);
// Seals the metadata block (at exit).
void ct_meta_close(void);
// Fork handlers: the parent holds the lock across fork(); the child forgets the parent's block
// and threads (async-signal-safe) and keeps the module list.
void ct_meta_before_fork(void);
void ct_meta_after_fork_in_parent(void);
void ct_meta_forget(void);
// The program's own dlopen or dlclose returned: the loader's locks work in this process.
void ct_meta_loader_works(void);
// May the loader be asked (dl_iterate_phdr)? Not in a fork child until it showed that its locks work.
bool ct_meta_loader_trusted(void);

#endif
