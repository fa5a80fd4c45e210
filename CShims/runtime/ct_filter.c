// CALLTRACE_FILTER: which functions are recorded, chosen without a rebuild (see ct_filter.h).
//
// Names to addresses, once per process image, at trace open: the patterns are matched against the
// function symbols of every loaded module built with -finstrument-functions (it imports the enter
// hook) or with sleds (it has their table), as `report` prints them: a C++ symbol (_Z...) is
// demangled (libiberty's demangler, linked into the runtime: a C++ program built with sleds need
// not load libstdc++), without gcc's clone suffix (`[clone .isra.0]`, `.constprop.0`: a build
// with sleds times those copies, which `report` names as the function they copy), and matched
// both whole ("ns::Klass::method(int)") and without its parameters ("ns::Klass::method"); every
// name also raw, and raw without a clone suffix. A fork child keeps its parent's result
// (the same code, patched the same way); an exec starts again from the setting.
//
// Why at open and not at the drain thread's first pass: an excluded function must not push one
// frame (its calls would be recorded, and its exit hooks would have to wait for the open calls to
// end, as a muted function's do); an included function must count from its first call. At open the
// program's own code has not run yet (the runtime's constructor runs before the program's), so both
// hold without waiting. The excluded functions' sites are then patched out at the drain thread's
// pass after their first call (ct_mute_exclude): the sites a call came from are exactly the ones
// that pass the function (gcc's inlined copies in other functions too, which no scan of its own
// body finds, while its body holds the calls of the callees gcc inlined into it, which must stay).
// Modules loaded later (dlopen) are matched when the drain thread first sees them (late_modules).
// The included calls open on a thread follow its frames, so a longjmp or an exception out of one
// ends it as it ends the frames (ct_filter_skips).
#include "ct_filter.h"
#include "ct_elf.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_mute.h"
#include "ct_overhead.h"
#include "ct_proc.h"
#include "ct_runtime.h"
#include "ct_thread.h"
#include "ct_writer.h"
#include "ct_log.h"

#include <fnmatch.h>
#include <libiberty/demangle.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CT_FILTER_PATTERNS 32
#define CT_FILTER_EXCLUDED 4096u          // functions excluded at most (the rest: warned about)
#define CT_FILTER_INCLUDED_SLOTS 8192u    // the included functions' set (open addressing)

struct pattern {
    char text[256];
    bool exclude;
    uint64_t matched;
};

static struct pattern patterns[CT_FILTER_PATTERNS];
static int pattern_count;
static uintptr_t excluded_fns[CT_FILTER_EXCLUDED];
static uint32_t excluded_count, excluded_lost;
static _Atomic uintptr_t included[CT_FILTER_INCLUDED_SLOTS];
static uint32_t included_count, included_lost;
static bool resolved;
// The modules matched so far (their load bias and a hash of their name), so that each is matched once,
// and the loader's load count at the last look (the drain thread's, after open).
#define CT_FILTER_MODULES 1024u
static struct seen_module { uintptr_t base; uint64_t name; } seen_modules[CT_FILTER_MODULES];
static uint32_t seen_count;
static unsigned long long seen_adds;
// Set once the patterns are applied: the drain thread (which may already run) writes the record then.
static _Atomic bool applied;
// The depth of this thread's outermost open included call (its frame's index + 1), 0 when none is
// open: calls are recorded while the thread's depth is at least that. Derived from the depth rather
// than counted, so that it follows the frames however they end (ct_filter_skips).
static CT_TLS uint64_t included_at;


CT_NO_INSTRUMENT static uint64_t slot_of(uintptr_t fn) { return ((uint64_t)fn * 0x9E3779B97F4A7C15ull) >> 40; }

CT_NO_INSTRUMENT static bool is_included(uintptr_t fn) {
    for (uint64_t i = slot_of(fn), n = 0; n < CT_FILTER_INCLUDED_SLOTS; i++, n++) {
        uintptr_t v = atomic_load_explicit(&included[i & (CT_FILTER_INCLUDED_SLOTS - 1)], memory_order_relaxed);
        if (v == fn) return true;
        if (v == 0) return false;
    }
    return false;
}

CT_NO_INSTRUMENT static void include(uintptr_t fn) {
    if (included_count + 1 >= CT_FILTER_INCLUDED_SLOTS / 2) {
        included_lost++;
        return;
    }
    for (uint64_t i = slot_of(fn);; i++) {
        _Atomic uintptr_t *slot = &included[i & (CT_FILTER_INCLUDED_SLOTS - 1)];
        uintptr_t v = atomic_load_explicit(slot, memory_order_relaxed);
        if (v == fn) return;
        if (v == 0) {
            atomic_store_explicit(slot, fn, memory_order_relaxed);
            included_count++;
            return;
        }
    }
}

CT_NO_INSTRUMENT static void exclude(uintptr_t fn) {
    for (uint32_t i = 0; i < excluded_count; i++)
        if (excluded_fns[i] == fn) return; // .symtab and aliases name one address more than once
    if (excluded_count < CT_FILTER_EXCLUDED) excluded_fns[excluded_count++] = fn;
    else excluded_lost++;
}

// Splits the setting into patterns (ct_parse_filter_setting checked it).
CT_NO_INSTRUMENT static void parse(const char *spec) {
    const char *p = spec;
    while (*p && pattern_count < CT_FILTER_PATTERNS) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        while (p < end && *p == ' ') p++;
        const char *q = end;
        while (q > p && q[-1] == ' ') q--;
        struct pattern *pat = &patterns[pattern_count];
        pat->exclude = p < q && *p == '-';
        if (pat->exclude) p++;
        size_t n = (size_t)(q - p);
        if (n > 0 && n < sizeof pat->text) {
            memcpy(pat->text, p, n);
            pat->text[n] = '\0';
            pattern_count++;
        } else if (n > 0) {
            ct_warn("CALLTRACE_FILTER: pattern '%.*s...' is longer than 255 bytes; ignored", 40, p);
        }
        if (!*end) break;
        p = end + 1;
    }
    if (*p && pattern_count == CT_FILTER_PATTERNS)
        ct_warn("CALLTRACE_FILTER: more than %d patterns; the rest are ignored", CT_FILTER_PATTERNS);
}

// Names longer than this are matched raw only: the demangler's work space is on the stack, and
// grows with the name.
#define CT_FILTER_NAME_MAX 1024

struct module_walk {
    uintptr_t bias;
};

CT_NO_INSTRUMENT static bool matches(const char *pattern, const char *name) { return fnmatch(pattern, name, 0) == 0; }

// The demangler's output, written piece by piece into a fixed buffer (no allocation).
struct demangled {
    char text[CT_FILTER_NAME_MAX];
    size_t length;
    bool overflow;
};

CT_NO_INSTRUMENT static void append(const char *piece, size_t n, void *context) {
    struct demangled *d = context;
    if (d->overflow || d->length + n >= sizeof d->text) {
        d->overflow = true;
        return;
    }
    memcpy(d->text + d->length, piece, n);
    d->length += n;
    d->text[d->length] = '\0';
}

// `name` without gcc's clone suffixes, into `out` ("f.constprop.0.isra.0" is "f"; a C++ name's
// demangled " [clone .isra.0]"); false when it has none.
CT_NO_INSTRUMENT static bool without_clone_suffix(const char *name, char *out, size_t size) {
    const char *clone = strstr(name, " [clone .");
    const char *dot = clone ? clone : strchr(name, '.');
    if (!dot || dot == name || (size_t)(dot - name) >= size) return false;
    if (!clone) {
        static const char *const kinds[] = { "constprop", "isra", "part", "lto_priv", "localalias", "cold", "clone" };
        bool kind_seen = false;
        for (const char *p = dot; *p;) {
            p++; // the dot
            size_t n = strcspn(p, ".");
            bool kind = false, digits = n > 0;
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
                if (strlen(kinds[k]) == n && memcmp(kinds[k], p, n) == 0) kind = true;
            for (size_t k = 0; k < n; k++) digits &= p[k] >= '0' && p[k] <= '9';
            if (!kind && !(digits && kind_seen)) return false;
            kind_seen |= kind;
            p += n;
        }
    }
    memcpy(out, name, (size_t)(dot - name));
    out[dot - name] = '\0';
    return true;
}

CT_NO_INSTRUMENT static void visit(const char *name, uint64_t value, void *context) {
    struct module_walk *w = context;
    struct demangled d = { .length = 0 };
    char *plain = NULL;
    if (name[0] == '_' && name[1] == 'Z' && strlen(name) < CT_FILTER_NAME_MAX &&
        cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_ANSI, append, &d) && !d.overflow && d.length) {
        plain = d.text;
        char *clone = strstr(plain, " [clone .");
        if (clone) *clone = '\0';
    }
    char bare[CT_FILTER_NAME_MAX];
    bool has_bare = !plain && without_clone_suffix(name, bare, sizeof bare);
    for (int i = 0; i < pattern_count; i++) {
        struct pattern *pat = &patterns[i];
        bool hit = matches(pat->text, name) || (has_bare && matches(pat->text, bare));
        if (!hit && plain) {
            hit = matches(pat->text, plain);
            // Without its parameters too: "ns::Klass::method" matches "ns::Klass::method(int)".
            char *paren = hit ? NULL : strchr(plain, '(');
            if (paren && paren != plain) {
                *paren = '\0';
                hit = matches(pat->text, plain);
                *paren = '(';
            }
        }
        if (!hit) continue;
        pat->matched++;
        if (pat->exclude) exclude(w->bias + value);
        else include(w->bias + value);
    }
}

// True the first time a module is visited (open's walk or a later one).
CT_NO_INSTRUMENT static bool first_visit(const struct dl_phdr_info *info) {
    // Its load bias and name: another library loaded where an unloaded one was has another name;
    // the same one loaded there again has its functions where they were (matched already).
    uint64_t name = 1469598103934665603ull; // FNV-1a
    for (const char *p = info->dlpi_name; p && *p; p++) name = (name ^ (uint8_t)*p) * 1099511628211ull;
    for (uint32_t i = 0; i < seen_count; i++)
        if (seen_modules[i].base == info->dlpi_addr && seen_modules[i].name == name) return false;
    if (seen_count < CT_FILTER_MODULES) seen_modules[seen_count++] = (struct seen_module){ info->dlpi_addr, name };
    return true;
}

CT_NO_INSTRUMENT static int visit_module(struct dl_phdr_info *info, size_t size, void *context) {
    struct module_walk *w = context;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) seen_adds = info->dlpi_adds;
    if (!first_visit(info)) return 0;
    char self[4096];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        // The program itself.
        if (!ct_proc_program_path(self, sizeof self)) return 0;
        path = self;
    }
    // The program's ELF file, never the vDSO (no file, no '/' in its name). A library loaded by a
    // relative path ("./plugin.so") is named as the kernel maps it: opened by that path it would be
    // looked for from the drain thread's directory, a copy of the program's from when the trace
    // opened (ct_drain.c), and could be another file of that name.
    if (!strchr(path, '/')) return 0;
    if (path[0] != '/') {
        uint64_t lo = 0;
        for (int i = 0; i < info->dlpi_phnum && !lo; i++)
            if (info->dlpi_phdr[i].p_type == PT_LOAD) lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
        if (!lo || !ct_proc_mapped_path(lo, self, sizeof self)) return 0;
        path = self;
    }
    // Only instrumented modules: a pattern that matched only libc's functions matched nothing
    // that is recorded.
    bool instrumented = false;
    w->bias = info->dlpi_addr;
    ct_elf_each_function(path, &instrumented, visit, w);
    return 0;
}

CT_NO_INSTRUMENT static void resolve(void) {
    parse(ct_rt.settings.filter);
    if (pattern_count == 0) return;
    struct module_walk w = { 0 };
    dl_iterate_phdr(visit_module, &w);
    for (int i = 0; i < pattern_count; i++)
        if (patterns[i].matched == 0)
            ct_warn("CALLTRACE_FILTER: '%s%s' matches no function of the program; ignored (unless it matches one "
                    "of a library loaded later with dlopen)",
                    patterns[i].exclude ? "-" : "", patterns[i].text);
    if (excluded_lost || included_lost)
        ct_warn("CALLTRACE_FILTER: more functions matched than the filter keeps (%u excluded, %u included not "
                "applied)", excluded_lost, included_lost);
    size_t taken = excluded_count ? ct_mute_exclude(excluded_fns, excluded_count, false) : 0;
    if (taken < excluded_count)
        ct_warn("CALLTRACE_FILTER: %zu excluded functions could not be taken out (muting's table is full there); "
                "they are recorded", excluded_count - taken);
    if (included_count) atomic_fetch_or_explicit(&ct_mute_filter_on, CT_SKIP_INCLUDED, memory_order_release);
}

CT_NO_INSTRUMENT static int read_adds(struct dl_phdr_info *info, size_t size, void *data) {
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)data = info->dlpi_adds;
    return 1; // the same in every entry
}

// Modules loaded after open (dlopen), from the drain thread's pass: when the loader's load count
// moved, the modules not matched yet are matched as open's were. There is a window: the program's
// calls of a new module's functions before this pass (its constructors, run inside dlopen, and
// whatever it calls in the 1-8 ms until the next pass) are treated as if the filter did not name
// them: an excluded function's calls are timed (recorded if they reach the threshold and are
// inside an included call, or nothing is included), an included function's calls do not start
// recording; a call of an excluded function still open at the match ends through its exit hook
// (its exits go once no call of it is open, as a muted function's: ct_mute_exclude). No pattern
// warns that it matches nothing here: one that matched nothing at open warned then (ct_warn), and
// one that matches a module loaded later starts working then. The first included function found
// this way turns inclusion on: from then on every thread records only inside included calls; the
// calls already open then have frames, and their exits pop them (ct_filter_skips), so they are
// recorded, holding whatever included calls they made. The FILTER record keeps open's counts.
CT_NO_INSTRUMENT static void late_modules(void) {
    if (!ct_meta_loader_trusted()) return; // a fork child's loader may be locked for ever
    unsigned long long adds = 0;
    dl_iterate_phdr(read_adds, &adds);
    if (adds == seen_adds) return;
    uint32_t excluded_before = excluded_count, included_before = included_count;
    uint32_t lost_before = excluded_lost + included_lost;
    struct module_walk w = { 0 };
    dl_iterate_phdr(visit_module, &w);
    seen_adds = adds;
    if (excluded_lost + included_lost > lost_before)
        ct_warn("CALLTRACE_FILTER: more functions matched than the filter keeps (%u excluded, %u included not "
                "applied, with a library loaded later)", excluded_lost, included_lost);
    if (excluded_count > excluded_before) {
        size_t n = excluded_count - excluded_before;
        size_t taken = ct_mute_exclude(excluded_fns + excluded_before, n, true);
        if (taken < n)
            ct_warn("CALLTRACE_FILTER: %zu excluded functions of a library loaded later could not be taken out "
                    "(muting's table is full there); they are recorded", n - taken);
    }
    if (included_count > included_before && included_before == 0)
        atomic_fetch_or_explicit(&ct_mute_filter_on, CT_SKIP_INCLUDED, memory_order_release);
}

// Inclusion follows the thread's frames, not a count of hooks: a longjmp or an exception out of an
// included call runs no exit hook for it, and a count would stay too high for ever (every later call
// on the thread recorded). The included call ends when the depth falls beneath its own, however that
// happens: its exit pops it; frames a jump skipped are closed by the hooks (ct_hooks.c, "Skipped
// frames") at the next call or exit beneath them. The one case this check cannot see is the first
// call after such a jump: the skipped frames are still on the stack until that very call's enter
// hook settles them, after this check. So the call is let through, and the hook asks again once it
// has closed them (ct_filter_settled). An included call entered from outside takes the depth it is
// about to be pushed at, which that settling may lower (ct_filter_settled sets it again then).
// A signal handler whose instrumented calls run in the few instructions between this check and that
// push sees the depth still beneath it and ends inclusion: that one included call's callees are not
// recorded (its own exit still pops it). Bounded and rare; a count kept in step with the push would
// need the hot path's help.
// The overhead calibration's own functions are never outside: they time the real hooks, and a
// skipped call would make the calibrated cost that of this check (every recorded call's cost wrong).
CT_NO_INSTRUMENT bool ct_filter_skips(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site) {
    if (ct_mute_skips_muted(fn, exit, caller_sp, site)) return true;
    if (CT_UNLIKELY(atomic_load_explicit(&ct_overhead_running, memory_order_relaxed)) && ct_overhead_is_calibration(fn))
        return false;
    uint64_t depth = ct_self.depth;
    if (included_at > depth) included_at = 0; // the outermost included call ended
    if (included_at) return false;
    if (is_included(fn)) {
        if (!exit) included_at = depth + 1;
        return false;
    }
    // Outside: skipped, but for the exit of a call whose frame is on top. Such a frame was pushed
    // before inclusion was on (it came with a library loaded later: late_modules), and is popped.
    return !exit || depth == 0 || depth > ct_self.cap || ct_self.frames[depth - 1].fn != fn;
}

CT_NO_INSTRUMENT bool ct_filter_settled(uintptr_t fn, uint64_t live) {
    if (included_at == 0 || included_at <= live) return false; // still inside it
    if (is_included(fn)) {
        included_at = live + 1; // this call, pushed at its settled depth, is the outermost one now
        return false;
    }
    included_at = 0;
    return true;
}

CT_NO_INSTRUMENT static void open_trace(struct ct_file_header *h) {
    (void)h;
    if (resolved || !ct_rt.settings.filter[0]) return;
    resolved = true;
    resolve();
    atomic_store_explicit(&applied, true, memory_order_release);
}

// The FILTER record, once in each trace (a fork child's too), and modules loaded later, from the
// drain thread; at the latest when it stops (a fork child that exits before the drain thread's
// first pass in it still names its filter).
CT_NO_INSTRUMENT static void pass(void) {
    static struct ct_file_header *written_for;
    static uint64_t written_pid;
    if (!ct_rt.settings.filter[0] || !atomic_load_explicit(&applied, memory_order_acquire)) return;
    if (pattern_count) late_modules();
    struct ct_file_header *h = ct_header_get();
    if (!h || (h == written_for && h->pid == written_pid)) return;
    written_for = h;
    written_pid = h->pid;
    struct ct_body b = { 0 };
    ct_body_bytes(&b, ct_rt.settings.filter, strlen(ct_rt.settings.filter));
    ct_body_varint(&b, excluded_count);
    ct_body_varint(&b, included_count);
    ct_meta_write(CT_REC_FILTER, &b);
}

const struct ct_feature ct_filter_feature = {
    .name = "filter",
    .open = open_trace,
    .pass = pass,
    .stop = pass,
};
