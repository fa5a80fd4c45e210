#include "ct_setting_kinds.h"
#include "ct_settings.h"

#include "ct_base.h"

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

CT_NO_INSTRUMENT bool ct_parse_duration_setting(const char *text, void *field, size_t size) {
    (void)size;
    uint64_t v;
    if (!ct_parse_duration(text, &v)) return false;
    *(uint64_t *)field = v;
    return true;
}

CT_NO_INSTRUMENT bool ct_parse_path_setting(const char *text, void *field, size_t size) {
    size_t n = strlen(text);
    if (n == 0 || n >= size) return false;
    memcpy(field, text, n + 1);
    return true;
}

CT_NO_INSTRUMENT bool ct_parse_threads_setting(const char *text, void *field, size_t size) {
    (void)size;
    if (strcmp(text, "main") == 0) *(uint32_t *)field = CT_THREADS_MAIN;
    else if (strcmp(text, "all") == 0) *(uint32_t *)field = CT_THREADS_ALL;
    else return false;
    return true;
}

CT_NO_INSTRUMENT bool ct_parse_count_setting(const char *text, void *field, size_t size) {
    (void)size;
    char *end = NULL;
    if (*text < '0' || *text > '9') return false;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end != '\0' || v < 1 || v > CT_COUNT_MAX) return false;
    *(uint64_t *)field = v;
    return true;
}

CT_NO_INSTRUMENT bool ct_parse_size_setting(const char *text, void *field, size_t size) {
    (void)size;
    uint64_t v;
    if (!ct_parse_size(text, &v) || v < CT_SIZE_MIN) return false;
    *(uint64_t *)field = v;
    return true;
}

CT_NO_INSTRUMENT bool ct_parse_mute_setting(const char *text, void *field, size_t size) {
    (void)size;
    if (strcmp(text, "auto") == 0) *(uint32_t *)field = CT_MUTE_AUTO;
    else if (strcmp(text, "off") == 0) *(uint32_t *)field = CT_MUTE_OFF;
    else if (strcmp(text, "hook") == 0) *(uint32_t *)field = CT_MUTE_HOOK;
    else return false;
    return true;
}

CT_NO_INSTRUMENT bool ct_parse_interval_setting(const char *text, void *field, size_t size) {
    (void)size;
    uint64_t v;
    if (!ct_parse_duration(text, &v) || v == 0) return false;
    *(uint64_t *)field = v;
    return true;
}

// "-log_*,render,ns::Klass::*": items separated by commas, spaces around them allowed, none empty
// (nor a bare "-"); "" is no filter. Kept as given: ct_filter.c splits it again.
CT_NO_INSTRUMENT bool ct_parse_filter_setting(const char *text, void *field, size_t size) {
    size_t n = strlen(text);
    if (n >= size) return false;
    const char *p = text;
    while (n > 0) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        while (p < end && *p == ' ') p++;
        if (p < end && *p == '-') p++;
        const char *q = end;
        while (q > p && q[-1] == ' ') q--;
        if (q == p) return false;
        if (*end == '\0') break;
        p = end + 1;
    }
    memcpy(field, text, n + 1);
    return true;
}

// "0" (no limit) or a size of at least CT_LIMIT_MIN: below that the header, the metadata blocks and
// a ring of call blocks would not fit, and the runtime says so rather than keep a useless trace.
CT_NO_INSTRUMENT bool ct_parse_limit_setting(const char *text, void *field, size_t size) {
    (void)size;
    uint64_t v;
    if (!ct_parse_size(text, &v) || (v != 0 && v < CT_LIMIT_MIN)) return false;
    *(uint64_t *)field = v;
    return true;
}
