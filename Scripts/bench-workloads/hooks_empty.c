/* Empty __cyg_profile_func_enter/exit: the floor of the -finstrument-functions
 * mechanism itself (two calls through the PLT per function call, nothing else).
 * LD_PRELOADed into the instrumented workload; built -O2 without
 * -finstrument-functions. */
#define NO_INSTRUMENT __attribute__((no_instrument_function, visibility("default")))

NO_INSTRUMENT void __cyg_profile_func_enter(void *fn, void *site) { (void)fn; (void)site; }
NO_INSTRUMENT void __cyg_profile_func_exit(void *fn, void *site) { (void)fn; (void)site; }
