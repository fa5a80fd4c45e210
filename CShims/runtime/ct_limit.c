#include "ct_limit.h"
#include "ct_event_stream.h"
#include "ct_file.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_ring.h"

#include <string.h>
#include <sys/mman.h>

// A limited file holds at least this many blocks (ct_limit_block_size), and keeps at most a
// half of them ready in the ring (ct_limit_ring_cap).
#define CT_LIMIT_MIN_BLOCKS 64u

// The sealed blocks of calls and events, oldest first: a queue of file offsets, as many as the file
// can hold.
// The drain thread is its only user.
static struct {
    uint64_t limit;       // bytes; 0: no limit
    uint64_t *queue;      // mmap'ed: nothing to undo with malloc's locks in a fork child
    uint64_t capacity, head, count;
    size_t queue_bytes;
} L;

CT_NO_INSTRUMENT bool ct_limit_start(uint64_t limit, uint32_t block_size) {
    ct_limit_forget();
    if (!limit) return true;
    L.capacity = limit / block_size + 1;
    L.queue_bytes = (size_t)(L.capacity * sizeof(uint64_t));
    void *q = mmap(NULL, L.queue_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED) {
        memset(&L, 0, sizeof L);
        return false;
    }
    L.queue = q;
    L.limit = limit;
    return true;
}

CT_NO_INSTRUMENT bool ct_limit_active(void) { return L.limit != 0; }

CT_NO_INSTRUMENT uint32_t ct_limit_block_size(uint64_t limit, uint32_t block_size) {
    if (!limit) return block_size;
    uint64_t most = ((limit - CT_HEADER_SIZE) / CT_LIMIT_MIN_BLOCKS) & ~(uint64_t)4095;
    if (most < 4096) most = 4096;
    return block_size < most ? block_size : (uint32_t)most;
}

CT_NO_INSTRUMENT uint64_t ct_limit_fit(uint64_t off, uint32_t block_size, uint64_t count) {
    if (!L.limit) return count;
    uint64_t fit = L.limit > off ? (L.limit - off) / block_size : 0;
    return fit < count ? fit : count;
}

CT_NO_INSTRUMENT uint64_t ct_limit_ring_cap(uint64_t want) {
    if (!L.limit) return want;
    uint64_t cap = L.limit / ct_ring_block_size() / 2;
    if (cap < 2) cap = 2;
    return want < cap ? want : cap;
}

CT_NO_INSTRUMENT void ct_limit_sealed(const struct ct_block_header *b, uint64_t offset) {
    // Stream 0 is the metadata's: its blocks are never reused. A block of calls holds no metadata
    // (a SEGMENT never continues stream 0 in another stream's block, docs/trace-format.md). The
    // events stream's are reused like the calls' (ct_event_stream.c).
    if (!L.limit || b->stream == 0 || L.count == L.capacity) return;
    L.queue[(L.head + L.count) % L.capacity] = offset;
    L.count++;
}

CT_NO_INSTRUMENT static const uint8_t *skip_varint(const uint8_t *p, const uint8_t *end) {
    while (p < end && (*p & 0x80)) p++;
    return p < end ? p + 1 : end;
}

// The CALL records in a block's committed payload (every piece's: SEGMENTs are sized records).
CT_NO_INSTRUMENT static uint64_t count_calls(const struct ct_block_header *b, uint32_t block_size) {
    uint32_t used = atomic_load_explicit(&b->used, memory_order_acquire);
    if (used > block_size - CT_BLOCK_HEADER_SIZE) return 0;
    const uint8_t *p = (const uint8_t *)b + CT_BLOCK_HEADER_SIZE, *end = p + used;
    uint64_t calls = 0;
    while (p < end) {
        uint8_t tag = *p++;
        if (tag & 0x80) {
            const uint8_t *len_at = p;
            uint64_t len = 0;
            for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
                len |= (uint64_t)(*p & 0x7f) << shift;
                if (!(*p++ & 0x80)) break;
            }
            if (p == len_at || len > (uint64_t)(end - p)) break;
            p += len;
        } else if ((tag & 0x0f) == CT_REC_CALL) {
            int fields = (tag & CT_CALL_DESCENDANTS) ? 6 : 5;
            for (int i = 0; i < fields; i++) p = skip_varint(p, end);
            calls++;
        } else {
            break; // nothing else is compact
        }
    }
    return calls;
}

// Reuse, in an order a reader can rely on at any moment (a SIGKILL may stop it anywhere): `used`
// goes to 0 first, with a release store, so from then on the block shows no records whatever its
// other fields say; then the header is cleared. A recording thread that takes it writes its own
// stream, tid and seq before its first record makes `used` non-zero again (ct_writer.c), so the
// block is read either as its old piece or as the new one, never as a mix.
CT_NO_INSTRUMENT uint64_t ct_limit_reuse(struct ct_file *f, uint64_t count) {
    struct ct_file_header *h = ct_header_get();
    uint32_t size = ct_ring_block_size();
    uint64_t done = 0;
    for (; done < count && L.count > 0; done++) {
        uint64_t off = L.queue[L.head];
        struct ct_block_header *b = ct_file_map(f, off, size);
        if (!b) break;  // tried again on the next pass
        L.head = (L.head + 1) % L.capacity;
        L.count--;
        uint64_t calls = count_calls(b, size);
        // Open spans, latest marks, live threads' names.
        if (b->stream == CT_STREAM_EVENTS) ct_event_stream_carry(b, size, ct_meta_thread_is_current);
        atomic_store_explicit(&b->used, 0, memory_order_release);
        // The header's other fields are cleared only after `used` (a fence: plain stores could
        // otherwise be moved ahead of it, by the compiler or a weaker CPU than x86).
        atomic_thread_fence(memory_order_release);
        atomic_store_explicit(&b->flags, 0, memory_order_relaxed);
        b->stream = 0;
        b->tid = 0;
        b->seq = 0;
        atomic_fetch_add_explicit(&h->overwritten_blocks, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&h->overwritten_calls, calls, memory_order_relaxed);
        ct_ring_publish(b, off);
    }
    // Only once the file is full does a carry happen: the events stream takes its spare now.
    if (done) ct_event_stream_keep_spare();
    return done;
}

CT_NO_INSTRUMENT void ct_limit_forget(void) {
    if (L.queue) munmap(L.queue, L.queue_bytes);
    memset(&L, 0, sizeof L);
}
