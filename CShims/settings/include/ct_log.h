// The runtime's only output: one-line warnings on stderr, when a setting is bad or the trace cannot
// be written. When all is well the runtime prints nothing, so the traced program's output is its own.
// (Part of the settings target because ct_settings_load warns through it; the runtime uses it too.)
#ifndef CT_LOG_H
#define CT_LOG_H

void ct_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
