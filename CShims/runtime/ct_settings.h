#ifndef CT_SETTINGS_H
#define CT_SETTINGS_H

#include "ct_base.h"

enum ct_threads_mode { CT_THREADS_MAIN = 0, CT_THREADS_ALL = 1 };

struct ct_settings {
    uint64_t threshold;   // ns
    char output[4096];    // path template, %p not yet expanded
    uint32_t threads;     // enum ct_threads_mode
    uint64_t max_depth;   // frames
    uint64_t buffer;      // bytes
    bool any_set;         // some CALLTRACE_* variable of the table is set: the runtime records
};

// Reads the CALLTRACE_* variables. An invalid value prints one warning naming the variable and the
// default is used instead.
void ct_settings_load(struct ct_settings *s);

// Shared with tests of the parser: 1 on success.
int ct_parse_duration(const char *text, uint64_t *ns);
int ct_parse_size(const char *text, uint64_t *bytes);

#endif
