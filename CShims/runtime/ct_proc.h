// Reading /proc: the runtime's one reader of the kernel's small text files (the process's stat,
// command line, maps and program path, a thread's comm, schedstat, syscall and status, whether it
// is still listed). Never from a hook.
#ifndef CT_PROC_H
#define CT_PROC_H

#include "ct_base.h"

// The file at `path` (at most size - 1 bytes, NUL-terminated) into `buf`, with one open and one
// read (a /proc file is generated whole by the read). Returns the length, or -1.
long ct_proc_read(const char *path, char *buf, size_t size);
// The same, for /proc/self/task/TID/`file`.
long ct_proc_read_task(uint64_t tid, const char *file, char *buf, size_t size);
// The whole file, however long (malloc'ed, NUL-terminated; *len without the NUL); NULL on failure.
char *ct_proc_read_all(const char *path, size_t *len);
// One line of /proc/self/maps: its range, protection ("rwxp"), offset, inode and path (the rest
// of the line, "" for anonymous memory). False for a line that is not one.
struct ct_proc_map_line {
    unsigned long start, end, offset, inode;
    char perms[5];
    const char *path;   // into the line, up to (not including) its newline
    size_t path_len;
};
bool ct_proc_parse_map_line(const char *line, struct ct_proc_map_line *out);
// The path of the file mapped at `addr`, from /proc/self/maps (always absolute): for modules the
// loader knows by a relative path ("./plugin.so"), which would mean nothing from another directory
// (the drain thread's is a copy of the program's from when the trace opened). False when none is.
bool ct_proc_mapped_path(uint64_t addr, char *out, size_t cap);
// When this process started, from /proc/self/stat, as CLOCK_MONOTONIC ns (0 when unknown).
uint64_t ct_proc_process_start_ns(void);
// The process's state and numeric fields 3..`last` (at most 52) of /proc/self/stat, the thread
// group leader's (man 5 proc: 20 num_threads, 22 starttime, 52 exit_code); `fields` has room for
// last + 1. False when it cannot be read or has fewer fields.
bool ct_proc_stat(char *state, long long *fields, int last);
// The path of the running program (/proc/self/exe's target), "" when it cannot be read (as after
// the main thread ended while other threads run on). Returns the length.
size_t ct_proc_program_path(char *buf, size_t size);
// /proc/self/`file` (tid 0) or /proc/self/task/TID/`file`, opened to be read again and again with
// ct_proc_read_schedstat or ct_proc_pread; -1 on failure.
int ct_proc_open_task(uint64_t tid, const char *file);
// The time on a CPU and the run delay (ns runnable, waiting for one) from a schedstat descriptor,
// read from its start.
bool ct_proc_read_schedstat(int fd, uint64_t *cpu, uint64_t *delay);
// A descriptor's whole file from its start into `buf` (NUL-terminated); the length, or -1.
long ct_proc_pread(int fd, char *buf, size_t size);
// What thread `tid`'s descriptor `fd` refers to (/proc/self/task/TID/fd/FD's link: a path,
// "pipe:[N]", "socket:[N]"...), NUL-terminated; the length, or -1.
long ct_proc_fd_target(uint64_t tid, long fd, char *buf, size_t size);
// Whether thread `tid` of this process is still listed (/proc/self/task/TID).
bool ct_proc_task_listed(uint64_t tid);

#endif
