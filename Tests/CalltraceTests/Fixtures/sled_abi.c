// A module whose sleds another calltrace built: it registers with an older sled ABI (1), as a
// program left over from an older checkout would. Its functions cannot be patched; the runtime
// must say so rather than leave them untraced without a word. Prints "ran" either way.
#include <stdio.h>
#include "calltrace_sleds.h"

static char stub;
static struct calltrace_sled_module old_module = {
    .abi = 1,
    .size = sizeof(struct calltrace_sled_module),
    .stubs = { &stub, &stub, &stub },
};

__attribute__((constructor, no_instrument_function)) static void register_old(void) {
    calltrace_rt_register_sleds(&old_module);
}

int main(void) {
    printf("ran\n");
    return 0;
}
