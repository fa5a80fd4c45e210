// Patching hook call sites out of running code (see ct_patch.h; the rule that picks the functions
// is in ct_mute.c).
//
// What a site looks like, and what it becomes. Each patch is one store that turns one whole
// instruction into another whole instruction, so a thread running the code at any moment runs
// either the old instruction or the new one (XRay patches its sleds the same way):
//   call hook             e8 rel32          ->  eb 03 (jmp over the remaining 3 bytes)
//   call *slot(%rip)      ff 15 disp32      ->  eb 04   (-fno-plt)
//   addr32 call hook      67 e8 rel32       ->  67 eb 03 (the e8 is patched: a 0x67 before it may
//                                                        belong to the instruction before)
//   jmp hook (gcc's tail call of the exit hook in a void function, after its epilogue)
//                         e9 rel32          ->  c3 (ret: what the hook's own ret would have done)
//   jmp *slot(%rip)       ff 25 disp32      ->  c3
// A tail jump never becomes a no-op: falling through would run whatever code follows it.
// Two-byte stores are atomic on x86-64 when they do not cross a cache line; where the jump would,
// one opcode byte is changed instead (ct_patch_site): the call becomes a compare of the same
// length. A skipped hook call changes nothing the program computes: the hooks return nothing and
// the compiler already treats the registers (and flags) a call clobbers as clobbered.
//
// A target "is the hook" when it is the hook's own address, a PLT stub (endbr64, bnd, then
// jmp *slot) whose GOT slot holds the hook's address, or (for the indirect forms) such a slot.
// Every address read is checked against /proc/self/maps first, and read by the kernel for us
// (process_vm_readv, `peek`), so neither a wrong guess nor a module the loader is mapping at that
// moment (its first mapping covers the whole length, past the file's end) can fault.
#include "ct_patch.h"
#include "ct_elf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

// Declared as ct_hooks.c defines them (exported): a hidden declaration here would hide them.
CT_EXPORT void __cyg_profile_func_enter(void *fn, void *site);
CT_EXPORT void __cyg_profile_func_exit(void *fn, void *site);

// Copies `len` bytes of the program's memory at `addr` into `out`: false where they cannot be read
// (unmapped, or a file mapping past the file's end), where a plain load would fault.
CT_NO_INSTRUMENT static bool peek(uintptr_t addr, void *out, size_t len) {
    struct iovec local = { out, len }, remote = { (void *)addr, len };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

// The target of a rel32 displacement held in `code` at `disp` (the instruction ends at `next`).
CT_NO_INSTRUMENT static uintptr_t rel32_target(uintptr_t next, const uint8_t *disp) {
    int32_t v;
    memcpy(&v, disp, 4);
    return next + (uintptr_t)(intptr_t)v;
}

// ---- Targets -----------------------------------------------------------------------------------

CT_NO_INSTRUMENT static uintptr_t hook_address(bool enter) {
    return enter ? (uintptr_t)&__cyg_profile_func_enter : (uintptr_t)&__cyg_profile_func_exit;
}

CT_NO_INSTRUMENT static bool slot_holds_hook(const struct ct_maps *m, uintptr_t slot, bool enter) {
    uintptr_t v;
    if (!ct_maps_readable(m, slot, sizeof(uintptr_t)) || !peek(slot, &v, sizeof v)) return false;
    return v == hook_address(enter);
}

// Is `target` the hook, or a PLT stub that jumps to it through its GOT slot?
CT_NO_INSTRUMENT static bool reaches_hook(const struct ct_maps *m, uintptr_t target, bool enter) {
    if (target == hook_address(enter)) return true;
    uint8_t code[16];
    if (!ct_maps_text(m, target, 16) || !peek(target, code, sizeof code)) return false;
    const uint8_t *p = code;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) p += 4; // endbr64 (.plt.sec)
    if (p[0] == 0xf2) p++;                                                   // bnd
    if (p[0] != 0xff || p[1] != 0x25) return false;                          // jmp *disp32(%rip)
    return slot_holds_hook(m, rel32_target(target + (uintptr_t)(p - code) + 6, p + 2), enter);
}

// ---- Finding sites -----------------------------------------------------------------------------

CT_NO_INSTRUMENT uintptr_t ct_patch_call_before(const struct ct_maps *m, uintptr_t ra, bool enter) {
#if !defined(__x86_64__)
    return 0; // the byte patterns are x86-64's: elsewhere every site is "unverified" (in-hook check)
#endif
    uint8_t code[6];
    if (!ct_maps_text(m, ra - 6, 6) || !peek(ra - 6, code, sizeof code)) return 0;
    const uint8_t *p = code + 6; // p[-k] is the byte at ra - k
    // A 0x67 before the e8 may be an addr32 prefix (a GOT call the linker relaxed) or the last byte
    // of the instruction before: the site is the e8 either way. `jmp +3` there ends at the return
    // address whether the CPU decodes it with the prefix (67 eb 03) or without (eb 03), and the
    // instruction before is never touched.
    if (p[-5] == 0xe8 && reaches_hook(m, rel32_target(ra, p - 4), enter)) return ra - 5;
    if (p[-6] == 0xff && p[-5] == 0x15 && slot_holds_hook(m, rel32_target(ra, p - 4), enter)) return ra - 6;
    return 0;
}

// The length of the call instruction at `site`, verified, or 0.
CT_NO_INSTRUMENT static int call_length(const struct ct_maps *m, uintptr_t site, bool enter) {
    uint8_t p[6];
    if (!ct_maps_text(m, site, 6) || !peek(site, p, sizeof p)) return 0;
    if (p[0] == 0xe8 && reaches_hook(m, rel32_target(site + 5, p + 1), enter)) return 5;
    if (p[0] == 0x67 && p[1] == 0xe8 && reaches_hook(m, rel32_target(site + 6, p + 2), enter)) return 6;
    if (p[0] == 0xff && p[1] == 0x15 && slot_holds_hook(m, rel32_target(site + 6, p + 2), enter)) return 6;
    return 0;
}

CT_NO_INSTRUMENT static bool is_tail_jump(const struct ct_maps *m, uintptr_t site) {
    uint8_t p[6];
    if (!ct_maps_text(m, site, 6) || !peek(site, p, sizeof p)) return false;
    if (p[0] == 0xe9) return reaches_hook(m, rel32_target(site + 5, p + 1), false);
    if (p[0] == 0xff && p[1] == 0x25) return slot_holds_hook(m, rel32_target(site + 6, p + 2), false);
    return false;
}

CT_NO_INSTRUMENT int ct_patch_find_tail_jumps(const struct ct_maps *m, uintptr_t fn, uintptr_t *out, int max) {
#if !defined(__x86_64__)
    return 0;
#endif
    const struct ct_map *e = ct_maps_find(m, fn);
    if (!e || !e->private_file || !(e->prot & PROT_EXEC)) return 0;
    uint64_t size = ct_elf_function_size(e, fn);
    if (size == 0 || size > (1u << 20) || fn + size > e->end) return 0;
    // Only the function's own body can tail-jump to its exit hook (an inlined copy never does:
    // its container's own exit follows it). A jump to the exit hook is the function's exit.
    uint8_t *body = malloc(size + 1);
    if (!body) return 0;
    int n = 0;
    if (peek(fn, body, size)) {
        body[size] = 0;
        for (uint64_t i = 0; i + 5 <= size && n < max; i++) {
            if ((body[i] == 0xe9 || (body[i] == 0xff && body[i + 1] == 0x25)) && is_tail_jump(m, fn + i)) out[n++] = fn + i;
        }
    }
    free(body);
    return n;
}

// ---- Patching ----------------------------------------------------------------------------------

// Makes [site, site + len) writable for one store, runs it, and restores the protection.
CT_NO_INSTRUMENT static bool store_in_text(const struct ct_maps *m, uintptr_t site, size_t len, uint16_t value) {
    const struct ct_map *e = ct_maps_text(m, site, len);
    if (!e || !e->private_file || (e->prot & PROT_WRITE)) return false;
    uintptr_t page = site & ~(uintptr_t)4095;
    size_t span = ((site + len - 1) & ~(uintptr_t)4095) + 4096 - page;
    if (page + span > e->end) return false;
    // Never writable without executable: other threads may be running this page right now.
    if (mprotect((void *)page, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
    if (len == 1) __atomic_store_n((uint8_t *)site, (uint8_t)value, __ATOMIC_RELEASE);
    else __atomic_store_n((uint16_t *)site, value, __ATOMIC_RELEASE);
    mprotect((void *)page, span, e->prot);
    return true;
}

CT_NO_INSTRUMENT enum ct_patch_result ct_patch_site(const struct ct_maps *m, uintptr_t site, enum ct_site_kind kind) {
    uint8_t b[6];
    if (!ct_maps_text(m, site, 6) || !peek(site, b, sizeof b)) return CT_PATCH_UNVERIFIED;
    if (kind == CT_SITE_EXIT_TAIL) {
        if (b[0] == 0xc3) return CT_PATCH_ALREADY;
        if (!is_tail_jump(m, site)) return CT_PATCH_UNVERIFIED;
        return store_in_text(m, site, 1, 0xc3) ? CT_PATCHED : CT_PATCH_PROTECTED;
    }
    if ((b[0] == 0xeb && (b[1] == 3 || b[1] == 4)) || b[0] == 0x3d || (b[0] == 0x67 && b[1] == 0x3d) ||
        (b[0] == 0x85 && b[1] == 0x15))
        return CT_PATCH_ALREADY;
    int len = call_length(m, site, kind == CT_SITE_ENTER_CALL);
    if (len == 0) return CT_PATCH_UNVERIFIED;
    if ((site & 63) != 63) {
        uint8_t jump[2] = { 0xeb, (uint8_t)(len - 2) };
        uint16_t value;
        memcpy(&value, jump, 2);
        return store_in_text(m, site, 2, value) ? CT_PATCHED : CT_PATCH_PROTECTED;
    }
    // The jump's two bytes would straddle a cache line, where a store is not atomic: change one
    // opcode byte instead, into an instruction of the same length that only sets the flags
    // (which a call clobbers anyway): e8 -> 3d (cmp $imm32,%eax), 67 e8 -> 67 3d, and
    // ff 15 -> 85 15 (test %edx,slot(%rip): it reads the GOT slot, which is mapped).
    if (b[0] == 0xe8) return store_in_text(m, site, 1, 0x3d) ? CT_PATCHED : CT_PATCH_PROTECTED;
    if (b[0] == 0x67) return store_in_text(m, site + 1, 1, 0x3d) ? CT_PATCHED : CT_PATCH_PROTECTED;
    return store_in_text(m, site, 1, 0x85) ? CT_PATCHED : CT_PATCH_PROTECTED;
}

static pthread_mutex_t code_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

CT_NO_INSTRUMENT void ct_patch_hold_code(void) { pthread_mutex_lock(&code_lock); }
CT_NO_INSTRUMENT void ct_patch_release_code(void) { pthread_mutex_unlock(&code_lock); }
CT_NO_INSTRUMENT void ct_patch_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    memcpy(&code_lock, &fresh, sizeof fresh);
}
