// Modules built with sleds register here (calltrace_sleds.h): each one's constructor, before the
// module's own code runs, and its destructor inside dlclose.
//
// Only when asked: without a CALLTRACE_* setting nothing is patched, so the sleds cost what the
// compiler left (a jump at entry, nothing at exit) and the process gets no thread, file or signal.
// With one, every sled of the module is patched in at once, on the registering thread: the
// module's code has not run yet (its constructor comes first), so no other thread can be running
// a sled while it changes. From then on muting patches sleds out (ct_mute.c, on the drain thread).
#include "ct_sled_hooks.h"
#include "ct_header.h"
#include "ct_runtime.h"
#include "ct_sled_table.h"
#include "ct_start.h"
#include "ct_log.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

static const void *const handlers[CALLTRACE_SLED_TARGETS] = {
    [CALLTRACE_SLED_ENTER] = (const void *)ct_sled_enter,
    [CALLTRACE_SLED_EXIT] = (const void *)ct_sled_exit,
    [CALLTRACE_SLED_TAIL] = (const void *)ct_sled_tail,
};

uint64_t ct_sled_xsave_mask;
// FXSAVE's 512 bytes, and the 64 after them that the thunk zeroes whatever the kind (the XSAVE
// header's place), so that they never overlap the registers it pushed.
uint64_t ct_sled_xsave_size = 576;
uint8_t ct_sled_xsave_kind;

// What the slow paths' thunk saves (ct_sled_stubs.S): every state component the OS enabled (XCR0)
// but AMX's tiles, which no code of ours or libc's touches (8 KiB more of stack each time), in the
// standard layout's size (XSAVEC's compact one is never larger); FXSAVE's 512 bytes without XSAVE.
CT_NO_INSTRUMENT void ct_sled_xsave_setup(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_XSAVE) || !(c & bit_OSXSAVE)) return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    uint64_t mask = ((uint64_t)hi << 32 | lo) & ~((1ull << 17) | (1ull << 18));
    uint64_t size = 576; // the legacy area and the XSAVE header
    for (unsigned i = 2; i < 63; i++) {
        if (!(mask & (1ull << i))) continue;
        __cpuid_count(0xd, i, a, b, c, d);
        if ((uint64_t)b + a > size) size = (uint64_t)b + a;
    }
    __cpuid_count(0xd, 1, a, b, c, d);
    ct_sled_xsave_mask = mask;
    ct_sled_xsave_size = (size + 63) & ~(uint64_t)63;
    ct_sled_xsave_kind = (a & (1u << 1)) ? 2 : 1;
}

// The runtime's own functions with sleds: the calibration's (ct_sled_stubs.S).
extern const char __start_calltrace_calib_sleds[] __attribute__((visibility("hidden")));
extern const char __stop_calltrace_calib_sleds[] __attribute__((visibility("hidden")));
extern const char ct_sled_stub_enter[] __attribute__((visibility("hidden")));
extern const char ct_sled_stub_exit[] __attribute__((visibility("hidden")));
extern const char ct_sled_stub_tail[] __attribute__((visibility("hidden")));
extern void *ct_sled_targets[CALLTRACE_SLED_TARGETS] __attribute__((visibility("hidden")));
static struct calltrace_sled_module own_module = {
    .abi = CALLTRACE_SLED_ABI,
    .size = sizeof(struct calltrace_sled_module),
    .stubs = { ct_sled_stub_enter, ct_sled_stub_exit, ct_sled_stub_tail },
    .targets = ct_sled_targets,
};

// Once, with the first module: the thunk's sizes, and the calibration's functions.
CT_NO_INSTRUMENT static void prepare_once(void) {
    ct_sled_xsave_setup();
    own_module.map_begin = __start_calltrace_calib_sleds;
    own_module.map_end = __stop_calltrace_calib_sleds;
    ct_sled_table_add(&own_module, handlers);
}
static pthread_once_t prepared = PTHREAD_ONCE_INIT;

// A module whose sleds another calltrace built (its wrapper, CShims/sleds, at another
// CALLTRACE_SLED_ABI) cannot be patched: its bytes are not the ones this runtime writes. Its
// functions are then not traced at all, which must not pass without a word (a binary left over
// from an older checkout): once per process, the first such module, and how to fix it.
CT_NO_INSTRUMENT static void warn_other_abi(const struct calltrace_sled_module *module) {
    static _Atomic int warned;
    if (atomic_exchange_explicit(&warned, 1, memory_order_relaxed)) return;
    Dl_info info;
    const char *name = dladdr(module->stubs[CALLTRACE_SLED_ENTER], &info) && info.dli_fname && info.dli_fname[0]
                           ? info.dli_fname : "a module";
    ct_warn("%s was built with sleds of another calltrace (sled ABI %u; this runtime's is %u): its functions are "
            "not traced; rebuild it with this checkout's calltrace-cc", name, module->abi, CALLTRACE_SLED_ABI);
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_register_sleds(struct calltrace_sled_module *module) {
    // Another thread may be setting the runtime up (a dlopen on a thread while the main thread's
    // first hook runs): it takes microseconds.
    for (int i = 0; !ct_runtime_init() && i < 100000; i++) sched_yield();
    if (atomic_load_explicit(&ct_rt.init, memory_order_acquire) != CT_INIT_DONE || !ct_rt.enabled) return;
    pthread_once(&prepared, prepare_once);
    if (module && module->abi != CALLTRACE_SLED_ABI) {
        warn_other_abi(module);
        return;
    }
    if (ct_sled_table_add(module, handlers) == 0) return;
    ct_runtime_note_instrument(CT_INSTRUMENT_SLEDS);
    ct_sled_table_to_header(ct_header_get());
    ct_start_note_early_sleds();
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_unregister_sleds(struct calltrace_sled_module *module) {
    if (module && module->runtime_private) ct_sled_table_remove(module);
}
