// The process-wide state of the runtime, defined here and nowhere else: the settings and start-up
// facts (ct_rt), the threshold in ticks, the open trace's header, and the process's registration
// for the membarrier commands the runtime uses.
#include "ct_runtime.h"
#include "ct_header.h"
#include "ct_syscall.h"

#include <linux/membarrier.h>
#include <unistd.h>

struct ct_runtime ct_rt;
uint64_t ct_threshold_ticks = UINT64_MAX;
struct ct_file_header *_Atomic ct_header;

// 0: not tried, 1: registered, -1: the kernel refused (no SYNC_CORE). A fork child's new memory
// map is not registered: it starts again at 0.
static int sync_core_registered;

// Registering makes the kernel wait for an RCU grace period once the process has a second thread
// (12-16 ms on this project's VM, the whole of a short program's traced run when the drain thread
// had to wait for it at exit); while the process has one thread it costs microseconds. Hence at
// start-up and in a fork child, before any thread of ours starts.
CT_NO_INSTRUMENT void ct_runtime_register_barriers(bool sync_core) {
    ct_rt.membarrier_ok = ct_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    sync_core_registered = 0;
    if (sync_core) ct_runtime_prepare_sync_cores();
}

CT_NO_INSTRUMENT void ct_runtime_prepare_sync_cores(void) {
    if (sync_core_registered == 0)
        sync_core_registered =
            ct_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 1 : -1;
}

CT_NO_INSTRUMENT bool ct_runtime_sync_cores(void) {
    ct_runtime_prepare_sync_cores();
    return sync_core_registered > 0 && ct_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0;
}

CT_NO_INSTRUMENT bool ct_runtime_barrier(void) {
    return ct_rt.membarrier_ok && ct_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

CT_NO_INSTRUMENT void ct_runtime_note_lost(uint32_t bits) {
    atomic_fetch_or_explicit(&ct_rt.lost, bits, memory_order_relaxed);
    ct_header_lose(bits, 0);
}

CT_NO_INSTRUMENT void ct_runtime_note_instrument(uint32_t bits) {
    if ((atomic_load_explicit(&ct_rt.instrument, memory_order_relaxed) & bits) == bits) return;
    atomic_fetch_or_explicit(&ct_rt.instrument, bits, memory_order_relaxed);
    struct ct_file_header *h = ct_header_get();
    if (h) atomic_fetch_or_explicit(&h->instrument, bits, memory_order_relaxed);
}
