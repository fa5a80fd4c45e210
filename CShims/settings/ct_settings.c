// ct_settings.inc expanded once into a table of rows, which both readers of the settings walk: the
// runtime at start-up (ct_settings_load) and the command line checking its options
// (ct_setting_check, ct_setting_row).
#include "calltrace_settings.h"
#include "ct_log.h"
#include "ct_setting_kinds.h"
#include "ct_setting_names.h"
#include "ct_settings.h"

#include "ct_base.h"

#include <stdlib.h>
#include <string.h>

struct row {
    struct ct_setting_row public;
    bool (*parse)(const char *text, void *field, size_t size);
    size_t offset, size;  // of the field in struct ct_settings
};

static const struct row rows[] = {
#define CT_SETTING(field, var, kind, def, help)                                                    \
    {{#field, var, CT_KIND_##kind, def, help, CT_EXPECTED_##kind}, ct_parse_##kind##_setting,      \
     offsetof(struct ct_settings, field), sizeof(((struct ct_settings *)0)->field)},
#define CT_OTHER_VARIABLE(var, reader)
#include "ct_settings.inc"
#undef CT_OTHER_VARIABLE
#undef CT_SETTING
};
enum { row_count = sizeof rows / sizeof rows[0] };

CT_NO_INSTRUMENT size_t ct_setting_count(void) { return row_count; }

CT_NO_INSTRUMENT const struct ct_setting_row *ct_setting_row(size_t index) {
    return index < row_count ? &rows[index].public : NULL;
}

CT_NO_INSTRUMENT bool ct_setting_check(size_t index, const char *text, uint64_t *value) {
    if (index >= row_count || !text) return false;
    const struct row *r = &rows[index];
    struct ct_settings scratch;
    memset(&scratch, 0, sizeof scratch);
    char *field = (char *)&scratch + r->offset;
    if (!r->parse(text, field, r->size)) return false;
    if (r->public.kind == CT_SETTING_PATH || r->public.kind == CT_SETTING_FILTER) {
        *value = strlen(field);
    } else if (r->size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, field, sizeof v);
        *value = v;
    } else {
        memcpy(value, field, sizeof *value);
    }
    return true;
}

CT_NO_INSTRUMENT void ct_settings_load(struct ct_settings *s) {
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < row_count; i++) {
        const struct row *r = &rows[i];
        char *field = (char *)s + r->offset;
        r->parse(r->public.default_value, field, r->size);
        const char *value = secure_getenv(r->public.variable);
        if (!value) continue;
        s->any_set = true;
        if (!r->parse(value, field, r->size))
            ct_warn("%s=%s is not valid (expected %s); using the default, %s", r->public.variable, value,
                    r->public.expected, r->public.default_value);
    }
    ct_settings_warn_unknown();
}
