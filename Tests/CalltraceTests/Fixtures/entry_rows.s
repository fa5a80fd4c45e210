# A function whose entry address carries two line rows: the previous function's last line, not a
# statement (as gcc -O2 sometimes leaves it), then its own first line. addr2line says 20 for
# `second`; SourceLineTests checks that calltrace does too.
	.file 1 "lines.c"
	.text
	.globl	first
	.type	first, @function
first:
	.loc 1 10 0
	nop
	.loc 1 12 0
	ret
	.size	first, .-first
	.globl	second
	.type	second, @function
second:
	.loc 1 12 0 is_stmt 0
	.loc 1 20 0 is_stmt 1
	nop
	ret
	.size	second, .-second
	.globl	main
	.type	main, @function
main:
	.loc 1 30 0
	call	first
	call	second
	xorl	%eax, %eax
	ret
	.size	main, .-main
	.section	.note.GNU-stack,"",@progbits
