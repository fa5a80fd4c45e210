// The kinds of setting in ct_settings.inc's `kind` column. For each kind K: CT_KIND_K, its
// enum ct_setting_kind value; CT_EXPECTED_K, how a valid value looks (for the runtime's warning and
// the command line's error); ct_parse_K, its parser.
#ifndef CT_SETTING_KINDS_H
#define CT_SETTING_KINDS_H

#include "calltrace_settings.h"

// The deepest stack a thread can be given (CALLTRACE_MAX_DEPTH), and the smallest buffer.
#define CT_COUNT_MAX 4194304
#define CT_SIZE_MIN 8192
// The smallest trace file limit: the header, the metadata blocks and a ring of call blocks need room.
#define CT_LIMIT_MIN (1u << 20)
#define CT_STRINGIFY(x) #x
#define CT_STRING(x) CT_STRINGIFY(x)

#define CT_KIND_duration CT_SETTING_DURATION
#define CT_KIND_path CT_SETTING_PATH
#define CT_KIND_threads CT_SETTING_THREADS
#define CT_KIND_count CT_SETTING_COUNT
#define CT_KIND_size CT_SETTING_SIZE
#define CT_KIND_mute CT_SETTING_MUTE
#define CT_KIND_interval CT_SETTING_INTERVAL
#define CT_KIND_filter CT_SETTING_FILTER
#define CT_KIND_limit CT_SETTING_LIMIT

#define CT_EXPECTED_duration "a duration such as 10ms, 250us, 1.5s or 0"
#define CT_EXPECTED_path "a file path"
#define CT_EXPECTED_threads "main or all"
#define CT_EXPECTED_count "a whole number from 1 to " CT_STRING(CT_COUNT_MAX)
#define CT_EXPECTED_size "a size of at least 8k, such as 16M or 512k"
#define CT_EXPECTED_mute "auto, hook or off"
#define CT_EXPECTED_interval "a duration above 0 such as 16.67ms, 33ms or 500us"
#define CT_EXPECTED_limit "0 (no limit) or a size of at least 1M, such as 64M or 2G"
#define CT_EXPECTED_filter "comma-separated function name patterns, each NAME or -NAME (* ? [...] globs), such as -log_*,render"

// Each parses `text` into `field` (`size` bytes) and returns true when the text is valid; an
// invalid text leaves `field` as it was.
bool ct_parse_duration_setting(const char *text, void *field, size_t size);
bool ct_parse_path_setting(const char *text, void *field, size_t size);
bool ct_parse_threads_setting(const char *text, void *field, size_t size);
bool ct_parse_count_setting(const char *text, void *field, size_t size);
bool ct_parse_size_setting(const char *text, void *field, size_t size);
bool ct_parse_mute_setting(const char *text, void *field, size_t size);
bool ct_parse_interval_setting(const char *text, void *field, size_t size);
bool ct_parse_filter_setting(const char *text, void *field, size_t size);
bool ct_parse_limit_setting(const char *text, void *field, size_t size);

#endif
