#include "ct_log.h"

#include "ct_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

// Formats into a stack buffer and writes it with one write(2): no stdio buffering shared with the
// program, and no interleaving with its own stderr lines.
CT_NO_INSTRUMENT void ct_warn(const char *fmt, ...) {
    char line[1024];
    int n = snprintf(line, sizeof line, "calltrace: warning: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    n += m;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
}
