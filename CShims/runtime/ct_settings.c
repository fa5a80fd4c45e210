#include "ct_settings.h"
#include "ct_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// "1.5ms", "250us", "2s", "100ns", "10" (= 10 ms), "0". Returns 1 and the value in ns.
CT_NO_INSTRUMENT int ct_parse_duration(const char *text, uint64_t *ns) {
    const char *p = text;
    uint64_t whole = 0, frac = 0, frac_scale = 1;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        if (whole > 1000000000000ull) return 0;
        whole = whole * 10 + (uint64_t)(*p++ - '0');
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (frac_scale < 1000000000000ull) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_scale *= 10;
            }
            p++;
            digits++;
        }
    }
    if (digits == 0) return 0;
    uint64_t unit;
    if (*p == '\0' || strcmp(p, "ms") == 0) unit = 1000000ull;
    else if (strcmp(p, "ns") == 0) unit = 1ull;
    else if (strcmp(p, "us") == 0) unit = 1000ull;
    else if (strcmp(p, "s") == 0) unit = 1000000000ull;
    else return 0;
    if (whole > UINT64_MAX / unit / 2) return 0;
    *ns = whole * unit + (uint64_t)((double)frac * (double)unit / (double)frac_scale);
    return 1;
}

// "16M", "512k", "1G", "65536". Returns 1 and the value in bytes.
CT_NO_INSTRUMENT int ct_parse_size(const char *text, uint64_t *bytes) {
    char *end = NULL;
    if (*text < '0' || *text > '9') return 0;
    unsigned long long v = strtoull(text, &end, 10);
    uint64_t mult = 1;
    if (*end == 'k' || *end == 'K') mult = 1ull << 10, end++;
    else if (*end == 'm' || *end == 'M') mult = 1ull << 20, end++;
    else if (*end == 'g' || *end == 'G') mult = 1ull << 30, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0' || v > (1ull << 40) / mult) return 0;
    *bytes = v * mult;
    return 1;
}

// One parser per kind of setting; each returns 1 when the text is valid.
CT_NO_INSTRUMENT static int parse_duration(const char *t, struct ct_settings *s, void *field) {
    (void)s;
    return ct_parse_duration(t, (uint64_t *)field);
}
CT_NO_INSTRUMENT static int parse_path(const char *t, struct ct_settings *s, void *field) {
    (void)s;
    size_t n = strlen(t);
    if (n == 0 || n >= sizeof s->output) return 0;
    memcpy(field, t, n + 1);
    return 1;
}
CT_NO_INSTRUMENT static int parse_threads(const char *t, struct ct_settings *s, void *field) {
    (void)s;
    if (strcmp(t, "main") == 0) *(uint32_t *)field = CT_THREADS_MAIN;
    else if (strcmp(t, "all") == 0) *(uint32_t *)field = CT_THREADS_ALL;
    else return 0;
    return 1;
}
CT_NO_INSTRUMENT static int parse_count(const char *t, struct ct_settings *s, void *field) {
    (void)s;
    char *end = NULL;
    if (*t < '0' || *t > '9') return 0;
    unsigned long long v = strtoull(t, &end, 10);
    if (*end != '\0' || v < 1 || v > (1u << 22)) return 0;
    *(uint64_t *)field = v;
    return 1;
}
CT_NO_INSTRUMENT static int parse_size(const char *t, struct ct_settings *s, void *field) {
    (void)s;
    uint64_t v;
    if (!ct_parse_size(t, &v) || v < 8192) return 0;
    *(uint64_t *)field = v;
    return 1;
}

static const char *const expected_duration = "a duration such as 10ms, 250us, 1.5s or 0";
static const char *const expected_path = "a file path";
static const char *const expected_threads = "main or all";
static const char *const expected_count = "a whole number from 1 to 4194304";
static const char *const expected_size = "a size of at least 8k, such as 16M or 512k";

CT_NO_INSTRUMENT void ct_settings_load(struct ct_settings *s) {
    memset(s, 0, sizeof *s);
#define CT_SETTING(field, var, kind, def, help)                                                  \
    parse_##kind(def, s, &s->field);                                                             \
    {                                                                                            \
        const char *value = secure_getenv(var);                                                  \
        if (value) s->any_set = true;                                                            \
        if (value && !parse_##kind(value, s, &s->field)) {                                       \
            ct_warn("%s=%s is not valid (expected %s); using the default, %s", var, value,       \
                    expected_##kind, def);                                                       \
            parse_##kind(def, s, &s->field);                                                     \
        }                                                                                        \
    }
#include "ct_settings.inc"
#undef CT_SETTING
}
