#include "ct_file.h"
#include "ct_settings.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

// "%p" -> pid. Anything else is copied as it is.
CT_NO_INSTRUMENT static void expand_path(const char *tmpl, char *out, size_t cap) {
    size_t n = 0;
    for (const char *p = tmpl; *p && n + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(out + n, cap - n, "%d", (int)getpid());
            if (n >= cap) n = cap - 1;
            p++;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

// The path taken, with "-N" before the extension.
CT_NO_INSTRUMENT static void alternative_path(const char *path, int n, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1)) dot = path + strlen(path);
    snprintf(out, cap, "%.*s-%d%s", (int)(dot - path), path, n, dot);
}

// O_EXCL with O_NOFOLLOW: a symlink at the path, even a dangling one or one to a directory, is
// an existing name, never followed.
CT_NO_INSTRUMENT static int create_exclusive(const char *path) {
    return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
}

CT_NO_INSTRUMENT bool ct_file_create(struct ct_file *f, const struct ct_settings *settings, char *why, size_t cap) {
    char path[4096], alt[4200];
    expand_path(settings->output, path, sizeof path);
    struct stat st;
    // lstat: a symlink to a directory is not a directory here.
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "%scalltrace-%d.trace", n && path[n - 1] == '/' ? "" : "/", (int)getpid());
    }
    snprintf(alt, sizeof alt, "%s", path);
    int fd = create_exclusive(alt);
    for (int n = 1; fd < 0 && errno == EEXIST && n < 1000; n++) {
        alternative_path(path, n, alt, sizeof alt);
        fd = create_exclusive(alt);
    }
    if (fd < 0) {
        snprintf(why, cap, "cannot create the trace file %s: %s", path, strerror(errno));
        return false;
    }
    if (fstat(fd, &st) != 0) st = (struct stat){ 0 };
    f->fd = fd;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->size = 0;
    f->path[0] = '\0';
    if (alt[0] != '/') {
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd)) snprintf(f->path, sizeof f->path, "%s/%s", cwd, alt);
    } else {
        snprintf(f->path, sizeof f->path, "%s", alt);
    }
    return true;
}

CT_NO_INSTRUMENT bool ct_file_reopen(struct ct_file *f) {
    if (!f->path[0]) return false;
    int fd = open(f->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->ino) { // not ours any more
        close(fd);
        return false;
    }
    f->fd = fd;
    return true;
}

CT_NO_INSTRUMENT static uint32_t reason_for(int err) {
    if (err == EFBIG) return CT_LOST_FILE_LIMIT;
    return CT_LOST_NO_SPACE;
}

// Where fallocate is not supported, writing zeros allocates the blocks just as well. Up to 1 MiB
// per system call (one 16 KiB page of zeros, repeated).
CT_NO_INSTRUMENT static int write_zeros(int fd, uint64_t offset, uint64_t length) {
    static const uint8_t zeros[16384];
    struct iovec iov[64];
    for (int i = 0; i < 64; i++) iov[i] = (struct iovec){ (void *)zeros, sizeof zeros };
    while (length > 0) {
        int n = 0;
        uint64_t chunk = 0;
        for (; n < 64 && chunk < length; n++) {
            uint64_t part = length - chunk < sizeof zeros ? length - chunk : sizeof zeros;
            iov[n].iov_len = (size_t)part;
            chunk += part;
        }
        ssize_t w = pwritev(fd, iov, n, (off_t)offset);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : ENOSPC;
        offset += (uint64_t)w;
        length -= (uint64_t)w;
    }
    return 0;
}

// The room a trace leaves the program on its file system: 5 % of it, at most 1 GiB. Without a
// limit (CALLTRACE_LIMIT) a trace at threshold 0 grows by gigabytes a minute; filling the disk
// would make the program's own writes fail (ENOSPC), so the trace stops growing first and drops
// records, as on a full file system (design.md, "Getting records to disk").
#define CT_FREE_KEEP_SHARE 20u
#define CT_FREE_KEEP_MAX (1ull << 30)

CT_NO_INSTRUMENT static bool leaves_room(int fd, uint64_t length) {
    struct statvfs sv;
    if (fstatvfs(fd, &sv) != 0 || sv.f_frsize == 0) return true;   // cannot tell: the kernel will
    uint64_t total = (uint64_t)sv.f_blocks * sv.f_frsize, avail = (uint64_t)sv.f_bavail * sv.f_frsize;
    uint64_t keep = total / CT_FREE_KEEP_SHARE < CT_FREE_KEEP_MAX ? total / CT_FREE_KEEP_SHARE : CT_FREE_KEEP_MAX;
    return avail >= length && avail - length >= keep;
}

// [offset, offset + written) is written with zeros, the rest fallocated (or written where
// fallocate is not supported).
CT_NO_INSTRUMENT static uint32_t reserve(struct ct_file *f, uint64_t offset, uint64_t length, uint64_t written,
                                         int *err) {
    *err = 0;
    // The kernel sends SIGXFSZ to a process that grows a file past its limit: stay below it.
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        offset + length > (uint64_t)limit.rlim_cur) {
        *err = EFBIG;
        return CT_LOST_FILE_LIMIT;
    }
    if (written > length) written = length;
    if (!leaves_room(f->fd, length)) {
        *err = ENOSPC;
        return CT_LOST_NO_SPACE;
    }
    int e = written ? write_zeros(f->fd, offset, written) : 0;
    if (e != 0) {
        *err = e;
        return reason_for(e);
    }
    int r = 0;
    errno = 0;
    while (written < length && (r = fallocate(f->fd, 0, (off_t)(offset + written), (off_t)(length - written))) != 0 &&
           errno == EINTR) { }
    if (r != 0) {
        e = errno;
        if (e != EOPNOTSUPP && e != ENOSYS) {
            *err = e;
            return reason_for(e);
        }
        e = write_zeros(f->fd, offset + written, length - written);
        if (e != 0) {
            *err = e;
            return reason_for(e);
        }
    }
    if (offset + length > f->size) f->size = offset + length;
    return 0;
}

CT_NO_INSTRUMENT uint32_t ct_file_reserve(struct ct_file *f, uint64_t offset, uint64_t length, int *err) {
    return reserve(f, offset, length, 0, err);
}

CT_NO_INSTRUMENT uint32_t ct_file_reserve_written(struct ct_file *f, uint64_t offset, uint64_t length,
                                                  uint64_t written, int *err) {
    return reserve(f, offset, length, written, err);
}

CT_NO_INSTRUMENT void *ct_file_map(struct ct_file *f, uint64_t offset, uint64_t length) {
    void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)offset);
    return p == MAP_FAILED ? NULL : p;
}

CT_NO_INSTRUMENT void ct_file_truncate(struct ct_file *f, uint64_t size) {
    if (size < f->size && ftruncate(f->fd, (off_t)size) == 0) f->size = size;
}

CT_NO_INSTRUMENT void ct_file_close(struct ct_file *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}
