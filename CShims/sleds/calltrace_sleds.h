// The sled ABI between an instrumented module and the calltrace runtime (docs/design.md, "Sleds").
//
// A module built with sleds (clang's XRay sleds, or gcc's from the calltrace plugin) carries the
// compiler's table of them (the `xray_instr_map` section: 32-byte entries, version 2, addresses
// relative to the entry) and, linked in by the compiler wrapper, one small object
// (ct_sled_module.S, ct_sled_module.c): three stubs within reach of a rel32 call from every sled,
// and a constructor that hands this descriptor to the runtime. The runtime patches the sleds to
// call the stubs (a jump over the id, kept as data, to `call stub`), and the stubs call the runtime's handlers through
// `targets`, which the runtime fills in. A module loaded into a process without the runtime, or
// with it but no setting, has its sleds left as they are: a two-byte jump over nine bytes at
// entry, the function's own `ret` at exit.
#ifndef CALLTRACE_SLEDS_H
#define CALLTRACE_SLEDS_H

#include <stdint.h>

#define CALLTRACE_SLED_ABI 2

// The handlers a stub calls: `id` is what the sled pushed (the runtime's number for its function,
// or for a tail sled), `slot` the stack word holding the function's return address.
enum { CALLTRACE_SLED_ENTER, CALLTRACE_SLED_EXIT, CALLTRACE_SLED_TAIL, CALLTRACE_SLED_TARGETS };

struct calltrace_sled_module {
    uint32_t abi;                   // CALLTRACE_SLED_ABI
    uint32_t size;                  // sizeof(struct calltrace_sled_module)
    const void *map_begin;          // the module's xray_instr_map
    const void *map_end;
    const void *stubs[CALLTRACE_SLED_TARGETS];   // what a patched sled calls (enter, tail) or jumps to (exit)
    void **targets;                 // the runtime's handlers, filled in at registration (CALLTRACE_SLED_TARGETS)
    uintptr_t runtime_private;      // the runtime's own (which module it registered this as)
};

// Exported by the runtime (weak references in the module object: a module without the runtime
// loaded leaves its sleds alone).
void calltrace_rt_register_sleds(struct calltrace_sled_module *module);
void calltrace_rt_unregister_sleds(struct calltrace_sled_module *module);

#endif
