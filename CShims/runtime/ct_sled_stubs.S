// The runtime's own sled machinery in assembly:
//   - its copy of a module's stubs (CShims/sleds/ct_sled_module.S), for its own functions with
//     sleds: the overhead calibration's (ct_overhead.c), patched like any module's;
//   - those functions, with sleds exactly as clang leaves them, and their table;
//   - ct_sled_vsave_call, the one way from a sled handler's fast path to ordinary C (ct_sled_hooks.h).
#include "../sleds/ct_sled_module.S"

// ---- ct_sled_vsave_call(fn, a, b, c) ------------------------------------------------------------
// Calls fn(a, b, c) and returns with every general register as it was (it is declared
// no_caller_saved_registers) and the vector, mask and x87 state too: XSAVE (or XSAVEC, or FXSAVE
// without XSAVE) of ct_sled_xsave_mask into an area on the stack, 64-byte aligned, whose XSAVE
// header is zeroed first (XRSTOR faults on a header with reserved bits set).
    .text
    .p2align 4
    .globl ct_sled_vsave_call
    .hidden ct_sled_vsave_call
    .type ct_sled_vsave_call,@function
ct_sled_vsave_call:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register rbp
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    subq ct_sled_xsave_size(%rip), %rsp
    andq $-64, %rsp
    movq %rdi, %r11                 // fn
    xorl %eax, %eax
    movq %rax, 512(%rsp)
    movq %rax, 520(%rsp)
    movq %rax, 528(%rsp)
    movq %rax, 536(%rsp)
    movq %rax, 544(%rsp)
    movq %rax, 552(%rsp)
    movq %rax, 560(%rsp)
    movq %rax, 568(%rsp)
    movl ct_sled_xsave_mask(%rip), %eax
    movl ct_sled_xsave_mask+4(%rip), %edx
    movzbl ct_sled_xsave_kind(%rip), %r10d
    cmpl $2, %r10d
    je 2f
    cmpl $1, %r10d
    je 1f
    fxsave64 (%rsp)
    jmp 3f
1:  xsave64 (%rsp)
    jmp 3f
2:  xsavec64 (%rsp)
3:  movq -32(%rbp), %rdi           // a (came in rsi)
    movq -24(%rbp), %rsi           // b (came in rdx)
    movq -16(%rbp), %rdx           // c (came in rcx)
    call *%r11
    movl ct_sled_xsave_mask(%rip), %eax
    movl ct_sled_xsave_mask+4(%rip), %edx
    movzbl ct_sled_xsave_kind(%rip), %r10d
    testl %r10d, %r10d
    jne 4f
    fxrstor64 (%rsp)
    jmp 5f
4:  xrstor64 (%rsp)
5:  leaq -72(%rbp), %rsp
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    popq %rbp
    .cfi_def_cfa rsp, 8
    ret
    .cfi_endproc
    .size ct_sled_vsave_call, .-ct_sled_vsave_call

// ---- The calibration's functions with sleds (ct_overhead.c) -------------------------------------
// ct_calib_sled_empty: an empty function, entry and exit sleds as clang leaves them.
// (ct_calib_sled_nested, below: a recursion whose inner calls are not timed.)
// ct_calib_sled_own: calls ct_overhead_sled_probe between its two sleds (the part of a call's own
// handlers inside its measured time).
#define ENTRY_SLED .byte 0xeb, 0x09, 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x02, 0x00, 0x00
#define EXIT_SLED .byte 0xc3, 0x2e, 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x02, 0x00, 0x00
#define SLED_ENTRY(label, fn, kind) \
    .pushsection calltrace_calib_sleds,"a",@progbits; .p2align 3; \
    .quad label - .; .quad fn - .; .byte kind, 0, 2; .zero 13; .popsection

    .text
    .p2align 4
    .globl ct_calib_sled_empty
    .hidden ct_calib_sled_empty
    .type ct_calib_sled_empty,@function
ct_calib_sled_empty:
    .cfi_startproc
10: ENTRY_SLED
    .p2align 1
11: EXIT_SLED
    .cfi_endproc
    .size ct_calib_sled_empty, .-ct_calib_sled_empty
    SLED_ENTRY(10b, ct_calib_sled_empty, 0)
    SLED_ENTRY(11b, ct_calib_sled_empty, 1)

    .p2align 4
    .globl ct_calib_sled_own
    .hidden ct_calib_sled_own
    .type ct_calib_sled_own,@function
ct_calib_sled_own:
    .cfi_startproc
12: ENTRY_SLED
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call ct_overhead_sled_probe
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    .p2align 1
13: EXIT_SLED
    .cfi_endproc
    .size ct_calib_sled_own, .-ct_calib_sled_own
    SLED_ENTRY(12b, ct_calib_sled_own, 0)
    SLED_ENTRY(13b, ct_calib_sled_own, 1)

    // ct_calib_sled_nested(n): calls itself n times with 0, a recursion whose inner calls its
    // handlers do not time (the calibration gives it a cap of 1: ct_mute_levels.h), so that the
    // calibration can time what such a call costs its caller.
    .p2align 4
    .globl ct_calib_sled_nested
    .hidden ct_calib_sled_nested
    .type ct_calib_sled_nested,@function
ct_calib_sled_nested:
    .cfi_startproc
14: ENTRY_SLED
    testq %rdi, %rdi
    jz 2f
    pushq %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_offset rbx, -16
    movq %rdi, %rbx
1:  xorl %edi, %edi
    call ct_calib_sled_nested
    decq %rbx
    jnz 1b
    popq %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore rbx
2:
    .p2align 1
15: EXIT_SLED
    .cfi_endproc
    .size ct_calib_sled_nested, .-ct_calib_sled_nested
    SLED_ENTRY(14b, ct_calib_sled_nested, 0)
    SLED_ENTRY(15b, ct_calib_sled_nested, 1)

    .section .note.GNU-stack,"",@progbits
