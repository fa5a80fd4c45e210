#include "calltrace_glue.h"

#include <stddef.h>
#include <stdlib.h>

// libstdc++'s demangler (<cxxabi.h> is C++ only, so declare it here). The
// target links libstdc++. With a NULL buffer it returns a malloc'd string.
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

char *ct_demangle(const char *mangled) {
    if (mangled == NULL) return NULL;
    int status = 0;
    char *out = __cxa_demangle(mangled, NULL, NULL, &status);
    if (status != 0) {
        free(out);  // NULL on every failure status, but cheap insurance
        return NULL;
    }
    return out;
}

void ct_demangle_free(char *demangled) { free(demangled); }
