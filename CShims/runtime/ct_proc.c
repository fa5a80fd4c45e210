#include "ct_proc.h"
#include "ct_clock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

CT_NO_INSTRUMENT long ct_proc_read(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = '\0';
    return (long)n;
}

CT_NO_INSTRUMENT long ct_proc_read_task(uint64_t tid, const char *file, char *buf, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%llu/%s", (unsigned long long)tid, file);
    return ct_proc_read(path, buf, size);
}

CT_NO_INSTRUMENT char *ct_proc_read_all(const char *path, size_t *len_out) {
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *p = realloc(buf, cap = cap ? cap * 2 : 8192);
            if (!p) break;
            buf = p;
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(fd);
    if (buf) buf[len] = '\0';
    *len_out = len;
    return buf;
}

CT_NO_INSTRUMENT bool ct_proc_parse_map_line(const char *line, struct ct_proc_map_line *m) {
    char dev[16];
    int path_at = 0;
    memset(m->perms, 0, sizeof m->perms);
    if (sscanf(line, "%lx-%lx %4s %lx %15s %lu %n", &m->start, &m->end, m->perms, &m->offset, dev, &m->inode,
               &path_at) < 6 || path_at == 0)
        return false;
    m->path = line + path_at;
    m->path_len = strcspn(m->path, "\n");
    return true;
}

CT_NO_INSTRUMENT bool ct_proc_stat(char *state, long long *fields, int last) {
    char buf[1024];
    if (last < 3 || last > 52 || ct_proc_read("/proc/self/stat", buf, sizeof buf) <= 0) return false;
    char *p = strrchr(buf, ')'); // the command name may hold spaces and parentheses
    if (!p || p[1] != ' ') return false;
    *state = p[2];
    int field = 3;
    // p moves to the space before each field in turn: field 3 (state) after ")".
    for (p = p + 1; p && field <= last; p = strchr(p + 1, ' '), field++) fields[field] = strtoll(p + 1, NULL, 10);
    return field > last;
}

// Field 22 of /proc/self/stat (clock ticks since boot), as CLOCK_MONOTONIC ns, so that the time
// the program spent before the runtime (the dynamic loader, constructors) shows. In a fork child,
// the fork.
CT_NO_INSTRUMENT uint64_t ct_proc_process_start_ns(void) {
    char state;
    long long fields[23];
    if (!ct_proc_stat(&state, fields, 22) || fields[22] <= 0) return 0;
    unsigned long long start = (unsigned long long)fields[22];
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) return 0;
    // CLOCK_BOOTTIME runs ahead of CLOCK_MONOTONIC by the time the machine was suspended.
    struct timespec mono, boot;
    ct_clock_gettime(CLOCK_MONOTONIC, &mono);
    ct_clock_gettime(CLOCK_BOOTTIME, &boot);
    int64_t suspended = ((int64_t)boot.tv_sec - (int64_t)mono.tv_sec) * 1000000000 + (boot.tv_nsec - mono.tv_nsec);
    if (suspended < 0) suspended = 0;
    uint64_t start_boot_ns = start * (1000000000u / (uint64_t)hz);
    if (start_boot_ns < (uint64_t)suspended) return 0;
    return start_boot_ns - (uint64_t)suspended;
}

CT_NO_INSTRUMENT size_t ct_proc_program_path(char *buf, size_t size) {
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

CT_NO_INSTRUMENT int ct_proc_open_task(uint64_t tid, const char *file) {
    char path[64];
    if (tid) snprintf(path, sizeof path, "/proc/self/task/%llu/%s", (unsigned long long)tid, file);
    else snprintf(path, sizeof path, "/proc/self/%s", file);
    return open(path, O_RDONLY | O_CLOEXEC);
}

// schedstat: "on-CPU ns, run delay ns, timeslices".
CT_NO_INSTRUMENT bool ct_proc_read_schedstat(int fd, uint64_t *cpu, uint64_t *delay) {
    char buf[96];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char *p = buf;
    uint64_t v[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        const char *digits = p;
        for (; *p >= '0' && *p <= '9'; p++) v[i] = v[i] * 10 + (uint64_t)(*p - '0');
        if (p == digits) return false;
        if (i == 0 && *p++ != ' ') return false;
    }
    *cpu = v[0];
    *delay = v[1];
    return true;
}

CT_NO_INSTRUMENT long ct_proc_pread(int fd, char *buf, size_t size) {
    if (size == 0) return -1;
    ssize_t n = pread(fd, buf, size - 1, 0);
    if (n < 0) return -1;
    buf[n] = '\0';
    return (long)n;
}

CT_NO_INSTRUMENT long ct_proc_fd_target(uint64_t tid, long fd, char *buf, size_t size) {
    char path[80];
    snprintf(path, sizeof path, "/proc/self/task/%llu/fd/%ld", (unsigned long long)tid, fd);
    if (size == 0) return -1;
    ssize_t n = readlink(path, buf, size - 1);
    if (n < 0) return -1;
    buf[n] = '\0';
    return (long)n;
}

CT_NO_INSTRUMENT bool ct_proc_task_listed(uint64_t tid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%llu", (unsigned long long)tid);
    struct stat st;
    return stat(path, &st) == 0;
}

CT_NO_INSTRUMENT bool ct_proc_mapped_path(uint64_t addr, char *out, size_t cap) {
    size_t len = 0;
    char *maps = ct_proc_read_all("/proc/self/maps", &len);
    bool found = false;
    for (char *line = maps; line && *line && !found;) {
        char *next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        struct ct_proc_map_line l;
        if (ct_proc_parse_map_line(line, &l) && addr >= l.start && addr < l.end && l.path[0] == '/') {
            snprintf(out, cap, "%.*s", (int)l.path_len, l.path);
            found = true;
        }
        line = next;
    }
    free(maps);
    return found;
}
