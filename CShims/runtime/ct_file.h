// The trace file on disk: creating it without touching anything that is not ours, reserving space
// before it is used, mapping blocks, cutting the unused tail at exit.
//
// Only the drain thread calls these (ct_drain.c), with a descriptor that lives in the drain
// thread's own descriptor table: the program can neither see it nor close it, nor make its number
// point at one of its own files.
#ifndef CT_FILE_H
#define CT_FILE_H

#include "ct_format.h"
#include <sys/types.h>

struct ct_settings;

struct ct_file {
    int fd;
    dev_t dev;
    ino_t ino;
    uint64_t size;          // bytes reserved so far (the file's size)
    char path[4200];        // absolute, so that it can be opened again after a chdir
};

// Creates the trace file from the CALLTRACE_OUTPUT template: %p expanded, an existing directory
// means the default name inside it, never through a symlink at the path, never replacing a file
// (an existing name gets "-N" before its extension). Mode 0600. On failure returns false and says
// why in `why` (the drain thread cannot print: the caller warns).
bool ct_file_create(struct ct_file *f, const struct ct_settings *settings, char *why, size_t cap);
// Opens our own file again by its path (after the descriptor was lost), if it still is ours.
bool ct_file_reopen(struct ct_file *f);
// Makes [offset, offset + length) real disk space, so that stores into its mapping cannot raise
// SIGBUS, and never grows the file past RLIMIT_FSIZE (which would raise SIGXFSZ). Returns 0, or
// the CT_LOST_* reason it could not (and sets *err to the errno).
uint32_t ct_file_reserve(struct ct_file *f, uint64_t offset, uint64_t length, int *err);
// The same, its first `written` bytes written with zeros: the first write into space fallocate
// reserved costs a page fault of 0.6-1 ms on ext4 (it splits the unwritten extent), and the
// first blocks are written at once.
uint32_t ct_file_reserve_written(struct ct_file *f, uint64_t offset, uint64_t length, uint64_t written, int *err);
// Maps a reserved range shared and writable; NULL on failure.
void *ct_file_map(struct ct_file *f, uint64_t offset, uint64_t length);
// Cuts the file to `size` bytes (at exit: unused blocks at the end).
void ct_file_truncate(struct ct_file *f, uint64_t size);
void ct_file_close(struct ct_file *f);

#endif
