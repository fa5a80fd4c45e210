// The runtime's settings as it reads them at start-up (the table is ct_settings.inc).
//
// This header is the runtime's view; calltrace_settings.h is the command line's view of the same
// table and parsers, so that `calltrace record` accepts exactly the values the runtime accepts.
#ifndef CT_SETTINGS_H
#define CT_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

enum ct_threads_mode { CT_THREADS_MAIN = 0, CT_THREADS_ALL = 1 };
enum ct_mute_mode { CT_MUTE_AUTO = 0, CT_MUTE_OFF = 1, CT_MUTE_HOOK = 2 };

struct ct_settings {
    uint64_t threshold;   // ns
    char output[4096];    // path template, %p not yet expanded
    uint32_t threads;     // enum ct_threads_mode
    uint64_t max_depth;   // frames
    uint64_t buffer;      // bytes
    uint64_t limit;       // bytes the trace file may grow to; 0: no limit (ct_limit.c)
    uint32_t mute;        // enum ct_mute_mode
    uint64_t frame;       // ns, above 0: the target interval between frames
    uint64_t hang;        // ns; 0: no hang watchdog
    char filter[1024];    // CALLTRACE_FILTER as given, checked (ct_filter.c reads it); "": none
    // Some CALLTRACE_* variable of the table is in the environment (as secure_getenv sees it, so
    // never in a set-uid program), valid or not: the user asked for a trace.
    bool any_set;
};

// Reads the CALLTRACE_* variables. An invalid value prints one warning naming the variable and the
// default is used instead; a CALLTRACE_* variable that is no setting prints one too (ct_setting_names.h).
void ct_settings_load(struct ct_settings *s);

// Shared with tests of the parser: 1 on success.
int ct_parse_duration(const char *text, uint64_t *ns);
int ct_parse_size(const char *text, uint64_t *bytes);

#endif
