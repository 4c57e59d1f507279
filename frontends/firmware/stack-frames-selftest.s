@ stack-frames.sh's own test (70-firmware.sh, stack_frames): each form of a
@ Thumb-2 frame reservation it must count. `f` reserves 2828 (subw, the
@ 12-bit immediate) + 4096 (sub.w) + 16 (sub) = 6940 bytes; `g` moves sp by
@ a register (dynamic); `h` reserves nothing (not listed).
.syntax unified
.thumb
.text
.globl f
.type f, %function
f:
  push {r4, lr}
  subw sp, sp, #2828
  sub.w sp, sp, #4096
  sub sp, #16
  add sp, #16
  add.w sp, sp, #4096
  addw sp, sp, #2828
  pop {r4, pc}
.globl g
.type g, %function
g:
  push {r4, lr}
  sub.w sp, sp, r4
  pop {r4, pc}
.globl h
.type h, %function
h:
  bx lr
