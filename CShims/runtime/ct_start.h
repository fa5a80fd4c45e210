// Start-up, exit and fork: the runtime's life within the process (ct_start.c).
#ifndef CT_START_H
#define CT_START_H

#include "ct_base.h"

// Reads the settings and takes the clock's first calibration point, once. False while another
// thread is doing it, and before libc's start-up (a .preinit_array function's call: ct_start.c).
bool ct_runtime_init(void);
// A module with sleds registered: when one of the program's .preinit_array functions is among the
// functions with sleds, it ran untimed before the runtime started, which is said once.
void ct_start_note_early_sleds(void);
// Normal exit: records the open calls and closes the trace (registered with atexit).
void ct_start_exit(void);
// exit() or main's return, when a vfork child's exit() took our handler (ct_wrappers.c).
void ct_start_exit_if_handler_lost(void);
// The program calls _exit or _Exit (ct_wrappers.c), perhaps in a signal handler or a vfork child.
void ct_start_quick_exit(void);
// quick_exit(), when a vfork child's quick_exit took our at_quick_exit handler (ct_wrappers.c).
void ct_start_quick_exit_if_handler_lost(void);
// The main thread calls pthread_exit (ct_wrappers.c).
void ct_start_main_thread_exits(void);

#endif
