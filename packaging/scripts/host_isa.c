/* What this host's CPU can run *and* its operating system lets a process use, read from CPUID
 * and XCR0, printed as the instruction-set switches of ggml's CMake build. Used for native code
 * the tests build from other projects (the conformance oracle), instead of -march=native:
 * a CPU may list an extension whose register state the OS does not enable (seen: a VM listing
 * amx_tile/amx_int8/amx_bf16 whose processes cannot use AMX state), and -march=native would
 * then build code that faults on the first forward pass. AMX is never enabled.
 *
 * Usage: host_isa           -> one line: the names enabled, e.g. "sse42 avx avx2 bmi2 fma f16c"
 *        host_isa --cmake   -> one line: -DGGML_NATIVE=OFF -DGGML_AVX=ON ... (every switch named)
 *
 * Bits: Intel SDM vol. 2 (CPUID) and vol. 1 13.3/14.3/15.2 (XCR0 state components 1-2 for
 * AVX, 5-7 for AVX-512). Built for baseline x86-64 with no target flags. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>

static unsigned long long xcr0(void) {
    unsigned int eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

struct isa {
    const char *name, *cmake;
    int on;
};

int main(int argc, char **argv) {
    unsigned int a = 0, b = 0, c = 0, d = 0;
    unsigned int c1 = 0, b7 = 0, c7 = 0, a71 = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) c1 = c;
    if (__get_cpuid_max(0, 0) >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        b7 = b;
        c7 = c;
        if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) a71 = a;
    }
    const int osxsave = (c1 >> 27) & 1, avxBit = (c1 >> 28) & 1;
    const unsigned long long x = osxsave && avxBit ? xcr0() : 0;
    const int ymm = (x & 0x6u) == 0x6u, zmm = (x & 0xE6u) == 0xE6u;
    const int avx = avxBit && ymm;
    const int avx2 = avx && ((b7 >> 5) & 1);
    /* ggml's GGML_AVX512 switch turns on F, CD, VL, DQ and BW together. */
    const unsigned int avx512Bits = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
    const int avx512 = avx2 && zmm && (b7 & avx512Bits) == avx512Bits;
    struct isa list[] = {
        {"sse42", "GGML_SSE42", (c1 >> 20) & 1},
        {"avx", "GGML_AVX", avx},
        {"avx2", "GGML_AVX2", avx2},
        {"bmi2", "GGML_BMI2", (b7 >> 8) & 1},
        {"fma", "GGML_FMA", avx && ((c1 >> 12) & 1)},
        {"f16c", "GGML_F16C", avx && ((c1 >> 29) & 1)},
        {"avx_vnni", "GGML_AVX_VNNI", avx2 && ((a71 >> 4) & 1)},
        {"avx512", "GGML_AVX512", avx512},
        {"avx512_vbmi", "GGML_AVX512_VBMI", avx512 && ((c7 >> 1) & 1)},
        {"avx512_vnni", "GGML_AVX512_VNNI", avx512 && ((c7 >> 11) & 1)},
        {"avx512_bf16", "GGML_AVX512_BF16", avx512 && ((a71 >> 5) & 1)},
        {"amx_tile", "GGML_AMX_TILE", 0},
        {"amx_int8", "GGML_AMX_INT8", 0},
        {"amx_bf16", "GGML_AMX_BF16", 0},
    };
    const int n = (int)(sizeof list / sizeof list[0]);
    const int cmake = argc > 1 && strcmp(argv[1], "--cmake") == 0;
    const char *sep = "";
    if (cmake) {
        printf("-DGGML_NATIVE=OFF");
        sep = " ";
    }
    for (int i = 0; i < n; ++i) {
        if (cmake) {
            printf("%s-D%s=%s", sep, list[i].cmake, list[i].on ? "ON" : "OFF");
        } else if (list[i].on) {
            printf("%s%s", sep, list[i].name);
            sep = " ";
        }
    }
    printf("\n");
    return 0;
}
