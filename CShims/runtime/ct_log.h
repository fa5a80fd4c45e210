// The runtime's only output: one-line warnings on stderr, when a setting is bad or the trace cannot
// be written. When all is well the runtime prints nothing, so the traced program's output is its own.
#ifndef CT_LOG_H
#define CT_LOG_H

#include "ct_base.h"

void ct_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
