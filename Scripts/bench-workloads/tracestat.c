/* tracestat FILE: an independent reader of calltrace trace files (format
 * version 1, docs/trace-format.md) for the bench. It counts CALL records and
 * payload bytes, reads the header's drop counter, and checks what a correct
 * runtime must guarantee: valid block headers, block sequence numbers without
 * gaps or repeats per stream (seq_errors counts the streams that have them),
 * well-formed records, and exit order (end ticks never decrease within a
 * stream). Prints one JSON object; exits 1 if the file
 * cannot be read at all. Written in C so a 30M-record trace takes a second. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_STREAMS 1024

static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* LEB128; returns 0 when the varint runs past end or over 10 bytes. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = v; return 1; }
    }
    return 0;
}

static int64_t unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

struct stream_state {
    uint64_t blocks;     /* blocks seen; their seq numbers must be 0..blocks-1 */
    uint64_t max_seq;
    uint64_t last_seq;   /* seq of the block read last */
    uint64_t last_end;   /* end tick of the last CALL in that block */
};

#define FAIL(...) do { snprintf(error, sizeof error, __VA_ARGS__); goto done; } while (0)

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: tracestat FILE\n"); return 2; }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 1; }
    size_t size = (size_t)st.st_size;
    if (size < 4096) { fprintf(stderr, "tracestat: file shorter than header\n"); return 1; }
    const uint8_t *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (f == MAP_FAILED) { perror("mmap"); return 1; }
    if (memcmp(f, "CALLTRC\0", 8) != 0) { fprintf(stderr, "tracestat: bad magic\n"); return 1; }

    uint32_t block_size = rd32(f + 16), flags = rd32(f + 20);
    uint64_t drops = rd64(f + 120), next_block = rd64(f + 144), nested_drops = rd64(f + 160);
    uint64_t blocks = 0, zero_blocks = 0, meta_blocks = 0, unsealed = 0;
    uint64_t records = 0, unfinished = 0, unwound = 0, sized = 0, payload = 0;
    uint64_t max_depth = 0, order_errors = 0, seq_errors = 0, streams_seen = 0;
    char error[200] = "";
    static struct stream_state streams[MAX_STREAMS];

    if (block_size < 4096 || block_size % 4096) { fprintf(stderr, "tracestat: bad block size\n"); return 1; }
    for (size_t off = 4096; off + 32 <= size; off += block_size) {
        const uint8_t *b = f + off;
        if (memcmp(b, "CTBK", 4) != 0) {
            int zero = 1;
            for (size_t i = 0; i < 32 && zero; i++) zero = b[i] == 0;
            if (zero) { zero_blocks++; continue; }
            FAIL("block at %zu: bad magic", off);
        }
        blocks++;
        uint32_t used = rd32(b + 4), stream = rd32(b + 8), bflags = rd32(b + 12);
        uint64_t seq = rd64(b + 24);
        if (used > block_size - 32) FAIL("block at %zu: used %u too large", off, used);
        if (!(bflags & 1)) unsealed++;
        payload += used;
        if (stream == 0) meta_blocks++;
        struct stream_state *s = stream < MAX_STREAMS ? &streams[stream] : NULL;
        if (s) {
            /* Exit order is checked across blocks only when this block follows the
             * one read last: file order need not be seq order. */
            if (!s->blocks || seq != s->last_seq + 1) s->last_end = 0;
            if (!s->blocks || seq > s->max_seq) s->max_seq = seq;
            s->last_seq = seq;
            s->blocks++;
        }
        const uint8_t *p = b + 32, *end = b + 32 + used;
        uint64_t prev_fn = 0, prev_site = 0, prev_end = 0, prev_depth = 0;
        while (p < end) {
            uint8_t tag = *p++;
            if (tag & 0x80) {
                uint64_t len;
                if (!varint(&p, end, &len) || len > (uint64_t)(end - p))
                    FAIL("block at %zu: sized record runs past used", off);
                p += len;
                sized++;
                continue;
            }
            /* CALL (1), or CALL_UNTIMED (2): the same and one more varint. */
            if ((tag & 0x0f) != 1 && (tag & 0x0f) != 2) FAIL("block at %zu: unknown compact kind 0x%02x", off, tag);
            uint64_t v[5];
            int ok = 1;
            for (int i = 0; i < 5 && ok; i++) ok = varint(&p, end, &v[i]);
            uint64_t descendants, untimed;
            if (ok && (tag & 0x40)) ok = varint(&p, end, &descendants); /* overhead compensation */
            if (ok && (tag & 0x0f) == 2) ok = varint(&p, end, &untimed);  /* calls not timed beneath */
            if (!ok) FAIL("block at %zu: CALL runs past used", off);
            uint64_t fn = prev_fn + (uint64_t)unzz(v[0]);
            uint64_t site = prev_site + (uint64_t)unzz(v[1]);
            uint64_t start = prev_end + (uint64_t)unzz(v[2]);
            uint64_t depth = prev_depth + (uint64_t)unzz(v[4]);
            prev_fn = fn; prev_site = site; prev_end = start + v[3]; prev_depth = depth;
            records++;
            if (tag & 0x10) unfinished++;
            if (tag & 0x20) unwound++;
            if (depth > max_depth) max_depth = depth;
            if (s) {
                /* Unfinished records are written at the end and may close early. */
                if (!(tag & 0x30) && prev_end < s->last_end) order_errors++;
                if (prev_end > s->last_end) s->last_end = prev_end;
            }
        }
    }
done:
    for (int i = 0; i < MAX_STREAMS; i++) {
        if (!streams[i].blocks) continue;
        streams_seen++;
        if (streams[i].max_seq + 1 != streams[i].blocks) seq_errors++;
    }
    printf("{\"file_bytes\": %zu, \"allocated_bytes\": %" PRIu64 ", \"block_size\": %u, \"flags\": %u, "
           "\"next_block\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"zero_blocks\": %" PRIu64 ", "
           "\"metadata_blocks\": %" PRIu64 ", \"unsealed_blocks\": %" PRIu64 ", \"payload_bytes\": %" PRIu64 ", "
           "\"records\": %" PRIu64 ", \"unfinished\": %" PRIu64 ", \"unwound\": %" PRIu64 ", "
           "\"sized_records\": %" PRIu64 ", \"max_depth\": %" PRIu64 ", "
           "\"drops\": %" PRIu64 ", \"nested_drops\": %" PRIu64 ", "
           "\"streams\": %" PRIu64 ", \"order_errors\": %" PRIu64 ", \"seq_errors\": %" PRIu64 ", "
           "\"error\": \"%s\"}\n",
           size, (uint64_t)st.st_blocks * 512, block_size, flags, next_block, blocks, zero_blocks,
           meta_blocks, unsealed, payload, records, unfinished, unwound, sized, max_depth, drops, nested_drops,
           streams_seen, order_errors, seq_errors, error);
    return 0;
}
