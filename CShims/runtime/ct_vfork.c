// vfork: the child runs on the parent's memory, stack and thread-local storage until it execs or
// exits, so whatever the runtime does in the child it does to the parent. The wrapper marks the
// calling thread VFORKED before the child runs (its hooks then return at once, and the exit and
// crash handlers leave the trace alone) and restores it when the parent resumes.
//
// It must be written in assembly, as glibc's is: the child returns from it first and then runs on,
// overwriting the stack below; so the return address is kept in a register across the syscall and
// pushed back after it, in the child and again in the parent.
#include "ct_thread.h"

#include <errno.h>

CT_NO_INSTRUMENT __attribute__((used)) long ct_vfork_parent(long result) {
    ct_thread_vfork_end();
    if (result < 0 && result > -4096) {
        errno = (int)-result;
        return -1;
    }
    return result;
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        "vfork:\n"
        "    subq $8, %rsp\n"                  // align the stack for the call
        "    call ct_thread_vfork_begin\n"
        "    addq $8, %rsp\n"
        "    popq %rdi\n"                      // the return address, out of the shared stack
        "    movl $58, %eax\n"                 // SYS_vfork
        "    syscall\n"
        "    pushq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 1f\n"                          // the child: 0, the runtime muted on this thread
        "    movq %rax, %rdi\n"
        "    subq $8, %rsp\n"
        "    call ct_vfork_parent\n"
        "    addq $8, %rsp\n"
        "1:  ret\n"
        ".size vfork, .-vfork\n");
#endif
