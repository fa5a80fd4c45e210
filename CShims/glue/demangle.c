#include "calltrace_glue.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

// libiberty's cplus_demangle in its auto style tries Rust first, then the C++ ABI:
// legacy Rust names are valid C++ names too, and only the Rust demangler knows to drop the
// `::h<hash>` suffix (it keeps it with DMGL_VERBOSE). DMGL_PARAMS|DMGL_ANSI give the
// parameter list and its qualifiers, as c++filt prints them. Not DMGL_TYPES: a name such as
// `i` must not become `int`.
char *ct_demangle(const char *mangled) {
    if (mangled == NULL) return NULL;
    return cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

void ct_demangle_free(char *demangled) { free(demangled); }
