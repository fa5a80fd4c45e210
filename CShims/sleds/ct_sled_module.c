// One instrumented module's registration with the runtime (calltrace_sleds.h), linked into every
// executable and shared library built with sleds, next to its stubs (ct_sled_module.S).
//
// Its constructor runs before the module's other constructors (priority 101) and hands the
// runtime the module's sled table; its destructor, inside dlclose, takes it back before the code
// goes away. Both are weak references: without the runtime loaded nothing is registered and the
// sleds stay as the compiler left them. The table's bounds are the linker's __start_/__stop_
// symbols of the section, this module's own (hidden): each module registers its own table.
#include "calltrace_sleds.h"

extern const char __start_xray_instr_map[] __attribute__((weak, visibility("hidden")));
extern const char __stop_xray_instr_map[] __attribute__((weak, visibility("hidden")));
extern void calltrace_rt_register_sleds(struct calltrace_sled_module *) __attribute__((weak));
extern void calltrace_rt_unregister_sleds(struct calltrace_sled_module *) __attribute__((weak));

extern const char ct_sled_stub_enter[] __attribute__((visibility("hidden")));
extern const char ct_sled_stub_exit[] __attribute__((visibility("hidden")));
extern const char ct_sled_stub_tail[] __attribute__((visibility("hidden")));
extern void *ct_sled_targets[CALLTRACE_SLED_TARGETS] __attribute__((visibility("hidden")));

static struct calltrace_sled_module ct_sled_this_module = {
    .abi = CALLTRACE_SLED_ABI,
    .size = sizeof(struct calltrace_sled_module),
    .stubs = { ct_sled_stub_enter, ct_sled_stub_exit, ct_sled_stub_tail },
    .targets = ct_sled_targets,
};

__attribute__((constructor(101), no_instrument_function, used)) static void ct_sled_module_register(void) {
    if (!calltrace_rt_register_sleds || !__start_xray_instr_map || __start_xray_instr_map == __stop_xray_instr_map)
        return;
    ct_sled_this_module.map_begin = __start_xray_instr_map;
    ct_sled_this_module.map_end = __stop_xray_instr_map;
    calltrace_rt_register_sleds(&ct_sled_this_module);
}

__attribute__((destructor(101), no_instrument_function, used)) static void ct_sled_module_unregister(void) {
    if (calltrace_rt_unregister_sleds && ct_sled_this_module.map_begin)
        calltrace_rt_unregister_sleds(&ct_sled_this_module);
}
