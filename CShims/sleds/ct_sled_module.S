// The stubs of one instrumented module (calltrace_sleds.h): linked into every executable and
// shared library built with sleds, so that each sled reaches them with a rel32 call. Each saves
// what the runtime's handler does not (its argument registers), passes it the id the sled holds
// and the address of the function's return slot, and calls it through this module's `targets`.
// The handlers save every other register they touch (no_caller_saved_registers) and the vector
// state on their slow paths: a sled sits where the compiler keeps nothing for a call, and gcc's
// IPA-RA may let a caller keep values in registers it knows this function leaves alone.
//
// A patched sled is `jmp +3; <id, 3 bytes of data>; call stub` and a last byte, a no-op, or at
// exit the function's `ret` (11 bytes): a stub is entered with the return into the sled at
// 0(%rsp), the id in the 3 bytes 8 before it, and the function's return address (its slot) at
// 8(%rsp); it returns into the sled. The tail stub also hands over the registers (the tail jump's
// target may be in one). No sled touches a register or moves the stack pointer but by its call,
// so at each of its instructions the function's own unwind table holds (a signal, an
// asynchronous cancel, a hang's capture may land on any), and every call returns where it was
// made (the return predictions hold).
    .section .text.calltrace_sleds,"ax",@progbits

    .p2align 4
    .globl ct_sled_stub_enter
    .hidden ct_sled_stub_enter
    .type ct_sled_stub_enter,@function
ct_sled_stub_enter:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    movq 16(%rsp), %rdi           // the return into the sled: the id is in the 3 bytes 8 before it
    movl -9(%rdi), %edi           // (with the jump's 03 below them)
    shrl $8, %edi
    leaq 24(%rsp), %rsi           // the function's return slot
    call *ct_sled_targets(%rip)
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size ct_sled_stub_enter, .-ct_sled_stub_enter

    // A tail sled runs just before its function's tail jump, which may take its target from a
    // register: the handler gets every general register as the jump will see it (in the order of
    // their numbers in an instruction, rax first; the slot for rsp holds nothing it uses).
    .p2align 4
    .globl ct_sled_stub_tail
    .hidden ct_sled_stub_tail
    .type ct_sled_stub_tail,@function
ct_sled_stub_tail:
    .cfi_startproc
    pushq %r15
    .cfi_adjust_cfa_offset 8
    pushq %r14
    .cfi_adjust_cfa_offset 8
    pushq %r13
    .cfi_adjust_cfa_offset 8
    pushq %r12
    .cfi_adjust_cfa_offset 8
    pushq %r11
    .cfi_adjust_cfa_offset 8
    pushq %r10
    .cfi_adjust_cfa_offset 8
    pushq %r9
    .cfi_adjust_cfa_offset 8
    pushq %r8
    .cfi_adjust_cfa_offset 8
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    pushq %rsp
    .cfi_adjust_cfa_offset 8
    pushq %rbx
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    pushq %rcx
    .cfi_adjust_cfa_offset 8
    pushq %rax
    .cfi_adjust_cfa_offset 8
    movq 128(%rsp), %rdi          // the return into the sled, above 16 registers: the id before it
    movl -9(%rdi), %edi
    shrl $8, %edi
    leaq 136(%rsp), %rsi
    movq %rsp, %rdx
    call *ct_sled_targets+16(%rip)
    popq %rax
    .cfi_adjust_cfa_offset -8
    popq %rcx
    .cfi_adjust_cfa_offset -8
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rbx
    .cfi_adjust_cfa_offset -8
    leaq 8(%rsp), %rsp            // rsp's slot
    .cfi_adjust_cfa_offset -8
    popq %rbp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    popq %r8
    .cfi_adjust_cfa_offset -8
    popq %r9
    .cfi_adjust_cfa_offset -8
    popq %r10
    .cfi_adjust_cfa_offset -8
    popq %r11
    .cfi_adjust_cfa_offset -8
    popq %r12
    .cfi_adjust_cfa_offset -8
    popq %r13
    .cfi_adjust_cfa_offset -8
    popq %r14
    .cfi_adjust_cfa_offset -8
    popq %r15
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size ct_sled_stub_tail, .-ct_sled_stub_tail

    .p2align 4
    .globl ct_sled_stub_exit
    .hidden ct_sled_stub_exit
    .type ct_sled_stub_exit,@function
ct_sled_stub_exit:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    movq 16(%rsp), %rdi           // the return into the sled: the id is in the 3 bytes 8 before it
    movl -9(%rdi), %edi
    shrl $8, %edi
    leaq 24(%rsp), %rsi           // the function's return slot
    call *ct_sled_targets+8(%rip)
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    ret                           // into the sled, whose last byte is the function's ret
    .cfi_endproc
    .size ct_sled_stub_exit, .-ct_sled_stub_exit

    .data
    .p2align 3
    .globl ct_sled_targets
    .hidden ct_sled_targets
    .type ct_sled_targets,@object
ct_sled_targets:
    .quad 0, 0, 0
    .size ct_sled_targets, 24

    .section .note.GNU-stack,"",@progbits
