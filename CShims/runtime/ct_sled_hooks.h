// The sleds' handlers (calltrace_sleds.h): what a patched sled's stub calls with the number the
// sled pushed and the address of the function's return slot. ct_sled_hooks.c has their fast paths,
// which touch no vector register and save every other register they use; ct_sled_slow.c the rest,
// reached through ct_sled_vsave_call, which saves the vector state around it.
#ifndef CT_SLED_HOOKS_H
#define CT_SLED_HOOKS_H

#include "ct_base.h"

#define CT_SLED_HANDLER CT_NO_INSTRUMENT __attribute__((no_caller_saved_registers))

CT_SLED_HANDLER void ct_sled_enter(uint32_t fn_number, uintptr_t *slot);
CT_SLED_HANDLER void ct_sled_exit(uint32_t fn_number, uintptr_t *slot);
// The tail stub also passes the registers as the tail jump will see them (rax first).
CT_SLED_HANDLER void ct_sled_tail(uint32_t tail_number, uintptr_t *slot, const uintptr_t *regs);

// The slow paths (ct_sled_slow.c), each given the sled's number, the slot's address and the tick
// the fast path read at an exit (0: none read), or at a tail sled the registers.
void ct_sled_enter_slow(uintptr_t fn_number, uintptr_t slot, uintptr_t unused);
void ct_sled_exit_slow(uintptr_t fn_number, uintptr_t slot, uintptr_t now);
void ct_sled_tail_slow(uintptr_t tail_number, uintptr_t slot, uintptr_t regs);
// An exit or tail sled's turn to be a muting sample (ct_mute_sample), before its frame is popped:
// the function's number, its call site, its frame's `levels`.
void ct_sled_sample(uintptr_t fn_number, uintptr_t site, uintptr_t levels);
// An entry sled's turn to be a sample on a thread that does not record (ct_mute_passive_sample).
void ct_sled_passive_sample(uintptr_t fn_number, uintptr_t unused, uintptr_t unused2);
// Muting's word on a call that ended near the threshold (ct_mute_keeps, which counts it):
// `frame` points to its struct ct_frame, already off the stack; *(bool *)keeps gets the answer.
void ct_sled_keeps(uintptr_t frame, uintptr_t duration, uintptr_t keeps);
// A call the exit handler decided to record but could not write in place (a fresh block needed, a
// lane held): `call` points to its struct ct_call_record (ct_stream.h).
void ct_sled_write_call(uintptr_t call, uintptr_t unused, uintptr_t unused2);
// A calibration is due after a recorded call (ct_overhead_maybe_recalibrate), at tick `now`.
void ct_sled_recalibrate(uintptr_t now, uintptr_t unused, uintptr_t unused2);

// Calls `fn(a, b, c)` with every general register and the whole vector and x87 state (XSAVE)
// saved around it (ct_sled_stubs.S): the slow paths are ordinary C, and call libc.
__attribute__((no_caller_saved_registers)) void ct_sled_vsave_call(void (*fn)(uintptr_t, uintptr_t, uintptr_t),
                                                                   uintptr_t a, uintptr_t b, uintptr_t c);
// What ct_sled_vsave_call saves: XSAVE's requested-feature mask, the area's size and the
// instruction (0 FXSAVE, 1 XSAVE, 2 XSAVEC), set once from CPUID before any sled is patched.
extern uint64_t ct_sled_xsave_mask;
extern uint64_t ct_sled_xsave_size;
extern uint8_t ct_sled_xsave_kind;
void ct_sled_xsave_setup(void);

#endif
