// The drain thread: the only thread that touches the trace file. It creates the file, keeps the
// ring of ready blocks filled (reserving disk space before a block is handed out), unmaps blocks
// their writers sealed, writes metadata (new modules, thread names) every 20 ms, and at exit cuts
// the unused tail off the file.
//
// It holds the file's descriptor in a descriptor table of its own (unshare(CLONE_FILES)), so the
// program cannot close it, see it in /proc/self/fd, or make its number point at one of its own
// files; fork children and exec'ed images never inherit it.
#ifndef CT_DRAIN_H
#define CT_DRAIN_H

#include "ct_format.h"

struct ct_settings;

// Starts the drain thread, which creates the trace file and maps its header and the first blocks
// (false, with a warning, when no thread can be started); ct_drain_wait_open waits for that (not
// for anything else) and returns the header, or NULL when the program must run untraced (a warning
// was printed). The opener does its own part of the open in between ("Start-up", docs/design.md).
//
// `watch` (may be NULL) is asked at each 20 ms poll whether the program's threads are still there
// (the raw exit system call: ct_raw_exit.h); it is the opener's, so the drain thread calls nothing
// above it by name. On MAIN_GONE the drain thread ends (without cutting the file when other
// threads record); on GONE it finishes the file, then calls `end_process`, which does not return.
// `finish` is the rest of a close that the drain thread does for an exiting thread that may not
// take a lock (ct_drain_finish).
enum ct_program_state {
    CT_PROGRAM_RUNS,        // the main thread runs (or this cannot be told: no /proc)
    CT_PROGRAM_MAIN_GONE,   // the main thread ended with the raw exit system call; other threads run on
    CT_PROGRAM_GONE,        // no program thread is left
};
struct ct_drain_watch {
    enum ct_program_state (*poll)(int *status);
    void (*end_process)(int status);
    void (*finish)(void);
};
bool ct_drain_start(const struct ct_settings *settings, const struct ct_drain_watch *watch);
struct ct_file_header *ct_drain_wait_open(void);
// Ends the drain thread: a last module scan, and with `cut`, the ring's blocks taken back and the
// file cut after the last block in use (no thread may record after that). Waits a bounded time.
void ct_drain_stop(bool cut);
// The same with `cut`, at the process's exit: returns once the file is finished, without waiting
// for the thread to leave the process.
void ct_drain_stop_at_exit(void);
// The same, at an exit that may come from a signal handler (_exit): async-signal-safe and takes
// no lock. The drain thread does the stop's work and then the watch's `finish`; the caller waits
// for it at most `wait_ns` (a drain thread blocked on a lock the caller holds must not hold the
// process up). True when it finished in time.
bool ct_drain_finish(uint64_t wait_ns);
// The same from a thread that may make no system call and may not read the clock (ct_restrict.h):
// the request is seen at the drain thread's next pass, not woken, and waited for by spinning, at
// most `spins` pause instructions.
bool ct_drain_finish_unwoken(uint64_t spins);
// The stop's work alone, at a crash (a fatal signal's handler): the features' last writes (the
// marks still queued), the last module scan and the unused tail cut off, without the close, so
// the trace still reads as not closed. Async-signal-safe, as ct_drain_finish; waits as long.
bool ct_drain_stop_at_crash(uint64_t wait_ns);
// Around a call that needs a single-threaded process (unshare(CLONE_NEWUSER), setns): the thread
// ends, then starts again and opens the file again by its path. Blocks already in the ring stay
// usable meanwhile.
void ct_drain_pause(void);
void ct_drain_resume(void);
bool ct_drain_is_current_thread(void);
// In a forked child: the parent's thread, file and mappings are not ours. Async-signal-safe.
void ct_drain_forget(void);

#endif
