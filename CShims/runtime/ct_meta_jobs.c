// The metadata stream's jobs walked together: the drain thread's poll (new modules, thread names)
// and a fork child's forgetting. Above the stream's writer (ct_meta.c) and each job's file, which
// use the writer and never this.
#include "ct_meta.h"
#include "ct_meta_stream.h"

CT_NO_INSTRUMENT void ct_meta_poll(void) {
    ct_meta_poll_modules();
    ct_meta_poll_threads();
}

// The metadata block is one of the parent's shared pages (ct_drain_forget unmaps it); the threads
// are the parent's. The module list stays: it is the child's too. Another thread of the parent may
// have been inside dlopen at the fork and left the loader's lock taken for ever in the child, so
// the child asks the loader nothing until the program's own dlopen or dlclose has shown that it
// works (ct_meta_loader_works), and writes the parent's records.
CT_NO_INSTRUMENT void ct_meta_forget(void) {
    ct_meta_forget_stream();
    ct_meta_forget_threads();
    ct_meta_forget_modules();
}
