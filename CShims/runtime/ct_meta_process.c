// The PROCESS record: pid, parent, the program's path and its command line.
#include "ct_meta.h"
#include "ct_meta_stream.h"
#include "ct_header.h"
#include "ct_proc.h"
#include "ct_ring.h"

#include <stdlib.h>
#include <unistd.h>

CT_NO_INSTRUMENT void ct_meta_write_process(void) {
    struct ct_body b = { 0 };
    char exe[4096];
    ct_meta_program_path(exe, sizeof exe);
    ct_body_varint(&b, (uint64_t)getpid());
    ct_body_varint(&b, (uint64_t)getppid());
    ct_meta_put_string(&b, exe);
    // The command line, from /proc (argv itself is not ours to read before main). Arguments that
    // would not fit one block are left out and counted, so the record is never lost whole.
    size_t len = 0;
    char *args = ct_proc_read_all("/proc/self/cmdline", &len);
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
    free(args);
    ct_meta_write(CT_REC_PROCESS, &b);
}

