// A daemon's start-up (threshold 0): it closes every descriptor it inherited, opens its own
// database and log (which land on the lowest free numbers, where a tracer's descriptor used to
// be), and writes to them while instrumented calls run. argv[1]:
//   close_range  closes with close_range(3, ~0U, 0)
//   loop         closes 3 ... 65535 one by one
//   dup2         keeps its descriptors but dup2s its log onto every number from 3 to 63
//   fds          prints where each open descriptor leads (readlink of /proc/self/fd/N) and ends
// argv[2] is the directory for db and log. The files' expected contents: db is 64 KiB of 'D' then
// "end\n"; log is LOG_LINES lines "log line N\n". Prints "daemon: done" at the end.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#define LOG_LINES 2000

__attribute__((noinline)) int leaf(int x) {
    __asm__ volatile("");
    return x * 3 + 1;
}

// Enough records at threshold 0 to fill several trace blocks.
__attribute__((noinline)) long work(int n) {
    long sum = 0;
    for (int i = 0; i < n; i++) sum += leaf(i);
    return sum;
}

__attribute__((noinline)) static void write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n <= 0) { perror("write"); exit(3); }
        data += n;
        size -= (size_t)n;
    }
}

__attribute__((noinline)) static void list_descriptors(void) {
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) { perror("opendir"); exit(3); }
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[300], target[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0) continue;
        target[n] = 0;
        printf("fd %s -> %s\n", e->d_name, target);
    }
    closedir(dir);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "fds";
    long sum = work(1000);
    if (strcmp(mode, "fds") == 0) {
        list_descriptors();
        printf("daemon: done %ld\n", sum);
        return 0;
    }
    if (argc < 3) return 2;
    if (strcmp(mode, "close_range") == 0) {
        if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) { perror("close_range"); return 3; }
    } else if (strcmp(mode, "loop") == 0) {
        for (int fd = 3; fd < 65536; fd++) close(fd);
    }
    char db_path[4096], log_path[4096];
    snprintf(db_path, sizeof db_path, "%s/db", argv[2]);
    snprintf(log_path, sizeof log_path, "%s/log", argv[2]);
    int db = open(db_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (db < 0 || log < 0) { perror("open"); return 3; }
    if (strcmp(mode, "dup2") == 0) {
        for (int fd = 3; fd < 64; fd++) if (fd != db && fd != log) dup2(log, fd);
    }
    static char page[65536];
    memset(page, 'D', sizeof page);
    write_all(db, page, sizeof page);
    for (int i = 0; i < LOG_LINES; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "log line %d\n", i);
        write_all(log, line, (size_t)n);
        if (i % 100 == 0) sum += work(5000);
    }
    write_all(db, "end\n", 4);
    sum += work(20000);
    printf("daemon: done %ld (db %d, log %d)\n", sum, db, log);
    return 0;
}
