#include "ct_setting_names.h"
#include "calltrace_settings.h"
#include "ct_log.h"

#include "ct_base.h"

#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define PREFIX "CALLTRACE_"
#define PREFIX_LEN (sizeof PREFIX - 1)
// Names longer than this (after the prefix) are too far from every setting to be a misspelling.
#define NAME_MAX_LEN 48u
// The most edits a misspelling is taken to have: CALLTRACE_TRESHOLD is one from CALLTRACE_THRESHOLD.
#define NEAR_EDITS 2u

static const char *const other_variables[] = {
#define CT_SETTING(field, var, kind, def, help)
#define CT_OTHER_VARIABLE(var, reader) var,
#include "ct_settings.inc"
#undef CT_OTHER_VARIABLE
#undef CT_SETTING
};

CT_NO_INSTRUMENT static char upper(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c; }

// Insertions, deletions, substitutions and swaps of two adjacent letters, one edit each (the
// optimal string alignment distance), letters compared without case: three rows of the table.
CT_NO_INSTRUMENT static size_t distance(const char *a, size_t n, const char *b, size_t m) {
    uint8_t rows[3][NAME_MAX_LEN + 1];
    uint8_t *before = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++) prev[j] = (uint8_t)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (uint8_t)i;
        for (size_t j = 1; j <= m; j++) {
            uint8_t d = (uint8_t)(prev[j - 1] + (upper(a[i - 1]) != upper(b[j - 1])));
            if (prev[j] + 1 < d) d = (uint8_t)(prev[j] + 1);
            if (cur[j - 1] + 1 < d) d = (uint8_t)(cur[j - 1] + 1);
            if (i > 1 && j > 1 && upper(a[i - 1]) == upper(b[j - 2]) && upper(a[i - 2]) == upper(b[j - 1]) &&
                before[j - 2] + 1 < d)
                d = (uint8_t)(before[j - 2] + 1);
            cur[j] = d;
        }
        uint8_t *spare = before;
        before = prev;
        prev = cur;
        cur = spare;
    }
    return prev[m];
}

CT_NO_INSTRUMENT static bool is_named(const char *name, size_t len, const char *known) {
    return strlen(known) == len && memcmp(name, known, len) == 0;
}

// The setting closest to `name` (the whole variable name), or NULL when none is within NEAR_EDITS;
// the first in the table's order on a tie.
CT_NO_INSTRUMENT static const char *closest_setting(const char *name, size_t len) {
    const char *best = NULL;
    size_t best_edits = NEAR_EDITS + 1;
    if (len - PREFIX_LEN > NAME_MAX_LEN) return NULL;
    for (size_t i = 0; i < ct_setting_count(); i++) {
        const char *known = ct_setting_row(i)->variable;
        size_t known_len = strlen(known) - PREFIX_LEN;
        if (known_len > NAME_MAX_LEN) continue;
        size_t edits = distance(name + PREFIX_LEN, len - PREFIX_LEN, known + PREFIX_LEN, known_len);
        if (edits < best_edits) {
            best = known;
            best_edits = edits;
        }
    }
    return best;
}

CT_NO_INSTRUMENT static bool is_known(const char *name, size_t len) {
    for (size_t i = 0; i < ct_setting_count(); i++)
        if (is_named(name, len, ct_setting_row(i)->variable)) return true;
    for (size_t i = 0; i < sizeof other_variables / sizeof other_variables[0]; i++)
        if (is_named(name, len, other_variables[i])) return true;
    return false;
}

CT_NO_INSTRUMENT void ct_settings_warn_unknown(void) {
    if (!environ || getauxval(AT_SECURE)) return;
    for (char **entry = environ; *entry; entry++) {
        const char *name = *entry;
        if (strncmp(name, PREFIX, PREFIX_LEN) != 0) continue;
        const char *equals = strchr(name, '=');
        size_t len = equals ? (size_t)(equals - name) : strlen(name);
        if (is_known(name, len)) continue;
        const char *near = closest_setting(name, len);
        int shown = len > 200 ? 200 : (int)len;
        if (near)
            ct_warn("%.*s is not a calltrace setting (did you mean %s?); it is ignored", shown, name, near);
        else
            ct_warn("%.*s is not a calltrace setting; it is ignored", shown, name);
    }
}
