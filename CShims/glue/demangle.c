#include "calltrace_glue.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

// libiberty's demanglers, called directly (not through cplus_demangle, which would also pull in
// the D and Ada demanglers and libiberty's exit-on-failure xmalloc). Legacy Rust names are valid
// C++ names too, so Rust goes first, as in cplus_demangle's auto style: only the Rust demangler
// knows to drop the `::h<hash>` suffix (it keeps it with DMGL_VERBOSE), and it accepts a `_Z`
// name only when it ends in such a hash. DMGL_PARAMS|DMGL_ANSI give the parameter list and its
// qualifiers, as c++filt prints them. Not DMGL_TYPES: a name such as `i` must not become `int`.
char *ct_demangle(const char *mangled) {
    if (mangled == NULL) return NULL;
    const int options = DMGL_PARAMS | DMGL_ANSI;
    char *rust = rust_demangle(mangled, options);
    if (rust != NULL) return rust;
    return cplus_demangle_v3(mangled, options);
}

void ct_demangle_free(char *demangled) { free(demangled); }
