// The sleds of every registered module (see ct_sled_table.h).
//
// A sled, as the compiler leaves it and as the runtime patches it (11 bytes, 2-byte aligned):
//   entry, tail   eb 09 <9-byte nop>            ->  eb 03 <id24> e8 <rel32: stub> 90
//                 (jmp over the rest)               (jmp over the id, kept as data; call stub; nop)
//   exit          c3 <10 bytes never run>       ->  eb 03 <id24> e8 <rel32: stub> c3
//                 (the function's ret)              (the same, then the function's ret)
// A patched sled touches no register and never moves the stack pointer outside its one call, so
// the function's unwind table holds at each of its instructions (an earlier `push $id; call stub`
// left one where it did not, and an asynchronous cancel landing there crashed the unwinder), and
// each call returns where it was made, so the return predictions hold. Numbers take 24 bits: a
// sled numbered beyond (16.7 million functions and tail calls) is left as the compiler left it.
//   exit (gcc, return thunks)  eb 09 <9-byte nop>, before the return: patched as the ret form
// Patching in writes bytes 2-10 first (never run while the first two bytes jump over them or
// return), then the first two with one atomic store; patching out stores the first two bytes the
// compiler left. The version-2 no-op carries 0x200 in its displacement (older ones 0).
#include "ct_sled_table.h"
#include "ct_header.h"
#include "ct_patch.h"

#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CT_SLED_BYTES 11

uintptr_t *ct_sled_fns;
_Atomic uint8_t *ct_sled_flags;
_Atomic uint16_t *ct_sled_levels;
struct ct_sled_tail *ct_sled_tails;
_Atomic uint32_t ct_sled_functions;
_Atomic uint32_t ct_sled_unpatched;
static uint32_t next_fn = 1, next_tail = 1;

// An entry of the compiler's table (compiler-rt's XRaySledEntry). From version 2 on, both
// addresses are relative to the field that holds them.
struct xray_entry {
    int64_t address;
    int64_t function;
    uint8_t kind, always_instrument, version, padding[13];
};
_Static_assert(sizeof(struct xray_entry) == 32, "xray_instr_map entries are 32 bytes");
enum { XRAY_ENTRY = 0, XRAY_EXIT = 1, XRAY_TAIL = 2, XRAY_LOG_ARGS_ENTRY = 3 };

struct sled {
    uintptr_t addr;
    uint32_t number;        // what it pushes: its function's number, or (tail) its own
    uint8_t kind;           // XRAY_ENTRY, XRAY_EXIT, XRAY_TAIL
    uint8_t original[2];    // its first two bytes as the compiler left them
    bool on;
};

struct function {
    uintptr_t fn;
    uint32_t first, count;  // its sleds in the module's array
    uint32_t number;
};

struct module {
    struct calltrace_sled_module *desc;
    uintptr_t text_lo, text_hi;     // the loadable segment that holds the sleds
    int prot;
    struct sled *sleds;
    struct function *fns;
    uint32_t sled_count, fn_count;
    struct module *next;
};

static struct module *modules;

// The table's own lock, recursive. Not the code lock: a module registers from its constructor,
// inside dlopen with the loader's lock held, while the dlclose wrapper holds the code lock around
// the loader's, so registering under the code lock could deadlock against a dlclose on another
// thread. The order is code lock (muting's batch, dlclose), then the loader's, then this one.
static pthread_mutex_t table_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

// The registered modules' code, for ct_sled_table_holds: slots written under the table lock, `hi`
// last when one is filled and first when it is emptied, read without it.
#define CT_SLED_RANGES 1024
static struct { _Atomic uintptr_t lo, hi; } ranges[CT_SLED_RANGES];

// fn -> (module, index), open addressing, grown under the table lock (lookups hold it too).
struct slot {
    uintptr_t fn;
    struct module *m;
    uint32_t index;
};
static struct slot *by_fn;
static size_t by_fn_cap, by_fn_used;

CT_NO_INSTRUMENT static size_t hash(uintptr_t fn, size_t cap) {
    return (size_t)(((uint64_t)fn * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

CT_NO_INSTRUMENT static void by_fn_put(uintptr_t fn, struct module *m, uint32_t index) {
    size_t i = hash(fn, by_fn_cap);
    while (by_fn[i].fn && by_fn[i].fn != fn) i = (i + 1) & (by_fn_cap - 1);
    if (!by_fn[i].fn) by_fn_used++;
    by_fn[i] = (struct slot){ fn, m, index };
}

CT_NO_INSTRUMENT static bool by_fn_reserve(size_t more) {
    if ((by_fn_used + more) * 2 <= by_fn_cap) return true;
    size_t cap = by_fn_cap ? by_fn_cap : 1024;
    while ((by_fn_used + more) * 2 > cap) cap *= 2;
    struct slot *old = by_fn;
    size_t old_cap = by_fn_cap;
    by_fn = calloc(cap, sizeof *by_fn);
    if (!by_fn) {
        by_fn = old;
        return false;
    }
    by_fn_cap = cap;
    by_fn_used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].fn && old[i].m) by_fn_put(old[i].fn, old[i].m, old[i].index);
    free(old);
    return true;
}

CT_NO_INSTRUMENT static const struct slot *by_fn_find(uintptr_t fn) {
    if (!by_fn_cap) return NULL;
    for (size_t i = hash(fn, by_fn_cap); by_fn[i].fn; i = (i + 1) & (by_fn_cap - 1))
        if (by_fn[i].fn == fn) return by_fn[i].m ? &by_fn[i] : NULL;
    return NULL;
}

// ---- Reading a module's table ------------------------------------------------------------------

struct segment_query {
    uintptr_t addr;
    uintptr_t lo, hi;
    int prot;
};

CT_NO_INSTRUMENT static int find_segment(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct segment_query *q = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (q->addr < lo || q->addr >= hi) continue;
        q->lo = lo;
        q->hi = hi;
        q->prot = PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0) | (ph->p_flags & PF_W ? PROT_WRITE : 0);
        return 1;
    }
    return 0;
}

CT_NO_INSTRUMENT static bool is_nop9(const uint8_t *p) {
    static const uint8_t nop[9] = { 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x02, 0x00, 0x00 };
    return memcmp(p, nop, 6) == 0 && (p[6] == 0x02 || p[6] == 0x00) && p[7] == 0 && p[8] == 0;
}

// The bytes of an unpatched sled of this kind, exactly.
CT_NO_INSTRUMENT static bool unpatched(const uint8_t *p, uint8_t kind) {
    if (p[0] == 0xeb && p[1] == 0x09 && is_nop9(p + 2)) return true;               // entry, tail (and gcc's exit before a thunk)
    return kind == XRAY_EXIT && p[0] == 0xc3 && p[1] == 0x2e && is_nop9(p + 2);    // ret, then cs nopw
}

CT_NO_INSTRUMENT static bool in_text(const struct module *m, uintptr_t addr, size_t len) {
    return addr >= m->text_lo && addr + len <= m->text_hi;
}

// A PLT stub (endbr64, bnd, then jmp *slot(%rip)): its GOT slot, else NULL.
CT_NO_INSTRUMENT static const uintptr_t *plt_slot(const struct module *m, uintptr_t target) {
    if (!in_text(m, target, 16)) return NULL;
    const uint8_t *p = (const uint8_t *)target;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) p += 4;
    if (p[0] == 0xf2) p++;
    if (p[0] != 0xff || p[1] != 0x25) return NULL;
    int32_t disp;
    memcpy(&disp, p + 2, 4);
    return (const uintptr_t *)((uintptr_t)p + 6 + (intptr_t)disp);
}

// Where the tail call after a tail sled goes: the compilers put the jump right after the sled. A
// fixed target, a GOT slot, or a register (and maybe a displacement from it) read when it runs.
CT_NO_INSTRUMENT static void decode_tail(const struct module *m, uintptr_t jump, struct ct_sled_tail *tail) {
    tail->target = 0;
    tail->target_slot = NULL;
    tail->reg = -1;
    tail->load = false;
    tail->disp = 0;
    if (!in_text(m, jump, 8)) return;
    const uint8_t *p = (const uint8_t *)jump;
    if (p[0] == 0x3e) p++; // notrack (-fcf-protection's indirect jumps)
    int high = 0;          // REX.B: r8-r15
    if ((p[0] & 0xf0) == 0x40) {
        if (p[0] & 0x08) return; // REX.W on a jump: not one of these
        high = (p[0] & 1) ? 8 : 0;
        p++;
    }
    if (p[0] == 0xff && ((p[1] >> 3) & 7) == 4) {
        uint8_t mod = p[1] >> 6, rm = p[1] & 7;
        if (mod == 3) {                              // jmp *%reg
            tail->reg = (int8_t)(rm + high);
            return;
        }
        if (rm == 4 || (mod == 0 && rm == 5)) {
            if (mod == 0 && rm == 5 && !high) {
                int32_t rip;                         // jmp *disp32(%rip): a GOT slot
                memcpy(&rip, p + 2, 4);
                tail->target_slot = (const uintptr_t *)((uintptr_t)p + 6 + (uintptr_t)(intptr_t)rip);
            }
            return;                                  // a SIB form: not followed
        }
        tail->reg = (int8_t)(rm + high);             // jmp *disp(%reg)
        tail->load = true;
        if (mod == 1) tail->disp = (int8_t)p[2];
        else if (mod == 2) memcpy(&tail->disp, p + 2, 4);
        return;
    }
    if (p != (const uint8_t *)jump) return;          // prefixes on a direct jump: not one of ours
    int32_t disp;
    uintptr_t target = 0;
    if (p[0] == 0xe9) {
        memcpy(&disp, p + 1, 4);
        target = jump + 5 + (uintptr_t)(intptr_t)disp;
    } else if (p[0] == 0xeb) {
        target = jump + 2 + (uintptr_t)(intptr_t)(int8_t)p[1];
    }
    if (!target) return; // an indirect jump through a register: not known here
    tail->target_slot = plt_slot(m, target);
    if (!tail->target_slot) tail->target = target;
}

struct entry_ref {
    uintptr_t fn, addr;
    uint8_t kind;
};

CT_NO_INSTRUMENT static int by_fn_then_addr(const void *a, const void *b) {
    const struct entry_ref *x = a, *y = b;
    if (x->fn != y->fn) return x->fn < y->fn ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

// The tables a patched sled's number indexes: address space only (MAP_NORESERVE), touched as far as
// the numbers go.
CT_NO_INSTRUMENT static bool allocate_numbers(void) {
    if (ct_sled_fns) return true;
    const size_t sizes[4] = { CT_SLED_MAX_FNS * sizeof(uintptr_t), CT_SLED_MAX_TAILS * sizeof(struct ct_sled_tail),
                              CT_SLED_MAX_FNS, CT_SLED_MAX_FNS * sizeof(uint16_t) };
    void *tables[4];
    for (int i = 0; i < 4; i++) {
        tables[i] = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (tables[i] == MAP_FAILED) {
            while (i-- > 0) munmap(tables[i], sizes[i]);
            return false;
        }
    }
    ct_sled_tails = tables[1];
    ct_sled_flags = tables[2];
    ct_sled_levels = tables[3];
    ct_sled_fns = tables[0];
    return true;
}

// The module's entries as sleds grouped by function, each verified. False when nothing usable.
CT_NO_INSTRUMENT static bool read_table(struct module *m) {
    const struct xray_entry *begin = m->desc->map_begin, *end = m->desc->map_end;
    size_t n = (size_t)(end - begin);
    if (n == 0 || (uintptr_t)end < (uintptr_t)begin) return false;
    struct entry_ref *refs = malloc(n * sizeof *refs);
    if (!refs) return false;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const struct xray_entry *e = &begin[i];
        uintptr_t addr = e->version >= 2 ? (uintptr_t)&e->address + (uintptr_t)e->address : (uintptr_t)e->address;
        uintptr_t fn = e->version >= 2 ? (uintptr_t)&e->function + (uintptr_t)e->function : (uintptr_t)e->function;
        uint8_t kind = e->kind == XRAY_LOG_ARGS_ENTRY ? XRAY_ENTRY : e->kind;
        // Custom and typed event sleds (kinds 4, 5) are left as they are: a jump over themselves.
        if (kind > XRAY_TAIL) continue;
        if (!in_text(m, addr, CT_SLED_BYTES) || (addr & 63) == 63 || !unpatched((const uint8_t *)addr, kind)) continue;
        refs[kept++] = (struct entry_ref){ fn, addr, kind };
    }
    qsort(refs, kept, sizeof *refs, by_fn_then_addr);
    m->sleds = calloc(kept ? kept : 1, sizeof *m->sleds);
    m->fns = calloc(kept ? kept : 1, sizeof *m->fns);
    if (!m->sleds || !m->fns || !by_fn_reserve(kept)) {
        free(refs);
        return false;
    }
    for (size_t i = 0; i < kept; i++) {
        const struct entry_ref *r = &refs[i];
        if (i == 0 || r->fn != refs[i - 1].fn) {
            if (next_fn >= CT_SLED_MAX_FNS) break;
            m->fns[m->fn_count] = (struct function){ r->fn, m->sled_count, 0, next_fn };
            ct_sled_fns[next_fn] = r->fn;
            by_fn_put(r->fn, m, m->fn_count);
            m->fn_count++;
            next_fn++;
        }
        struct sled *s = &m->sleds[m->sled_count];
        s->addr = r->addr;
        s->kind = r->kind;
        memcpy(s->original, (const void *)r->addr, 2);
        s->number = next_fn - 1;
        if (r->kind == XRAY_TAIL) {
            if (next_tail >= CT_SLED_MAX_TAILS) continue; // left unpatched: the function's exits are its rets
            struct ct_sled_tail *t = &ct_sled_tails[next_tail];
            t->fn = r->fn;
            t->fn_number = next_fn - 1;
            decode_tail(m, r->addr + CT_SLED_BYTES, t);
            s->number = next_tail++;
        }
        m->fns[m->fn_count - 1].count++;
        m->sled_count++;
    }
    free(refs);
    return m->fn_count > 0;
}

// ---- Patching ----------------------------------------------------------------------------------

// Makes the pages of [lo, hi) writable (and still executable: other threads may be running them).
CT_NO_INSTRUMENT static bool open_text(const struct module *m, uintptr_t lo, uintptr_t hi) {
    uintptr_t page = lo & ~(uintptr_t)4095, end = (hi + 4095) & ~(uintptr_t)4095;
    return mprotect((void *)page, end - page, m->prot | PROT_WRITE) == 0;
}

CT_NO_INSTRUMENT static void close_text(const struct module *m, uintptr_t lo, uintptr_t hi) {
    uintptr_t page = lo & ~(uintptr_t)4095, end = (hi + 4095) & ~(uintptr_t)4095;
    mprotect((void *)page, end - page, m->prot);
}

CT_NO_INSTRUMENT static void store_sled(const struct module *m, struct sled *s, bool on) {
    if (s->on == on) return;
    uint8_t *p = (uint8_t *)s->addr;
    uint16_t first;
    if (on) {
        uint8_t code[CT_SLED_BYTES];
        int stub = s->kind == XRAY_EXIT ? CALLTRACE_SLED_EXIT : s->kind == XRAY_TAIL ? CALLTRACE_SLED_TAIL
                                                                                      : CALLTRACE_SLED_ENTER;
        if (s->number >= (1u << 24)) return; // the sled holds 24 bits of it
        // The call ends at byte 10 of the sled.
        int64_t rel = (int64_t)(uintptr_t)m->desc->stubs[stub] - (int64_t)(s->addr + CT_SLED_BYTES - 1);
        if (rel != (int32_t)rel) return; // the stub is out of reach (it never is: it is in the module)
        int32_t rel32 = (int32_t)rel;
        code[0] = 0xeb;
        code[1] = 0x03;
        code[2] = (uint8_t)s->number;
        code[3] = (uint8_t)(s->number >> 8);
        code[4] = (uint8_t)(s->number >> 16);
        code[5] = 0xe8;
        memcpy(&code[6], &rel32, 4);
        code[10] = s->kind == XRAY_EXIT ? 0xc3 : 0x90;
        memcpy(p + 2, code + 2, CT_SLED_BYTES - 2);
        memcpy(&first, code, 2);
    } else {
        memcpy(&first, s->original, 2);
    }
    __atomic_store_n((uint16_t *)p, first, __ATOMIC_RELEASE);
    s->on = on;
}

CT_NO_INSTRUMENT uint32_t ct_sled_table_add(struct calltrace_sled_module *desc,
                                            const void *const handlers[CALLTRACE_SLED_TARGETS]) {
#if !defined(__x86_64__)
    (void)desc;
    (void)handlers;
    return 0;
#else
    if (!desc || desc->abi != CALLTRACE_SLED_ABI || desc->size < sizeof *desc || !desc->targets) return 0;
    pthread_mutex_lock(&table_lock);
    uint32_t fns = 0;
    struct module *m = calloc(1, sizeof *m);
    struct segment_query q = { .addr = (uintptr_t)desc->stubs[CALLTRACE_SLED_ENTER] };
    if (m && allocate_numbers() && dl_iterate_phdr(find_segment, &q)) {
        m->desc = desc;
        m->text_lo = q.lo;
        m->text_hi = q.hi;
        m->prot = q.prot;
        if (read_table(m)) {
            for (int i = 0; i < CALLTRACE_SLED_TARGETS; i++) desc->targets[i] = (void *)handlers[i];
            uintptr_t lo = m->sleds[0].addr, hi = lo;
            for (uint32_t i = 0; i < m->sled_count; i++) {
                if (m->sleds[i].addr < lo) lo = m->sleds[i].addr;
                if (m->sleds[i].addr + CT_SLED_BYTES > hi) hi = m->sleds[i].addr + CT_SLED_BYTES;
            }
            fns = m->fn_count;
            if (open_text(m, lo, hi)) {
                for (uint32_t i = 0; i < m->sled_count; i++) store_sled(m, &m->sleds[i], true);
                close_text(m, lo, hi);
            } else {
                atomic_fetch_add_explicit(&ct_sled_unpatched, fns, memory_order_relaxed);
            }
            atomic_fetch_add_explicit(&ct_sled_functions, fns, memory_order_relaxed);
            desc->runtime_private = (uintptr_t)m;
            m->next = modules;
            modules = m;
            for (int i = 0; i < CT_SLED_RANGES; i++) {
                if (atomic_load_explicit(&ranges[i].hi, memory_order_relaxed)) continue;
                atomic_store_explicit(&ranges[i].lo, m->text_lo, memory_order_relaxed);
                atomic_store_explicit(&ranges[i].hi, m->text_hi, memory_order_release);
                break;
            }
            m = NULL;
        }
    }
    if (m) {
        free(m->sleds);
        free(m->fns);
        free(m);
    }
    pthread_mutex_unlock(&table_lock);
    return fns;
#endif
}

CT_NO_INSTRUMENT void ct_sled_table_remove(struct calltrace_sled_module *desc) {
    pthread_mutex_lock(&table_lock);
    for (struct module **p = &modules; *p; p = &(*p)->next) {
        struct module *m = *p;
        if (m->desc != desc) continue;
        *p = m->next;
        for (int i = 0; i < CT_SLED_RANGES; i++) {
            if (atomic_load_explicit(&ranges[i].hi, memory_order_relaxed) != m->text_hi ||
                atomic_load_explicit(&ranges[i].lo, memory_order_relaxed) != m->text_lo)
                continue;
            atomic_store_explicit(&ranges[i].hi, 0, memory_order_release);
            break;
        }
        // Its functions can no longer be found (a module loaded later at the same place has others).
        for (uint32_t i = 0; i < m->fn_count; i++) {
            size_t k = hash(m->fns[i].fn, by_fn_cap);
            while (by_fn[k].fn && by_fn[k].fn != m->fns[i].fn) k = (k + 1) & (by_fn_cap - 1);
            if (by_fn[k].fn && by_fn[k].m == m) by_fn[k].m = NULL; // a tombstone: keeps the probe chain whole
        }
        free(m->sleds);
        free(m->fns);
        free(m);
        break;
    }
    desc->runtime_private = 0;
    pthread_mutex_unlock(&table_lock);
}

CT_NO_INSTRUMENT bool ct_sled_table_has(uintptr_t fn) {
    pthread_mutex_lock(&table_lock);
    bool has = by_fn_find(fn) != NULL;
    pthread_mutex_unlock(&table_lock);
    return has;
}

CT_NO_INSTRUMENT void ct_sled_table_mute_entry(uintptr_t fn) {
    pthread_mutex_lock(&table_lock);
    const struct slot *at = by_fn_find(fn);
    if (at) atomic_fetch_or_explicit(&ct_sled_flags[at->m->fns[at->index].number], CT_SLED_ENTRY_MUTED, memory_order_release);
    pthread_mutex_unlock(&table_lock);
}

CT_NO_INSTRUMENT bool ct_sled_table_holds(uintptr_t addr) {
    for (int i = 0; i < CT_SLED_RANGES; i++) {
        uintptr_t hi = atomic_load_explicit(&ranges[i].hi, memory_order_acquire);
        if (hi && addr < hi && addr >= atomic_load_explicit(&ranges[i].lo, memory_order_relaxed)) return true;
    }
    return false;
}

CT_NO_INSTRUMENT static bool of_kinds(const struct sled *s, unsigned kinds) {
    unsigned bit = s->kind == XRAY_ENTRY ? CT_SLED_ENTRY_BIT : s->kind == XRAY_EXIT ? CT_SLED_EXIT_BIT : CT_SLED_TAIL_BIT;
    return (kinds & bit) != 0;
}

CT_NO_INSTRUMENT static int set_locked(uintptr_t fn, unsigned kinds, bool on) {
    const struct slot *at = by_fn_find(fn);
    if (!at) return 0;
    struct module *m = at->m;
    const struct function *f = &m->fns[at->index];
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (uint32_t i = f->first; i < f->first + f->count; i++) {
        const struct sled *s = &m->sleds[i];
        if (!of_kinds(s, kinds) || s->on == on) continue;
        if (s->addr < lo) lo = s->addr;
        if (s->addr + CT_SLED_BYTES > hi) hi = s->addr + CT_SLED_BYTES;
    }
    if (hi == 0) return 0;
    if (!open_text(m, lo, hi)) return -1;
    int changed = 0;
    for (uint32_t i = f->first; i < f->first + f->count; i++) {
        struct sled *s = &m->sleds[i];
        if (!of_kinds(s, kinds) || s->on == on) continue;
        store_sled(m, s, on);
        changed++;
    }
    close_text(m, lo, hi);
    return changed;
}

CT_NO_INSTRUMENT int ct_sled_table_set(uintptr_t fn, unsigned kinds, bool on) {
    pthread_mutex_lock(&table_lock);
    int changed = set_locked(fn, kinds, on);
    pthread_mutex_unlock(&table_lock);
    return changed;
}

CT_NO_INSTRUMENT void ct_sled_table_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    memcpy(&table_lock, &fresh, sizeof fresh);
}

CT_NO_INSTRUMENT void ct_sled_table_to_header(struct ct_file_header *h) {
    if (!h) return;
    atomic_store_explicit(&h->sled_functions, atomic_load_explicit(&ct_sled_functions, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&h->sleds_unpatched, atomic_load_explicit(&ct_sled_unpatched, memory_order_relaxed),
                          memory_order_relaxed);
}
