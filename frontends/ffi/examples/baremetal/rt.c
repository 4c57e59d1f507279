/*
 * The bare-metal run-time of the C images for QEMU mps2-an386 (Cortex-M4F),
 * shared by main.c (the replay) and frontends/firmware/cost/cost.c (the cost
 * table): semihosting output and exit, a line buffer, the vector table and
 * the reset handler (copies .data, zeroes .bss, enables the FPU, calls
 * main). No C library.
 */
#include "rt.h"

int main(void);

/* --- semihosting ---------------------------------------------------- */

int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void puts_sh(const char *s) { semihost(0x04 /* SYS_WRITE0 */, s); }

void __attribute__((noreturn)) exit_sh(int ok) {
    /* SYS_EXIT: ADP_Stopped_ApplicationExit (status 0) or
     * ADP_Stopped_RunTimeErrorUnknown (status 1), as cortex-m-semihosting. */
    semihost(0x18, (const void *)(uintptr_t)(ok ? 0x20026 : 0x20023));
    for (;;) {
    }
}

void __attribute__((noreturn)) fail_sh(const char *what, const char *why) {
    struct line l = {.len = 0};
    put(&l, "error: ");
    put(&l, what);
    put(&l, ": ");
    put(&l, why);
    put(&l, "\n");
    puts_sh(l.buf);
    exit_sh(0);
}

void put(struct line *l, const char *s) {
    while (*s && l->len + 1 < sizeof l->buf) l->buf[l->len++] = *s++;
    l->buf[l->len] = '\0';
}

void put_u64(struct line *l, uint64_t v) {
    char tmp[21];
    int i = 20;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(l, &tmp[i]);
}

void put_hex16(struct line *l, uint64_t v) {
    char tmp[17];
    for (int i = 15; i >= 0; i--) {
        tmp[i] = "0123456789abcdef"[v & 0xF];
        v >>= 4;
    }
    tmp[16] = '\0';
    put(l, "0x");
    put(l, tmp);
}

/* --- start-up ------------------------------------------------------- */

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _stack_top;

void __attribute__((noreturn)) reset_handler(void) {
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) *dst++ = *src++;
    for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
    /* Enable the FPU (CP10, CP11): the library is built for the hard-float
     * ABI. */
    *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb");
    main();
    exit_sh(0);
}

static void __attribute__((noreturn)) fault_handler(void) { exit_sh(0); }

/* SysTick: a fault unless the image defines its own (cost.c counts the
 * timer's wraps with it). */
void __attribute__((weak)) systick_handler(void) { exit_sh(0); }

__attribute__((section(".vectors"), used)) static const void *const vectors[16] = {
    &_stack_top,   reset_handler, fault_handler, fault_handler, fault_handler, fault_handler,
    fault_handler, 0,             0,             0,             0,             fault_handler,
    fault_handler, 0,             fault_handler, systick_handler,
};
