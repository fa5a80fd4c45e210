// Fatal signals: a crash keeps every committed record (the file is mapped); the handler adds the
// crashing thread's open calls (and the main thread's) as unfinished records and the signal number,
// then lets the default action happen as if the runtime had never been there.
#ifndef CT_SIGNALS_H
#define CT_SIGNALS_H

#include "ct_base.h"

// Installs the handler for each fatal signal that has no handler yet (when the trace opens).
void ct_signals_install(void);
// A thread restricted itself (ct_restrict.h): the handler could not make its system calls there,
// so the signals it still handles go back to their default action, as they are untraced.
void ct_signals_give_way(void);

#endif
