/* Small vector kernels shared by the compiled solvers.
 *
 * Why C and not Cython: random-feature solvers spend their time in cos() of phases (DESIGN.md §7).
 * Declaring cos/cosf with the `simd` attribute lets GCC call glibc's libmvec vector variants
 * (_ZGV*_cosf: 4/8/16 lanes) from a plain loop, and target_clones picks SSE/AVX2/AVX-512 at load
 * time, so one portable build runs at the machine's full SIMD width. -ffast-math is NOT used (it
 * would break NaN checks); only -fno-math-errno, which the vector variants need.
 * Elsewhere (clang, macOS, non-x86) the same loops compile to scalar libm calls.
 */
#ifndef KB_SIMD_H
#define KB_SIMD_H
#include <math.h>
#include <stddef.h>

#ifdef _OPENMP
#define KB_OPENMP 1
#else
#define KB_OPENMP 0
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((simd("notinbranch"))) float cosf(float);
__attribute__((simd("notinbranch"))) double cos(double);
#define KB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KB_CLONES
#endif

/* z[j] = cos(z[j] + shift[j]) : phase -> random Fourier feature (the sqrt(2) lives in the coefficients) */
KB_CLONES static void kb_cos_shift_f32(float *restrict z, const float *restrict shift, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) z[j] = cosf(z[j] + shift[j]);
}
KB_CLONES static void kb_cos_shift_f64(double *restrict z, const double *restrict shift, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) z[j] = cos(z[j] + shift[j]);
}

/* sum_j z[j] * a[j] with float64 accumulation: float32 features, float64 coefficients */
KB_CLONES static double kb_dot_f32(const float *restrict z, const double *restrict a, ptrdiff_t n) {
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (ptrdiff_t j = 0; j < n; j++) s += (double)z[j] * a[j];
    return s;
}
KB_CLONES static double kb_dot_f64(const double *restrict z, const double *restrict a, ptrdiff_t n) {
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (ptrdiff_t j = 0; j < n; j++) s += z[j] * a[j];
    return s;
}
#endif
