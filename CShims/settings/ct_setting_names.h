// The names of the CALLTRACE_* variables: which the environment holds that nothing of calltrace
// reads (ct_setting_names.c).
#ifndef CT_SETTING_NAMES_H
#define CT_SETTING_NAMES_H

// One warning for each CALLTRACE_* variable in the environment that is neither a setting nor read
// by another part of calltrace (ct_settings.inc), naming the closest setting when one is within two
// edits. Nothing in a set-uid or set-gid program, which reads no setting either.
void ct_settings_warn_unknown(void);

#endif
