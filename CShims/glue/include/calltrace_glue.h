#ifndef CALLTRACE_GLUE_H
#define CALLTRACE_GLUE_H

#include <stddef.h>
#include <stdint.h>

// C helpers for the Swift side of calltrace. This target is never built with
// -finstrument-functions: it runs in the `calltrace` tool, not in traced programs.

#ifdef __cplusplus
extern "C" {
#endif

/// Demangles an Itanium C++ ABI name (`_Z...`) or a Rust name, legacy (`_ZN...17h<hash>E`,
/// shown without its hash) or v0 (`_R...`), with libiberty's demangler (the one c++filt and
/// gdb use). Returns a malloc'd string that the caller releases with `ct_demangle_free`, or
/// NULL if `mangled` is none of those (or is NULL, or memory ran out).
char *ct_demangle(const char *mangled);

/// Releases a string returned by `ct_demangle` or `swift_demangle`. NULL is allowed.
void ct_demangle_free(char *demangled);

/// The Swift runtime's demangler (exported by libswiftCore, which every Swift program links):
/// with `out` NULL and `flags` 0 it returns a malloc'd string, or NULL when `mangled` (`len`
/// bytes) is not a Swift name.
char *swift_demangle(const char *mangled, size_t len, char *out, size_t *outlen, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif
