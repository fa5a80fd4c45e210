// The runtime's settings table and parsers, for the command line (Swift imports this header).
//
// `calltrace record` hands its options to the runtime as CALLTRACE_* variables. It checks them with
// these functions, which are the runtime's own (the same rows of ct_settings.inc, the same parsers),
// and builds its option help and defaults from the rows: the two sides cannot disagree.
#ifndef CALLTRACE_SETTINGS_H
#define CALLTRACE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// What a setting's value is, and so what ct_setting_check returns for it.
enum ct_setting_kind {
    CT_SETTING_DURATION = 0, // nanoseconds
    CT_SETTING_PATH = 1,     // the path's length in bytes
    CT_SETTING_THREADS = 2,  // 0 for main, 1 for all (enum ct_threads_mode)
    CT_SETTING_COUNT = 3,    // a whole number
    CT_SETTING_SIZE = 4,     // bytes
    CT_SETTING_MUTE = 5,     // 0 for auto, 1 for off, 2 for hook (enum ct_mute_mode)
    CT_SETTING_INTERVAL = 6, // nanoseconds, above 0
    CT_SETTING_FILTER = 7,   // the text's length in bytes (0: no filter)
    CT_SETTING_LIMIT = 8,    // bytes; 0: no limit
};

// One row of ct_settings.inc.
struct ct_setting_row {
    const char *field;          // "max_depth"
    const char *variable;       // "CALLTRACE_MAX_DEPTH"
    enum ct_setting_kind kind;
    const char *default_value;  // "4096", as the table writes it
    const char *help;           // one sentence, no final period
    const char *expected;       // what a valid value looks like, for messages: "a whole number from 1 to 4194304"
};

// The number of rows, and row `index` (NULL past the end).
size_t ct_setting_count(void);
const struct ct_setting_row *ct_setting_row(size_t index);

// Checks `text` as the value of row `index`, exactly as the runtime reads it from the environment.
// True and the value (see enum ct_setting_kind) when the runtime accepts it; false when it would
// warn and use the default instead.
bool ct_setting_check(size_t index, const char *text, uint64_t *value);

#ifdef __cplusplus
}
#endif
#endif
