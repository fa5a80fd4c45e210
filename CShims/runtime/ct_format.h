// The on-disk layout, as docs/trace-format.md describes it. Keep the two in step.
#ifndef CT_FORMAT_H
#define CT_FORMAT_H

#include "ct_base.h"
#include <stdatomic.h>

#define CT_MAGIC "CALLTRC"           // 8 bytes with the terminating NUL
#define CT_HEADER_SIZE 4096u
#define CT_BLOCK_HEADER_SIZE 32u

enum {
    CT_FILE_CLOSED = 1u << 0,   // the process exited normally and the runtime closed the trace
    CT_FILE_TSC = 1u << 1,      // ticks are TSC ticks (else CLOCK_MONOTONIC ns)
    CT_FILE_CRASHED = 1u << 2,  // a fatal signal was seen
};

struct ct_file_header {
    char magic[8];
    uint16_t version;
    uint16_t reserved;
    uint32_t header_size;
    uint32_t block_size;
    _Atomic uint32_t flags;
    uint64_t pid;
    uint64_t threshold_ns;
    uint64_t threshold_ticks;
    uint64_t calib_tick0, calib_ns0;
    uint64_t calib_tick1, calib_ns1;
    uint64_t realtime_ns0;
    uint64_t process_start_ns;
    uint64_t init_tick;
    uint64_t main_tick;
    uint64_t main_addr;
    _Atomic uint64_t drops;
    uint64_t end_tick;
    uint32_t threads_mode;
    uint32_t max_depth;
    _Atomic uint64_t next_block;
    uint64_t signal;
    _Atomic uint64_t nested_drops;
    _Atomic uint32_t lost;       // CT_LOST_* bits: why records were lost or recording stopped
    _Atomic uint32_t lost_errno; // errno of the first failure to get space for the trace
    uint64_t overhead_pair_ticks; // calibrated cost of one timed call to its caller (ct_overhead.c)
    uint64_t overhead_own_ticks;  // the part of a call's own hooks inside its own measured time
    uint32_t mute_mode;           // 1 off, 2 auto (patching), 3 hook (in-hook check only); 0 unknown
    _Atomic uint32_t muted_count; // functions muted so far (their MUTED records are in stream 0)
    uint32_t sched_period_us;     // the run-delay sampler's shortest period; 0: it never ran (ct_sched.c)
    _Atomic uint32_t sched_flags; // CT_SCHED_* bits
    uint64_t frame_interval_ns;   // CALLTRACE_FRAME: the target interval between frames (ct_marks.c)
    uint64_t hang_threshold_ns;   // CALLTRACE_HANG; 0: no hang watchdog (ct_hang.c)
    _Atomic uint32_t hang_count;  // HANG records written
    _Atomic uint32_t hang_flags;  // CT_HANG_* bits
    // The CLI's (docs/trace-format.md, "Stored symbols"): it appends the stored symbol table after
    // the program has exited. The runtime never writes them.
    uint64_t symbols_offset;
    uint64_t symbols_size;
    // The flight recorder (CALLTRACE_LIMIT, ct_limit.c): the file's size limit (0: none), and the
    // blocks of calls reused once the file was full, with the CALL records they held.
    uint64_t limit;
    _Atomic uint64_t overwritten_blocks;
    _Atomic uint64_t overwritten_calls;
    // How the program's code was instrumented (docs/design.md, "Sleds"): CT_INSTRUMENT_* bits; the
    // functions of the modules that registered sleds, and how many of them could not have their
    // sleds patched in (their code's protection could not be changed: they ran untimed).
    _Atomic uint32_t instrument;
    _Atomic uint32_t sled_functions;
    _Atomic uint32_t sleds_unpatched;
    // The calibrated cost, to its caller, of one call its handlers chose not to time (inside a
    // recursion: ct_mute_levels.h), in ticks; 0 if not calibrated.
    uint32_t overhead_untimed_ticks;
    // Calls that may have been slow and were lost because their function's exits were taken out
    // while they were open (`lost` bit 8, MUTING): counted here, apart from `drops`.
    _Atomic uint64_t muting_drops;
};
_Static_assert(sizeof(struct ct_file_header) == 296, "header layout is part of the format");

// The header's `instrument` bits: which mechanisms timed the calls of this trace.
enum {
    CT_INSTRUMENT_HOOKS = 1u << 0,   // -finstrument-functions' hooks ran
    CT_INSTRUMENT_SLEDS = 1u << 1,   // modules with sleds registered (ct_sled_table.c)
};

// Why records were lost (the header's `lost` bits). Each set bit is one warning in `report`.
enum {
    CT_LOST_RING_EMPTY = 1u << 0,    // a burst outran the ring of ready blocks (CALLTRACE_BUFFER)
    CT_LOST_NO_SPACE = 1u << 1,      // the file system had no room for another block
    CT_LOST_FILE_LIMIT = 1u << 2,    // another block would pass RLIMIT_FSIZE
    CT_LOST_MAP_FAILED = 1u << 3,    // a block could not be mapped (memory, map count)
    CT_LOST_NO_DRAIN = 1u << 4,      // the drain thread could not run: only blocks prepared before were used
    CT_LOST_MAIN_AT_EXIT = 1u << 5,  // the main thread's open calls could not be taken over at exit
    CT_LOST_ARGS_CUT = 1u << 6,      // the command line did not fit the PROCESS record and was cut
    CT_LOST_MARKS = 1u << 7,         // marks, frames or span events were dropped: their queue was full (ct_marks.c)
    CT_LOST_MUTING = 1u << 8,        // a call that may have been slow lost its exit hook to muting (muting_drops; ct_calls.c)
    CT_LOST_METADATA = 1u << 9,      // a metadata record found no block ready (its writer never waits: ct_meta.c)
    CT_LOST_EVENTS_KEPT = 1u << 10,  // a flight recorder could not keep an open span's begin or a mark name's latest mark (ct_event_stream.c)
    CT_LOST_EARLY = 1u << 11,        // instrumented code ran before the runtime started (a .preinit_array function): its calls and marks are not in the trace (ct_start.c)
};

// The thread-state sampler's state (the header's `sched_flags`, ct_sched.c).
enum {
    CT_SCHED_SAMPLED = 1u << 0,      // schedstat was sampled (THREAD_STATE records; before version 4, RUN_DELAY)
    CT_SCHED_UNAVAILABLE = 1u << 1,  // no schedstat file (a kernel without CONFIG_SCHED_INFO, or /proc hidden): nothing sampled
    CT_SCHED_PARTIAL = 1u << 2,      // some recording threads were not sampled (too many at once)
    CT_SCHED_STATE_UNREADABLE = 1u << 3, // some thread's /proc/.../syscall could not be read: what it was blocked in is unknown
};

// What a THREAD_STATE record says a thread was doing when it was sampled.
enum {
    CT_STATE_RUNNING = 0,            // on a CPU or runnable ("running" in /proc/.../syscall, or ran nearly all the interval)
    CT_STATE_BLOCKED_SYSCALL = 1,    // blocked in a system call: number, name, first argument, what a descriptor is
    CT_STATE_BLOCKED_OTHER = 2,      // blocked outside a system call (a page fault's I/O): wchan
    CT_STATE_UNKNOWN = 3,            // not running throughout, and /proc/.../syscall unreadable
};

// The hang watchdog's state (the header's `hang_flags`, ct_hang.c).
enum {
    CT_HANG_UNAVAILABLE = 1u << 0,   // libunwind could not be loaded: stacks hold the instrumented frames only
    CT_HANG_SIGNAL_OWNED = 1u << 1,  // the program handles, ignores or blocks the capture signal: left alone
    CT_HANG_DROPPED = 1u << 2,       // a hang was seen but its record was lost (no answer from the main thread in time)
    CT_HANG_PARTIAL = 1u << 3,       // some stacks were taken without a signal (a wait a signal would cut short)
};
// A HANG record's own flags.
enum {
    CT_HANG_REC_PARTIAL = 1u << 0,   // no signal was sent: the syscall's pc, then the open instrumented calls
    CT_HANG_REC_RESUMED = 1u << 1,   // the capture interrupted a wait, which was resumed as it would have run
};
// At most this many PCs in a HANG record.
#define CT_HANG_MAX_PCS 128u

enum { CT_BLOCK_SEALED = 1u << 0 };

struct ct_block_header {
    char magic[4];               // "CTBK"
    _Atomic uint32_t used;       // payload bytes committed; release-stored after each record
    uint32_t stream;
    _Atomic uint32_t flags;
    uint64_t tid;
    uint64_t seq;
};
_Static_assert(sizeof(struct ct_block_header) == CT_BLOCK_HEADER_SIZE, "block header layout");

// The stream of a flight recorder's events (marks, frames, spans, run delays, hangs: ct_event_stream.c).
// Without a limit they are in the metadata stream, 0. No thread's stream has either id.
#define CT_STREAM_EVENTS 0xFFFFFFFFu

// Record tags.
enum {
    CT_REC_CALL = 0x01,          // compact; flags in bits 4-6
    CT_REC_CALL_UNTIMED = 0x02,  // compact: a CALL with calls beneath it that were not timed (flags as CALL's)
    CT_REC_MODULE = 0x81,        // sized kinds: bit 7 set, varint length follows
    CT_REC_MODULE_GONE = 0x82,
    CT_REC_PROCESS = 0x83,
    CT_REC_THREAD = 0x84,
    CT_REC_SEGMENT = 0x85,       // the rest of the block belongs to another stream (a reused block)
    CT_REC_MUTED = 0x86,         // a function stopped being timed (adaptive muting, ct_mute.c)
    CT_REC_RUN_DELAY = 0x87,     // a thread's run delay grew between two samples (before version 4)
    CT_REC_MARK = 0x88,          // calltrace_mark: a named point in time on a thread (ct_marks.c)
    CT_REC_FRAME = 0x89,         // calltrace_frame: a frame of the program's loop starts (ct_marks.c)
    CT_REC_HANG = 0x8A,          // the main thread's native stack during a hang (ct_hang.c)
    CT_REC_SPAN_BEGIN = 0x8B,    // calltrace_span_begin: an interval of the program's own starts (ct_spans.c)
    CT_REC_SPAN_POINT = 0x8C,    // calltrace_span_point: a milestone inside a span (ct_spans.c)
    CT_REC_SPAN_END = 0x8D,      // calltrace_span_end: the span ends, on any thread (ct_spans.c)
    CT_REC_MARK_AT = 0x8E,       // calltrace_mark_at: a MARK at a CLOCK_MONOTONIC time the caller measured
    CT_REC_FILTER = 0x8F,        // CALLTRACE_FILTER as the runtime applied it (ct_filter.c)
    CT_REC_THREAD_STATE = 0x90,  // a sample of a thread's time on a CPU, run delay and state (ct_sched.c)
    CT_REC_RESTRICTED = 0x91,    // a thread restricted itself (seccomp, PR_SET_TSC): what the runtime did (ct_restrict.c)
};
// RESTRICTED's `what`: the program's step. `done`: the runtime's answer.
enum {
    CT_RESTRICT_STRICT = 1,          // seccomp strict mode (only read, write, exit, sigreturn from then on)
    CT_RESTRICT_FILTER = 2,          // a seccomp filter on this thread (and the threads it creates)
    CT_RESTRICT_FILTER_ALL = 3,      // a seccomp filter on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC)
    CT_RESTRICT_TSC = 4,             // prctl(PR_SET_TSC, PR_TSC_SIGSEGV): rdtsc faults on this thread
};
enum {
    CT_RESTRICT_TIMED_ON = 0,        // nothing the runtime does is forbidden: the thread is timed as before
    CT_RESTRICT_CLOCK_CALL = 1,      // timed on, with CLOCK_MONOTONIC through the system call
    CT_RESTRICT_STOPPED = 2,         // the thread's calls are no longer timed; those open were written as unfinished
    CT_RESTRICT_STOPPED_ALL = 3,     // no thread is timed any more and the drain thread finished the trace first
};
// CT_CALL_DESCENDANTS: a sixth varint follows, the number of timed calls beneath this one, whose
// hooks' overhead (the header's overhead_* ticks each) is not the call's cost (docs/design.md).
// CALL_UNTIMED adds a last varint: the calls beneath it that were not timed (inside a recursion,
// ct_mute_levels.h), overhead_untimed_ticks each.
enum { CT_CALL_UNFINISHED = 1u << 4, CT_CALL_UNWOUND = 1u << 5, CT_CALL_DESCENDANTS = 1u << 6 };

// A CALL record is at most a tag and seven 10-byte varints.
#define CT_CALL_MAX_BYTES 71u

#endif
