// The PROCESS record: pid, parent, the program's path and its command line.
#include "ct_meta.h"
#include "ct_meta_stream.h"
#include "ct_header.h"
#include "ct_proc.h"
#include "ct_ring.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ct_process_facts {
    char exe[4096];
    char *args;     // /proc/self/cmdline: NUL-terminated arguments
    size_t len;
};

CT_NO_INSTRUMENT struct ct_process_facts *ct_meta_process_gather(void) {
    struct ct_process_facts *f = malloc(sizeof *f);
    if (!f) return NULL;
    ct_meta_program_path(f->exe, sizeof f->exe);
    // The command line, from /proc (argv itself is not ours to read before main).
    f->len = 0;
    f->args = ct_proc_read_all("/proc/self/cmdline", &f->len);
    if (!f->args) f->len = 0;
    return f;
}

// At most what the PROCESS record of `f` takes (it is cut to one block); NULL: read at write time.
CT_NO_INSTRUMENT size_t ct_meta_process_bytes(const struct ct_process_facts *f) {
    size_t block = ct_ring_block_size();
    size_t bytes = f ? strlen(f->exe) + f->len + 64 : block;
    return bytes < block ? bytes : block;
}

CT_NO_INSTRUMENT void ct_meta_process_write(struct ct_process_facts *f) {
    if (!f && !(f = ct_meta_process_gather())) return;
    if (!ct_header_get()) {
        free(f->args);
        free(f);
        return;
    }
    struct ct_body b = { 0 };
    ct_body_varint(&b, (uint64_t)getpid());
    ct_body_varint(&b, (uint64_t)getppid());
    ct_meta_put_string(&b, f->exe);
    // Arguments that would not fit one block are left out and counted, so the record is never lost
    // whole.
    const char *args = f->args;
    size_t len = f->len;
    uint64_t argc = 0;
    for (size_t i = 0; i < len; i++) argc += args[i] == '\0';
    size_t budget = ct_ring_block_size() - CT_BLOCK_HEADER_SIZE - 64 - b.len - 10;
    uint64_t kept = 0;
    for (size_t i = 0, start = 0, used = 0; i < len; i++) {
        if (args[i] != '\0') continue;
        size_t n = i - start + 10;
        if (used + n > budget) break;
        used += n;
        kept++;
        start = i + 1;
    }
    ct_body_varint(&b, kept);
    for (size_t i = 0, start = 0, k = 0; i < len && k < kept; i++) {
        if (args[i] != '\0') continue;
        ct_body_bytes(&b, args + start, i - start);
        start = i + 1;
        k++;
    }
    if (kept < argc) {
        ct_body_varint(&b, argc - kept); // omitted_args
        ct_header_lose(CT_LOST_ARGS_CUT, 0);
    }
    free(f->args);
    free(f);
    ct_meta_write(CT_REC_PROCESS, &b);
}

CT_NO_INSTRUMENT void ct_meta_write_process(void) { ct_meta_process_write(NULL); }
