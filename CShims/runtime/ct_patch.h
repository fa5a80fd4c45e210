// Run-time patching of -finstrument-functions hook call sites (x86-64), for adaptive muting.
//
// Only the drain thread calls these. A site is an instruction that calls or jumps to one of the
// hooks; it is patched only after its bytes have been read and matched exactly (the opcode, and a
// target that is the hook itself or a PLT stub or GOT slot leading to it), and with one atomic
// store that leaves every instruction another thread may be running whole (ct_patch.c).
#ifndef CT_PATCH_H
#define CT_PATCH_H

#include "ct_maps.h"

enum ct_site_kind {
    CT_SITE_NONE = 0,
    CT_SITE_ENTER_CALL,     // a call of the enter hook: becomes a short jump over itself
    CT_SITE_EXIT_CALL,      // a call of the exit hook: the same
    CT_SITE_EXIT_TAIL,      // gcc's tail jump to the exit hook (void functions): becomes `ret`
};

enum ct_patch_result {
    CT_PATCHED = 0,
    CT_PATCH_ALREADY,       // the site already holds the patch
    CT_PATCH_UNVERIFIED,    // its bytes are not a call or jump to the hook: left alone
    CT_PATCH_PROTECTED,     // mprotect refused (a W^X policy) or the page is not a file's text
};

// Addresses are checked against a snapshot of /proc/self/maps taken before the batch (ct_maps.h).

// The call instruction that returned to `ra` (a hook's return address), if it is a verified call
// of the enter hook (`enter`) or exit hook: its address and kind, else 0.
uintptr_t ct_patch_call_before(const struct ct_maps *m, uintptr_t ra, bool enter);

// Finds the tail jumps to the exit hook inside function `fn`'s own body, whose bounds come from
// the module's symbol table (none without one). Returns how many were stored in `out` (at most `max`).
int ct_patch_find_tail_jumps(const struct ct_maps *m, uintptr_t fn, uintptr_t *out, int max);

// Patches one site of `kind`, verified again byte for byte just before the store.
enum ct_patch_result ct_patch_site(const struct ct_maps *m, uintptr_t site, enum ct_site_kind kind);

// After a batch, every thread of the process must serialise its instruction stream, so that none
// goes on running a stale copy of a patched instruction: ct_runtime_sync_cores.

// Code must not be unmapped while the drain thread reads and patches it (a read of an unloaded
// module's text would fault, an mprotect would hit whatever was mapped there next): the drain
// thread holds this from its /proc/self/maps snapshot to the end of its batch, and the dlclose
// wrapper around the real dlclose. Recursive: a library's destructor may dlclose another.
void ct_patch_hold_code(void);
void ct_patch_release_code(void);
// In a fork child: the lock may have been held by a thread the child does not have.
void ct_patch_after_fork(void);

#endif
