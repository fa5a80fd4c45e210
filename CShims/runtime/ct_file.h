// The trace file: a header page and fixed-size blocks, all written through MAP_SHARED mappings, so
// that whatever a thread has committed is in the page cache at once and survives SIGKILL or a crash.
//
// Recording threads never make syscalls for space: they take ready-mapped blocks from a small
// lock-free pool that the drain thread keeps full (see ct_file.c). A thread that finds the pool empty
// drops its record and counts it in the header.
#ifndef CT_FILE_H
#define CT_FILE_H

#include "ct_format.h"

struct ct_settings;

// Creates the trace file (O_EXCL | O_NOFOLLOW, mode 0600) and maps its header. On failure warns once
// and returns false; the program then runs untraced.
bool ct_file_open(const struct ct_settings *settings);
bool ct_file_is_open(void);
struct ct_file_header *ct_file_header(void);

// Lock-free, async-signal-safe: a mapped, zeroed block from the pool, or NULL when the pool is empty.
struct ct_block_header *ct_file_take_block(void);

// Not for the hot path: allocates and maps a block at once (may make syscalls). NULL on failure.
struct ct_block_header *ct_file_new_block(void);

// Starts the drain thread that refills the pool, unmaps sealed blocks and refreshes calibration.
void ct_file_start_drain(void);

// Stops the drain thread and waits for it (at exit, before the last writes).
void ct_file_stop_drain(void);

// At normal exit: final calibration, closed flag, and the unused tail of the file cut off.
void ct_file_close(uint64_t end_tick);

// In a forked child: forget the parent's file and mappings without touching them.
void ct_file_forget_after_fork(void);

#endif
