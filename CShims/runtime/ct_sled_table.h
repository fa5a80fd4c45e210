// The sleds of every registered module (calltrace_sleds.h): their functions, the numbers the
// patched sleds push, and patching them in (timed) and out (muted). x86-64 only.
//
// A sled is patched only after its bytes have been matched exactly against what the compiler
// leaves (docs/design.md, "Sleds"), and every store that another thread may run across turns the
// first two bytes of a sled into those of the other form with one atomic store (sleds are 2-byte
// aligned, so it never straddles a cache line): a thread runs the old sled or the new one.
//
// Registration patches a new module's sleds in before any of its code has run (its constructor
// comes first); after that only the drain thread changes sleds (muting). The table has a lock of
// its own, taken inside the code lock where both are held (ct_sled_table.c says why).
#ifndef CT_SLED_TABLE_H
#define CT_SLED_TABLE_H

#include "ct_base.h"
#include "../sleds/calltrace_sleds.h"

#include <stdatomic.h>

// What a patched sled pushes, to what it stands for. Function numbers (entry and exit sleds) and
// tail numbers (tail sleds) each count from 1; 0 is none. Entries are written before the sleds
// that push them are patched, and never change after.
struct ct_sled_tail {
    uintptr_t fn;           // the function the tail call leaves
    uint32_t fn_number;     // and its function number
    uintptr_t target;       // the function it jumps to when the jump's target is fixed, else 0
    const uintptr_t *target_slot;   // or the GOT slot that holds it (a PLT stub, -fno-plt)
    // Or an indirect jump: through register `reg` (its number in an instruction, 0 rax ... 15 r15),
    // to its value, or (`load`) to the word at its value plus `disp` (a vtable's slot). -1: none.
    int8_t reg;
    bool load;
    int32_t disp;
};
extern uintptr_t *ct_sled_fns;              // by function number
// By function number, CT_SLED_* bits: a recording thread has entered the function
// (ct_mute_passive_sample); its entry is muted. The second is set by the drain thread before the
// barrier that lets the function's exits go (ct_mute.c): an entry handler that was already running
// when its entry sled went checks it after its frame is published and takes the frame back
// (ct_stack_take_back), so no frame of a muted function outlives its exits.
enum { CT_SLED_ENTERED = 1u, CT_SLED_ENTRY_MUTED = 2u };
extern _Atomic uint8_t *ct_sled_flags;
// By function number: counted by level inside a recursion, and from which level on not timed
// (ct_mute_levels.h).
extern _Atomic uint16_t *ct_sled_levels;
extern struct ct_sled_tail *ct_sled_tails;  // by tail number
#define CT_SLED_MAX_FNS (1u << 22)
#define CT_SLED_MAX_TAILS (1u << 20)

CT_NO_INSTRUMENT static inline uintptr_t ct_sled_fn(uint32_t id) {
    return id < CT_SLED_MAX_FNS ? ct_sled_fns[id] : 0;
}
// Where tail call `tail` jumps, when the runtime can know, with the registers as its tail sled saw
// them (the tail stub's): the function a call entered right after it must be to be its tail
// callee. A GOT slot is read when that call enters (the loader fills it in on a PLT's first jump):
// *slot is set, and the target is 0.
CT_NO_INSTRUMENT static inline uintptr_t ct_sled_tail_target(const struct ct_sled_tail *tail, const uintptr_t *regs,
                                                            const uintptr_t **slot) {
    *slot = tail->target_slot;
    if (tail->reg < 0 || tail->reg == 4) return tail->target; // never through rsp: the stub moved it
    uintptr_t value = regs[tail->reg];
    return tail->load ? *(const uintptr_t *)(value + (uintptr_t)(intptr_t)tail->disp) : value;
}

// A module's constructor hands over its table (calltrace_rt_register_sleds). Records the module,
// numbers its functions, points its stubs at `handlers` and patches every sled in. Returns how many
// functions it has (0 when the table could not be read).
uint32_t ct_sled_table_add(struct calltrace_sled_module *module, const void *const handlers[CALLTRACE_SLED_TARGETS]);
// Its destructor (inside dlclose): the module's code is going away; nothing of it is patched
// again. The numbers stay taken (a sled of it that still runs, in a destructor, finds its function).
void ct_sled_table_remove(struct calltrace_sled_module *module);

// Kinds of sleds, as bits: entry, exit (the function's returns) and tail (its tail calls).
enum { CT_SLED_ENTRY_BIT = 1u, CT_SLED_EXIT_BIT = 2u, CT_SLED_TAIL_BIT = 4u, CT_SLED_EXIT_BITS = 6u };

// Is `fn` a registered function with sleds?
bool ct_sled_table_has(uintptr_t fn);
// Is `addr` in the code of a module that registered sleds? Lock-free, for the sleds' slow paths: a
// call whose return address is elsewhere (libc's start of a makecontext coroutine) was not made by
// an instrumented function. A module registering or going away meanwhile may be seen either way.
bool ct_sled_table_holds(uintptr_t addr);
// Patches `fn`'s sleds of `kinds` out (muted: `on` false) or in, on the drain thread (holding the
// code lock, so that no dlclose runs meanwhile). Returns how many sleds changed, or -1 when one could not be (the page's protection
// could not be changed: a W^X policy), in which case the caller falls back to the in-hook check.
int ct_sled_table_set(uintptr_t fn, unsigned kinds, bool on);
// Sets `fn`'s CT_SLED_ENTRY_MUTED, if it has sleds (before its entry sled is patched out).
void ct_sled_table_mute_entry(uintptr_t fn);
// In a fork child: the table's lock is free (a thread of the parent may have held it).
void ct_sled_table_after_fork(void);

// Counters for the trace: functions registered with sleds, and functions whose sleds could not be
// patched in (their code's protection). Into the header (`sled_functions`, `sleds_unpatched`), at
// open and again as modules register later.
extern _Atomic uint32_t ct_sled_functions;
extern _Atomic uint32_t ct_sled_unpatched;
struct ct_file_header;
void ct_sled_table_to_header(struct ct_file_header *h);

#endif
