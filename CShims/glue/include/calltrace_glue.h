#ifndef CALLTRACE_GLUE_H
#define CALLTRACE_GLUE_H

// C helpers for the Swift side of calltrace. This target is never built with
// -finstrument-functions: it runs in the `calltrace` tool, not in traced programs.

#ifdef __cplusplus
extern "C" {
#endif

/// Demangles an Itanium C++ ABI name (`_Z...`). Returns a malloc'd string that
/// the caller releases with `ct_demangle_free`, or NULL if `mangled` is not a
/// valid mangled name (or is NULL, or memory ran out).
char *ct_demangle(const char *mangled);

/// Releases a string returned by `ct_demangle`. NULL is allowed.
void ct_demangle_free(char *demangled);

#ifdef __cplusplus
}
#endif

#endif
