#include "ct_drain.h"
#include "ct_clock.h"
#include "ct_feature.h"
#include "ct_file.h"
#include "ct_header.h"
#include "ct_limit.h"
#include "ct_event_stream.h"
#include "ct_log.h"
#include "ct_meta.h"
#include "ct_proc.h"
#include "ct_ring.h"
#include "ct_settings.h"
#include "calltrace_runtime.h"
#include "ct_syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define CT_HANDED_MAX 1024
// Ready before the program records its first call at threshold 0 (2 MiB by default): room for a
// burst of some 200,000 calls before the drain thread's first pass, on a busy machine too (where
// its first wake-up can take tens of milliseconds).
#define CT_FIRST_BLOCKS 32u
// With a threshold, records come at most one per call that lasted that long, and the opening
// thread waits for CT_FIRST_BLOCKS_AT_THRESHOLD alone (the metadata stream's and the first
// recording threads'); the first CT_FIRST_BLOCKS_WRITTEN (the metadata stream's, the main
// thread's first) are written with zeros: the first write into a fallocated extent costs a page
// fault of 0.6-1 ms on ext4, and writing a block costs 0.05-0.1 ms (ct_file.h). Below
// CT_FIRST_DEFER_MIN_NS the rest of CT_FIRST_BLOCKS follow in the drain thread's first pass.
// From it, the opener waits for the metadata stream's block alone; the spares (written) follow
// CT_SPARES_AFTER_NS later or when asked (make_spares), the rest half the threshold later (at most
// CT_FIRST_DEFER_MAX_NS), or as soon as a spare is taken: a program that ends sooner (a hello
// world at 10 ms) leaves only written blocks unused, if any, and cutting those off at exit costs
// 15 us where a fallocated one costs 0.1-4 ms on ext4 (its extent is freed through the journal).
// A stream of calls that finds the ring empty meanwhile waits for them (ct_ring_defer_first)
// rather than lose a call (docs/design.md, "Start-up").
#define CT_FIRST_BLOCKS_AT_THRESHOLD 4u
#define CT_FIRST_BLOCKS_WRITTEN 2u
#define CT_FIRST_DEFER_MIN_NS 2000000ull
#define CT_FIRST_DEFER_MAX_NS 5000000ull
// At threshold 0 the opener waits for the two written blocks alone (the metadata stream's, the main
// thread's first), and the rest of CT_FIRST_BLOCKS come in the drain thread's first pass after
// another block is taken (a thread's second, another thread's first), or this long after the open,
// or at once for a taker that found the ring empty (it waits for them, ct_ring_defer_first): a
// program that ends sooner (a hello world) has no block to cut off at exit, and its exit does not
// wait for the drain thread (0.1-4 ms for each fallocated block cut, on ext4). Measured at 1 ms, a
// hello world's exit often came just after the blocks: its median start-up was 0.6 ms worse.
#define CT_FIRST_AT_ZERO_NS CT_FIRST_DEFER_MAX_NS
// Of a deferred start's metadata block, what the opening thread writes at once (the process and
// module records, some hundred bytes a module) is written with zeros; the rest is reserved (it is
// never cut off: the block is in use).
#define CT_META_WRITTEN_BYTES 16384u
// A deferred start's spares come this long after the open (or as soon as a taker asks): none can be
// needed for calls before CT_FIRST_DEFER_MIN_NS, and a program that ends sooner never pays for
// them (a hello world at 10 ms: writing them and cutting them off at exit was 0.07 ms of its 0.5).
#define CT_SPARES_AFTER_NS 1000000ull

enum { DRAIN_STARTING, DRAIN_RUNNING, DRAIN_FAILED, DRAIN_ENDED };
enum { REQ_NONE, REQ_STOP, REQ_STOP_AND_CUT, REQ_FINISH, REQ_PAUSE };
// Between passes the drain thread is IDLE; the exiting thread may then finish the trace itself
// (TAKEN, ct_drain_stop_at_exit), and the drain thread, when it wakes, touches nothing more.
enum { PHASE_BUSY, PHASE_IDLE, PHASE_TAKEN };

// The drain thread's sleep between passes (pass_wait_ns).
#define DRAIN_MIN_WAIT_NS 1000000ull
#define DRAIN_MAX_WAIT_NS 8000000ull

static struct {
    const struct ct_settings *settings;
    const struct ct_drain_watch *watch; // the opener's: is the program still there (ct_drain.h)
    struct ct_file file;
    pthread_t thread;
    bool started;                      // a thread was created and not joined yet
    bool reopen;                       // the next thread opens the existing file again
    bool private_fd;                   // the descriptor is in the drain thread's own table
    uint64_t write_bytes;              // so many bytes of the blocks being added are written with zeros
    _Atomic uint32_t state;            // futex word: DRAIN_*
    _Atomic uint32_t request;          // REQ_*
    _Atomic uint32_t phase;            // PHASE_*
    uint64_t target;                   // blocks to keep ready; grows when the program takes many
    uint64_t last_taken;
    struct { struct ct_block_header *block; uint64_t offset; } handed[CT_HANDED_MAX];
    uint32_t nhanded;
    uint64_t handed_upto, prefaulted_upto, prefault_budget;
    uint64_t first_due_ns;             // when the deferred first blocks are due; 0: not deferred
    uint64_t taken_at_open;            // blocks taken when the trace opened (a taker since asks)
    char why[512];                     // why the file could not be opened, for the opener to print
    bool spares_due;                   // the spares of a deferred start are still to be made...
    uint64_t spares_due_ns;            // ...at this time at the latest
    pid_t tid;                         // the drain thread's kernel id
} D = { .file = { .fd = -1 } };

CT_NO_INSTRUMENT static void set_state(uint32_t s) {
    atomic_store_explicit(&D.state, s, memory_order_release);
    ct_syscall(SYS_futex, &D.state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

// Waits until the state leaves `from`, at most `timeout_ns`. Returns the state.
CT_NO_INSTRUMENT static uint32_t wait_state(uint32_t from, uint64_t timeout_ns) {
    uint64_t deadline = ct_monotonic_ns() + timeout_ns;
    uint32_t s;
    while ((s = atomic_load_explicit(&D.state, memory_order_acquire)) == from) {
        uint64_t now = ct_monotonic_ns();
        if (now >= deadline) break;
        uint64_t left = deadline - now;
        struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
        ct_syscall(SYS_futex, &D.state, FUTEX_WAIT_PRIVATE, from, &ts, NULL, 0);
    }
    return s;
}

// Blocks: `buffer / 256` bytes each (16M: 64 KiB), between 16 KiB and 1 MiB, at most 256 of them.
CT_NO_INSTRUMENT static void size_blocks(uint64_t buffer, uint32_t *block_size, uint32_t *count) {
    uint64_t block = buffer / 256;
    if (block > (1u << 20)) block = 1u << 20;
    if (block < (16u << 10)) block = 16u << 10;
    block &= ~(uint64_t)4095;
    if (block > buffer / 2) block = (buffer / 2) & ~(uint64_t)4095;
    if (block < 4096) block = 4096;
    uint64_t n = buffer / block;
    *block_size = (uint32_t)block;
    *count = (uint32_t)(n < 2 ? 2 : n > 256 ? 256 : n);
}

// Gives the calling thread a descriptor table of its own holding nothing of the program's.
CT_NO_INSTRUMENT static bool make_private_fd_table(void) {
    // CLONE_FS too: a process whose working directory and root are shared with another thread
    // cannot setns() into a mount namespace; the program's own threads are all it shares them with.
    // Raw system calls: unshare() would be the runtime's own wrapper (ct_wrappers.c).
    if (ct_syscall(SYS_unshare, CLONE_FILES | CLONE_FS) != 0 && ct_syscall(SYS_unshare, CLONE_FILES) != 0) return false;
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
    // Closing our copies affects nothing of the program's: its descriptors stay open in its own
    // table (a pipe it closes still reaches EOF) and its POSIX locks belong to its table.
    if (ct_syscall(SYS_close_range, 0u, ~0u, 0u) != 0) { // before Linux 5.9: one by one
        struct rlimit r;
        long max = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? (long)r.rlim_cur : 65536;
        for (long fd = 0; fd < max && fd < (1L << 20); fd++) close((int)fd);
    }
    // 0, 1 and 2 name /dev/null, so the trace file is never one of them and nothing written to
    // "stderr" from this thread can land in it.
    for (int i = 0; i < 3; i++) open("/dev/null", O_RDWR | O_CLOEXEC);
    return true;
}

// Reserves, maps and publishes up to `count` more blocks, with one fallocate and one mmap for all
// of them (each block is unmapped on its own later). Falls back to one block when the batch does
// not fit. Returns false (and notes why) when not even one can be had.
CT_NO_INSTRUMENT static bool add_blocks(uint64_t count) {
    struct ct_file_header *h = ct_header_get();
    uint32_t size = ct_ring_block_size();
    uint64_t off = atomic_load_explicit(&h->next_block, memory_order_relaxed);
    int err = 0;
    // Near RLIMIT_FSIZE the ring cannot be kept full: take what fits, and let records dropped from
    // now on say why (the starved reason), not that the ring was merely outrun.
    struct rlimit limit;
    bool clamped = false;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        uint64_t fit = (uint64_t)limit.rlim_cur > off ? ((uint64_t)limit.rlim_cur - off) / size : 0;
        if (fit < count) {
            clamped = true;
            count = fit ? fit : 1; // 1: let the reservation fail and say so
        }
    }
    // A limited file (CALLTRACE_LIMIT) takes what fits below its limit, then reuses its oldest
    // blocks of calls and events: no space is reserved past the limit, and running into it is no loss.
    if (ct_limit_active()) {
        uint64_t fit = ct_limit_fit(off, size, count);
        uint64_t reused = fit < count ? ct_limit_reuse(&D.file, count - fit) : 0;
        if (fit == 0) return reused > 0;
        count = fit;
    }
    // The first blocks at a threshold are written, not only reserved (CT_FIRST_BLOCKS_WRITTEN).
    uint32_t reason = ct_file_reserve_written(&D.file, off, count * size, D.write_bytes, &err);
    uint32_t short_of = 0;
    if (reason && count > 1) {
        short_of = reason;
        count = 1;
        reason = ct_file_reserve_written(&D.file, off, size, D.write_bytes, &err);
    }
    uint8_t *b = reason ? NULL : ct_file_map(&D.file, off, count * size);
    if (!reason && !b) {
        reason = CT_LOST_MAP_FAILED;
        err = errno;
    }
    if (reason) {
        ct_ring_set_starved(reason);
        ct_header_lose(reason, err);
        return false;
    }
    atomic_store_explicit(&h->next_block, off + count * size, memory_order_relaxed);
    for (uint64_t i = 0; i < count; i++) ct_ring_publish((struct ct_block_header *)(b + i * size), off + i * size);
    ct_ring_set_short(short_of);
    if (clamped) {
        ct_ring_set_starved(CT_LOST_FILE_LIMIT);
        return false;
    }
    return true;
}

CT_NO_INSTRUMENT static void unmap_sealed(void) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < D.nhanded; i++) {
        struct ct_block_header *b = D.handed[i].block;
        if (atomic_load_explicit(&b->flags, memory_order_acquire) & CT_BLOCK_SEALED) {
            ct_limit_sealed(b, D.handed[i].offset); // a flight recorder's block to reuse, oldest first
            munmap(b, ct_ring_block_size());
        } else {
            D.handed[kept++] = D.handed[i];
        }
    }
    D.nhanded = kept;
}

CT_NO_INSTRUMENT static void refill(void) {
    uint64_t taken = ct_ring_taken_count();
    // Blocks handed out since the last pass move to the handed list, to be unmapped once sealed.
    for (; D.handed_upto < taken; D.handed_upto++) {
        uint64_t off;
        struct ct_block_header *b = ct_ring_slot(D.handed_upto, &off);
        if (D.nhanded < CT_HANDED_MAX) { // else: stays mapped until exit (and is never reused)
            D.handed[D.nhanded].block = b;
            D.handed[D.nhanded++].offset = off;
        }
    }
    // A flight recorder reuses the blocks sealed up to now, not only those seen on earlier passes:
    // a burst that woke the drain thread finds its own full blocks ready again.
    if (ct_limit_active()) unmap_sealed();
    // A program that records much gets a deeper ring (at least twice what it took since the last
    // pass); one that records little costs little disk.
    uint64_t want = 2 * (taken - D.last_taken);
    if (want > D.target) D.target = want > ct_ring_capacity() ? ct_ring_capacity() : want;
    D.target = ct_limit_ring_cap(D.target);
    // Blocks taken since the last pass are the ones to fault in ahead of the program (prefault).
    D.prefault_budget += taken - D.last_taken;
    D.last_taken = taken;
    // Counted against `taken` as read above, not a fresher value: a slot is reused only once its
    // block is on the handed list.
    uint64_t have = ct_ring_published() - taken;
    if (have >= D.target || add_blocks(D.target - have)) ct_ring_set_starved(0);
}

// The waiting blocks are faulted in ahead of the program (MADV_POPULATE_WRITE, Linux 5.14;
// elsewhere the recording thread takes the faults), as many as it took since the last pass: a
// program that records little pays no page cache for blocks it never uses.
CT_NO_INSTRUMENT static void prefault(void) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    uint64_t taken = ct_ring_taken_count();
    uint64_t end = ct_ring_published();
    if (D.prefaulted_upto < taken) D.prefaulted_upto = taken;
    for (; D.prefaulted_upto < end && D.prefault_budget > 0; D.prefaulted_upto++, D.prefault_budget--) {
        madvise(ct_ring_slot(D.prefaulted_upto, NULL), ct_ring_block_size(), MADV_POPULATE_WRITE);
    }
}

// Unmaps the blocks in ring slots [first, end): runs of adjacent blocks (one batch's mapping) with
// one munmap each, not one per block (32 system calls at exit were a tenth of a millisecond).
CT_NO_INSTRUMENT static void unmap_runs(uint64_t first, uint64_t end) {
    uint32_t size = ct_ring_block_size();
    uint8_t *run = NULL;
    size_t len = 0;
    for (uint64_t i = first; i < end; i++) {
        uint8_t *b = (uint8_t *)ct_ring_slot(i, NULL);
        if (run && b == run + len) {
            len += size;
            continue;
        }
        if (run) munmap(run, len);
        run = b;
        len = size;
    }
    if (run) munmap(run, len);
}

// At exit: take the waiting blocks back so nobody starts writing into them, and cut those at the
// end of the file off, so that a short program leaves a short trace.
CT_NO_INSTRUMENT static void cut_unused_blocks(void) {
    struct ct_file_header *h = ct_header_get();
    uint32_t size = ct_ring_block_size();
    uint64_t first, end_index;
    ct_ring_claim_all(&first, &end_index);
    uint64_t end = atomic_load_explicit(&h->next_block, memory_order_relaxed);
    for (bool cut = true; cut && end > CT_HEADER_SIZE;) {
        cut = false;
        for (uint64_t i = first; i < end_index; i++) {
            uint64_t off;
            ct_ring_slot(i, &off);
            if (off == end - size) {
                end -= size;
                cut = true;
            }
        }
    }
    unmap_runs(first, end_index);
    ct_file_truncate(&D.file, end);
    atomic_store_explicit(&h->next_block, D.file.size, memory_order_relaxed); // readers check the size against it
}

// Creates the file and its header, or opens it again; prepares the first blocks.
CT_NO_INSTRUMENT static bool open_file(void) {
    if (D.reopen) return ct_file_reopen(&D.file);
    if (!ct_file_create(&D.file, D.settings, D.why, sizeof D.why)) return false;
    int err = 0;
    uint32_t reason = ct_file_reserve_written(&D.file, 0, CT_HEADER_SIZE, CT_HEADER_SIZE, &err);
    struct ct_file_header *h = reason ? NULL : ct_file_map(&D.file, 0, CT_HEADER_SIZE);
    if (!h) {
        snprintf(D.why, sizeof D.why, "cannot write the trace file %s: %s", D.file.path, strerror(err ? err : errno));
        unlink(D.file.path); // ours: created above
        ct_file_close(&D.file);
        return false;
    }
    uint32_t block_size, count;
    size_blocks(D.settings->buffer, &block_size, &count);
    block_size = ct_limit_block_size(D.settings->limit, block_size);
    // Without memory for its list of blocks the trace has no limit (the header's says 0).
    ct_limit_start(D.settings->limit, block_size);
    memcpy(h->magic, CT_MAGIC, 8);
    h->version = CALLTRACE_FORMAT_VERSION;
    h->header_size = CT_HEADER_SIZE;
    h->block_size = block_size;
    h->pid = (uint64_t)getpid();
    h->threads_mode = D.settings->threads;
    h->max_depth = (uint32_t)D.settings->max_depth;
    h->process_start_ns = ct_proc_process_start_ns();
    h->limit = ct_limit_active() ? D.settings->limit : 0;
    atomic_store_explicit(&h->next_block, CT_HEADER_SIZE, memory_order_relaxed);
    ct_ring_init(block_size, count);
    atomic_store_explicit(&ct_header, h, memory_order_release);
    D.first_due_ns = 0;
    bool defer = D.settings->threshold >= CT_FIRST_DEFER_MIN_NS;
    bool at_zero = D.settings->threshold == 0;
    D.target = defer ? 1 : CT_FIRST_BLOCKS_WRITTEN < ct_ring_capacity() ? CT_FIRST_BLOCKS_WRITTEN : ct_ring_capacity();
    D.write_bytes = defer ? CT_META_WRITTEN_BYTES : (uint64_t)D.target * block_size;
    refill();
    D.write_bytes = 0;
    // A deferred start's spares come after the opener went on (make_spares); at threshold 0 the
    // rest come with the first pass that finds more than the main thread's first block taken.
    if (!defer && !at_zero) D.target = CT_FIRST_BLOCKS_AT_THRESHOLD;
    if (D.target > ct_ring_capacity()) D.target = ct_ring_capacity();
    refill();
    ct_meta_start();
    D.spares_due = defer;
    D.spares_due_ns = ct_monotonic_ns() + CT_SPARES_AFTER_NS;
    if (defer || at_zero) {
        uint64_t wait = at_zero ? CT_FIRST_AT_ZERO_NS : D.settings->threshold / 2;
        D.first_due_ns = ct_monotonic_ns() + (wait < CT_FIRST_DEFER_MAX_NS ? wait : CT_FIRST_DEFER_MAX_NS);
        // At threshold 0 the main thread's first record takes the second written block at once.
        D.taken_at_open = ct_ring_taken_count() + (at_zero ? 1 : 0);
        if (defer) D.target = CT_FIRST_BLOCKS_AT_THRESHOLD - 1; // the spares
        ct_ring_defer_first();
    }
    return true;
}

// A deferred start's spares (the recording threads' first blocks), written with zeros (cutting them
// off at exit, unused, costs nothing): CT_SPARES_AFTER_NS after the open, as soon as a taker asks,
// or when the drain thread's own metadata finds the ring empty (ct_ring_never_wait_here); not at
// all when the program ends before ("Start-up", docs/design.md). True when blocks were added.
CT_NO_INSTRUMENT static bool make_spares(void) {
    if (!D.spares_due) return false;
    D.spares_due = false;
    uint64_t before = ct_ring_published();
    D.write_bytes = (uint64_t)D.target * ct_ring_block_size();
    refill();
    D.write_bytes = 0;
    ct_ring_spares_ready();
    return ct_ring_published() > before;
}

CT_NO_INSTRUMENT static void spares_if_due(uint64_t now) {
    if (D.spares_due && (now >= D.spares_due_ns || ct_ring_first_wanted())) make_spares();
}

// The deferred first blocks (the rest of CT_FIRST_BLOCKS). True when blocks were added.
CT_NO_INSTRUMENT static bool make_first_blocks(void) {
    if (!D.first_due_ns) return false;
    D.first_due_ns = 0;
    uint64_t before = ct_ring_published();
    D.target = CT_FIRST_BLOCKS < ct_ring_capacity() ? CT_FIRST_BLOCKS : ct_ring_capacity();
    refill();
    ct_ring_first_ready();
    return ct_ring_published() > before;
}

// ...when due, as soon as a taker has taken a spare (at threshold 0, more than the main thread's
// first block), or wants one.
CT_NO_INSTRUMENT static void first_blocks_if_due(uint64_t now) {
    if (!D.first_due_ns || (now < D.first_due_ns && ct_ring_taken_count() <= D.taken_at_open && !ct_ring_first_wanted()))
        return;
    make_first_blocks();
}

// What the drain thread's own takes (its metadata) make when they find the ring empty before the
// blocks a deferred start put off: the spares, or at threshold 0 (which has none) the rest.
CT_NO_INSTRUMENT static bool make_deferred_blocks(void) {
    return make_spares() || make_first_blocks();
}

// How long the drain thread may sleep after a pass at `now`: until the earliest pass a feature
// wants, within [1 ms, 8 ms].
CT_NO_INSTRUMENT static uint64_t pass_wait_ns(uint64_t now) {
    uint64_t due = ct_features_next_due_ns(now + DRAIN_MAX_WAIT_NS);
    return due > now + DRAIN_MIN_WAIT_NS ? due - now : DRAIN_MIN_WAIT_NS;
}

CT_NO_INSTRUMENT static void *drain_main(void *arg) {
    (void)arg;
    // The kernel may start a new thread on its creator's CPU and run it first; the opening thread
    // would then wait for this whole open before it could do its own part of it (gathering the
    // process and module records, "Start-up" in docs/design.md). Yielding once lets it go on, and
    // this thread move to an idle CPU: measured, the opener's 0.5-2 ms in pthread_create became 0.05.
    sched_yield();
    D.tid = (pid_t)ct_syscall(SYS_gettid);
    // Named here, one system call: pthread_setname_np from the opener writes /proc/self/task/N/comm.
    ct_syscall(SYS_prctl, PR_SET_NAME, "calltrace-drain", 0, 0, 0);
    ct_ring_never_wait_here(make_deferred_blocks);
    D.private_fd = make_private_fd_table();
    bool reopen = D.reopen;
    if (!open_file()) {
        set_state(DRAIN_FAILED);
        return NULL;
    }
    if (!D.private_fd) {
        // Without a table of its own the descriptor could come to name one of the program's files
        // (a daemon closing every descriptor): keep the blocks prepared so far and let it go.
        ct_file_close(&D.file);
        ct_ring_set_starved(CT_LOST_NO_DRAIN);
        ct_header_lose(CT_LOST_NO_DRAIN, 0);
        ct_ring_first_ready();
        set_state(DRAIN_RUNNING);
        return NULL;
    }
    set_state(DRAIN_RUNNING);   // the opening thread goes on: what follows is off its start path
    if (!reopen && !D.first_due_ns) {
        D.target = CT_FIRST_BLOCKS < ct_ring_capacity() ? CT_FIRST_BLOCKS : ct_ring_capacity();
        refill();
    }
    uint64_t last_poll = ct_monotonic_ns();
    uint32_t req;
    enum ct_program_state program = CT_PROGRAM_RUNS;
    int status = 0;
    // The wake count is read before the request, so a request made after the check also ends the
    // wait below at once.
    for (uint32_t seen = ct_ring_wake_count();
         (req = atomic_load_explicit(&D.request, memory_order_acquire)) == REQ_NONE; seen = ct_ring_wake_count()) {
        uint64_t pass_ns = ct_monotonic_ns();
        spares_if_due(pass_ns);
        first_blocks_if_due(pass_ns);
        // Before the spares nothing is added, but an ask is answered all the same: a taker's
        // wake_pending left set would keep ct_ring_wait from sleeping.
        // At threshold 0 nothing is added either before the rest of the first blocks are due.
        if (D.spares_due || (D.first_due_ns && D.settings->threshold == 0)) ct_ring_set_starved(0);
        else refill();
        if (!D.first_due_ns) prefault();  // a deferred start faults nothing in before it is due
        unmap_sealed();
        ct_features_pass();
        uint64_t now = ct_monotonic_ns();
        if (now - last_poll > 20 * 1000000ull) { // new modules (dlopen), thread names
            ct_meta_poll();
            last_poll = now;
            // The program's threads that end with the raw exit system call (ct_raw_exit.h).
            program = D.watch ? D.watch->poll(&status) : CT_PROGRAM_RUNS;
            if (program != CT_PROGRAM_RUNS) {
                bool others_record = program == CT_PROGRAM_MAIN_GONE && D.settings->threads == CT_THREADS_ALL;
                req = others_record ? REQ_STOP : REQ_STOP_AND_CUT;
                break;
            }
        }
        // Until a feature wants the next pass, at least 1 ms and at most 8 ms
        // (waking costs 20-40 us on a VM: every 2 ms that was 1-2 % of a core for an idle
        // program), or at once when a taker asks for blocks or muting has work; every 100 ms
        // while no space can be had.
        uint64_t wait = ct_ring_is_starved() ? 100 * 1000000ull : pass_wait_ns(now);
        if (D.first_due_ns && D.first_due_ns < now + wait) wait = D.first_due_ns > now ? D.first_due_ns - now : 0;
        if (D.spares_due && D.spares_due_ns < now + wait) wait = D.spares_due_ns > now ? D.spares_due_ns - now : 0;
        atomic_store_explicit(&D.phase, PHASE_IDLE, memory_order_release);
        ct_ring_wait(seen, wait);
        uint32_t idle = PHASE_IDLE;
        if (!atomic_compare_exchange_strong_explicit(&D.phase, &idle, PHASE_BUSY, memory_order_acq_rel,
                                                     memory_order_acquire))
            return NULL; // the exiting thread finished the trace meanwhile (ct_drain_stop_at_exit)
    }
    ct_ring_first_ready(); // nobody waits for blocks that will not come
    if (req != REQ_PAUSE) {
        ct_features_stop();
        ct_meta_scan_if_changed();
    }
    if (req == REQ_STOP_AND_CUT || req == REQ_FINISH) cut_unused_blocks();
    ct_file_close(&D.file);
    if (req == REQ_FINISH && D.watch && D.watch->finish) D.watch->finish();
    if (program == CT_PROGRAM_MAIN_GONE && req == REQ_STOP) ct_ring_set_starved(CT_LOST_NO_DRAIN);
    set_state(DRAIN_ENDED);
    if (program == CT_PROGRAM_GONE) D.watch->end_process(status);
    return NULL;
}

CT_NO_INSTRUMENT static bool create_thread(void) {
    atomic_store_explicit(&D.state, DRAIN_STARTING, memory_order_relaxed);
    atomic_store_explicit(&D.request, REQ_NONE, memory_order_relaxed);
    atomic_store_explicit(&D.phase, PHASE_BUSY, memory_order_relaxed);
    // The drain thread must not receive the program's signals: block them all while creating it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    D.started = pthread_create(&D.thread, &attr, drain_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return D.started;
}

CT_NO_INSTRUMENT static bool wait_started(void) {
    // Creating the file and its first blocks takes well under a millisecond; a second is a
    // machine in trouble, and the program goes on untraced rather than waiting longer.
    uint32_t s = wait_state(DRAIN_STARTING, 1000000000ull);
    if (s == DRAIN_FAILED) {
        pthread_join(D.thread, NULL);
        D.started = false;
    }
    return s == DRAIN_RUNNING;
}

CT_NO_INSTRUMENT static bool start_thread(void) { return create_thread() && wait_started(); }

CT_NO_INSTRUMENT bool ct_drain_start(const struct ct_settings *settings, const struct ct_drain_watch *watch) {
    D.settings = settings;
    D.watch = watch;
    D.reopen = false;
    D.why[0] = '\0';
    if (create_thread()) return true;
    ct_warn("cannot start the trace writer thread; the program runs untraced");
    return false;
}

CT_NO_INSTRUMENT struct ct_file_header *ct_drain_wait_open(void) {
    if (!wait_started()) {
        if (D.why[0]) ct_warn("%s; the program runs untraced", D.why);
        else ct_warn("cannot start the trace writer thread; the program runs untraced");
        return NULL;
    }
    return ct_header_get();
}

// pthread_join returns when the kernel has cleared the thread's id, a little before the thread
// has left the thread group; a call that needs a single-threaded process must wait for that too.
CT_NO_INSTRUMENT static void wait_until_gone(pid_t tid) {
    for (int i = 0; i < 10000 && ct_proc_task_listed((uint64_t)tid); i++) {
        struct timespec pause = { 0, 100000 };
        nanosleep(&pause, NULL);
    }
}

CT_NO_INSTRUMENT static void end_thread(uint32_t request, bool join) {
    if (!D.started || ct_drain_is_current_thread()) return;
    atomic_store_explicit(&D.request, request, memory_order_release);
    ct_ring_wake();
    // A drain thread stuck (the loader lock held for ever by a thread that did not survive a fork)
    // must not hold the program's exit up: give up on it after a second.
    if (wait_state(DRAIN_RUNNING, 1000000000ull) == DRAIN_ENDED && join) {
        pthread_join(D.thread, NULL);
        D.started = false;
        if (request == REQ_PAUSE) wait_until_gone(D.tid);
    }
}

CT_NO_INSTRUMENT void ct_drain_stop(bool cut) { end_thread(cut ? REQ_STOP_AND_CUT : REQ_STOP, true); }

// At exit the file is finished once the thread says it ended; waiting for it to leave the process
// too (pthread_join) was 0.02-0.05 ms more of a short program's exit, and exit_group ends it anyway.
// It stays `started`: a later stop or pause joins it then. When it sleeps between passes and the
// ring holds no block to cut off (a short program at a threshold), the exiting thread does the
// stop's work itself (the features' last writes and the last module scan: no system call on the
// file, whose descriptor is the drain thread's), without waking it and waiting for it to run: each
// of those hand-overs costs a wake-up, and a time slice on a busy machine.
CT_NO_INSTRUMENT void ct_drain_stop_at_exit(void) {
    if (!D.started || ct_drain_is_current_thread()) return;
    // Only the drain thread publishes blocks, so none comes while it sleeps (or after).
    uint32_t idle = PHASE_IDLE;
    if (ct_ring_published() == ct_ring_taken_count() &&
        atomic_compare_exchange_strong_explicit(&D.phase, &idle, PHASE_TAKEN, memory_order_acq_rel,
                                                memory_order_acquire)) {
        ct_ring_first_ready();
        ct_features_stop();
        ct_meta_scan_if_changed();
        atomic_store_explicit(&ct_header_get()->next_block, D.file.size, memory_order_relaxed);
        set_state(DRAIN_ENDED);
        return;
    }
    end_thread(REQ_STOP_AND_CUT, false);
}

// Asks for `request` unless another is under way, and waits for the end at most `wait_ns`: for
// another's too (a second thread crashing, or calling _exit, while a first one's stop runs), whose
// work this thread's end (a re-raised signal, exit_group) would otherwise cut short.
// Async-signal-safe: no lock, no join.
CT_NO_INSTRUMENT static bool end_thread_quickly(uint32_t request, uint64_t wait_ns) {
    if (!D.started || ct_drain_is_current_thread()) return false;
    uint32_t none = REQ_NONE;
    bool ours = atomic_compare_exchange_strong_explicit(&D.request, &none, request, memory_order_acq_rel,
                                                        memory_order_acquire);
    if (ours) ct_ring_wake();
    return wait_state(DRAIN_RUNNING, wait_ns) == DRAIN_ENDED && ours;
}

CT_NO_INSTRUMENT bool ct_drain_finish(uint64_t wait_ns) { return end_thread_quickly(REQ_FINISH, wait_ns); }

CT_NO_INSTRUMENT bool ct_drain_finish_unwoken(uint64_t spins) {
    if (!D.started) return false;
    uint32_t none = REQ_NONE;
    if (!atomic_compare_exchange_strong_explicit(&D.request, &none, REQ_FINISH, memory_order_acq_rel,
                                                 memory_order_acquire))
        return false;
    for (uint64_t i = 0; i < spins && atomic_load_explicit(&D.state, memory_order_acquire) == DRAIN_RUNNING; i++)
        __builtin_ia32_pause();
    return atomic_load_explicit(&D.state, memory_order_acquire) == DRAIN_ENDED;
}

CT_NO_INSTRUMENT bool ct_drain_stop_at_crash(uint64_t wait_ns) {
    return end_thread_quickly(REQ_STOP_AND_CUT, wait_ns);
}

CT_NO_INSTRUMENT void ct_drain_pause(void) { end_thread(REQ_PAUSE, true); }

CT_NO_INSTRUMENT void ct_drain_resume(void) {
    if (D.started || !D.private_fd || !ct_header_get()) return;
    D.reopen = true;
    if (!start_thread()) {
        ct_ring_set_starved(CT_LOST_NO_DRAIN);
        ct_header_lose(CT_LOST_NO_DRAIN, 0);
    }
}

CT_NO_INSTRUMENT bool ct_drain_is_current_thread(void) {
    return D.started && pthread_equal(D.thread, pthread_self());
}

// Only the header and the ring's waiting blocks are unmapped: the handed list may be in the middle
// of an update by the parent's drain thread (entries already unmapped, their addresses maybe
// reused by the program), so its blocks are left mapped in the child, never written.
CT_NO_INSTRUMENT void ct_drain_forget(void) {
    struct ct_file_header *h = ct_header_get();
    atomic_store_explicit(&ct_header, NULL, memory_order_release); // before the unmap: a handler may count
    if (h) {
        uint64_t first, end;
        ct_ring_claim_all(&first, &end);
        unmap_runs(first, end);
        munmap(h, CT_HEADER_SIZE);
    }
    ct_ring_forget();
    ct_limit_forget();
    ct_event_stream_forget();
    memset(&D, 0, sizeof D);
    D.file.fd = -1;
}
