/* The bare-metal run-time shared by the C images (rt.c). */
#ifndef LCMP_BAREMETAL_RT_H
#define LCMP_BAREMETAL_RT_H

#include <stddef.h>
#include <stdint.h>

/* A semihosting call: operation `op` with argument block `arg`. */
int semihost(int op, const void *arg);
/* SYS_WRITE0: a NUL-terminated string to QEMU's semihosting console. */
void puts_sh(const char *s);
/* SYS_EXIT: status 0 when `ok`, else 1. */
void __attribute__((noreturn)) exit_sh(int ok);
/* Prints "error: WHAT: WHY" and exits with status 1. */
void __attribute__((noreturn)) fail_sh(const char *what, const char *why);

/* A line of output. */
struct line {
    char buf[512];
    size_t len;
};
/* Appends text, a decimal number, or 0x and 16 hex digits. */
void put(struct line *l, const char *s);
void put_u64(struct line *l, uint64_t v);
void put_hex16(struct line *l, uint64_t v);

#endif
