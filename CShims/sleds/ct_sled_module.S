// The stubs of one instrumented module (calltrace_sleds.h): linked into every executable and
// shared library built with sleds, so that each sled reaches them with a rel32 call. Each saves
// what the runtime's handler does not (its argument registers), passes it the id the sled pushed
// and the address of the function's return slot, calls it through this module's `targets`, and
// takes the id off the stack again. The handlers save every other register they touch
// (no_caller_saved_registers) and the vector state on their slow paths: a sled sits where the
// compiler keeps nothing for a call, and gcc's IPA-RA may let a caller keep values in registers
// it knows this function leaves alone.
//
// A patched entry or tail sled is `push $id; call stub; nop` (11 bytes), so a stub is entered with
// the return into the sled at 0(%rsp), the id at 8, and the function's return address (its slot)
// at 16; it returns with `ret $8`. The tail stub also hands over the registers (the tail jump's
// target may be in one). A patched exit sled is `push $id; jmp stub`, the function's
// epilogue done: the id at 0(%rsp), the return address at 8; the stub returns for the function.
// The unwind tables say so (CFA above the pushed id), so a stack unwound from inside a handler
// (a hang's capture, a crash) steps through the sled's function as if the stub were not there.
    .section .text.calltrace_sleds,"ax",@progbits

    .p2align 4
    .globl ct_sled_stub_enter
    .hidden ct_sled_stub_enter
    .type ct_sled_stub_enter,@function
ct_sled_stub_enter:
    .cfi_startproc
    .cfi_def_cfa_offset 16
    .cfi_offset rip, -16
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    leaq -8(%rsp), %rsp           // the handler is entered with the ABI's alignment
    .cfi_adjust_cfa_offset 8
    movl 32(%rsp), %edi
    leaq 40(%rsp), %rsi
    call *ct_sled_targets(%rip)
    leaq 8(%rsp), %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    ret $8
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
    .cfi_def_cfa_offset 16
    .cfi_offset rip, -16
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
    leaq -8(%rsp), %rsp           // the handler is entered with the ABI's alignment
    .cfi_adjust_cfa_offset 8
    movl 144(%rsp), %edi          // the id: above 16 registers, the pad and the return into the sled
    leaq 152(%rsp), %rsi
    leaq 8(%rsp), %rdx
    call *ct_sled_targets+16(%rip)
    leaq 8(%rsp), %rsp
    .cfi_adjust_cfa_offset -8
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
    ret $8
    .cfi_endproc
    .size ct_sled_stub_tail, .-ct_sled_stub_tail

    .p2align 4
    .globl ct_sled_stub_exit
    .hidden ct_sled_stub_exit
    .type ct_sled_stub_exit,@function
ct_sled_stub_exit:
    .cfi_startproc
    .cfi_def_cfa_offset 16
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    movl 16(%rsp), %edi
    leaq 24(%rsp), %rsi
    call *ct_sled_targets+8(%rip)
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    leaq 8(%rsp), %rsp
    .cfi_adjust_cfa_offset -8
    ret
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
