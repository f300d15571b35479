/* Small vector kernels shared by the compiled solvers.
 *
 * Why C and not Cython: random-feature solvers spend their time in cos() of phases, so its speed is theirs.
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
#include <string.h>

#ifdef _OPENMP
#define KB_OPENMP 1
#else
#define KB_OPENMP 0
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((simd("notinbranch"))) float cosf(float);
__attribute__((simd("notinbranch"))) double cos(double);
__attribute__((simd("notinbranch"))) float expf(float);
__attribute__((simd("notinbranch"))) double exp(double);
#define KB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/* with FMA (GCC's avx512f and avx2 targets do not include it): for new kernels only, since fused
 * multiply-adds round differently and the older kernels' results are kept bit for bit */
#define KB_CLONES_FMA __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KB_CLONES
#define KB_CLONES_FMA
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

/* z[j] = exp(min(z[j], 0)): −γ‖x − c‖² from its expansion ‖x‖² + ‖c‖² − 2x·c (which can round
 * above 0) -> the Gaussian kernel value, at most 1 */
KB_CLONES static void kb_exp_nonpositive_f32(float *restrict z, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) z[j] = expf(z[j] > 0.0f ? 0.0f : z[j]);   /* NaN stays NaN */
}
KB_CLONES static void kb_exp_nonpositive_f64(double *restrict z, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) z[j] = exp(z[j] > 0.0 ? 0.0 : z[j]);
}

/* Z[r][j] = Σ_k X[r][k] Ct[k][j] for R ≤ 4 rows r of X (p values each; Z rows ldz apart; Ct p × M,
 * row-major): the exponents of the Gaussian kernel against M centres from augmented rows. A tile of
 * 4 rows × 4 vectors of centres keeps its 16 sums in registers while k runs (each load of Ct serves
 * four rows). GCC's vector types compile to each clone's instructions (AVX-512/AVX2: one register
 * per vector; SSE: two). Every value is summed over k in the same order whatever R is, so a row's
 * values do not depend on the rows computed with it. */
typedef float kb_vf __attribute__((vector_size(32), aligned(4)));
typedef double kb_vd __attribute__((vector_size(32), aligned(8)));
#define KB_PHASES(NAME, T, V)                                                                       \
KB_CLONES_FMA static void NAME(T *restrict Z, ptrdiff_t ldz, const T *restrict X, ptrdiff_t R,         \
                           ptrdiff_t p, const T *restrict Ct, ptrdiff_t M) {                        \
    enum { L = sizeof(V) / sizeof(T), W = 4 * L };                                                  \
    /* rows past R repeat the last one (computed, not stored) */                                    \
    const T *x0 = X, *x1 = X + (R > 1) * p, *x2 = X + (R > 2 ? 2 : R - 1) * p,                      \
            *x3 = X + (R > 3 ? 3 : R - 1) * p;                                                      \
    ptrdiff_t j0 = 0;                                                                               \
    for (; j0 + W <= M; j0 += W) {                                                                  \
        V s[4][4] = {{0}};                                                                          \
        for (ptrdiff_t k = 0; k < p; k++) {                                                         \
            const T *c = Ct + k * M + j0;                                                           \
            V c0, c1, c2, c3;                                                                       \
            memcpy(&c0, c, sizeof(V)); memcpy(&c1, c + L, sizeof(V));                               \
            memcpy(&c2, c + 2 * L, sizeof(V)); memcpy(&c3, c + 3 * L, sizeof(V));                   \
            const T a[4] = {x0[k], x1[k], x2[k], x3[k]};                                            \
            for (int r = 0; r < 4; r++) {                                                           \
                s[r][0] += a[r] * c0; s[r][1] += a[r] * c1;                                         \
                s[r][2] += a[r] * c2; s[r][3] += a[r] * c3;                                         \
            }                                                                                       \
        }                                                                                           \
        for (ptrdiff_t r = 0; r < R; r++)                                                           \
            memcpy(Z + r * ldz + j0, s[r], sizeof(s[r]));                                           \
    }                                                                                               \
    for (ptrdiff_t r = 0; r < R; r++)                                                               \
        for (ptrdiff_t j = j0; j < M; j++) {                                                        \
            T s = 0;                                                                                \
            for (ptrdiff_t k = 0; k < p; k++) s += X[r * p + k] * Ct[k * M + j];                    \
            Z[r * ldz + j] = s;                                                                     \
        }                                                                                           \
}
KB_PHASES(kb_phases_f32, float, kb_vf)
KB_PHASES(kb_phases_f64, double, kb_vd)

/* acc[j] += s * z[j] in float64 */
KB_CLONES static void kb_axpy_f64(double *restrict acc, double s, const double *restrict z, ptrdiff_t n) {
#pragma omp simd
    for (ptrdiff_t j = 0; j < n; j++) acc[j] += s * z[j];
}

/* acc[j] += s * z[j]: float32 features into a float64 accumulator (a gradient Φᵀd row by row) */
KB_CLONES static void kb_axpy_f32(double *restrict acc, double s, const float *restrict z, ptrdiff_t n) {
#pragma omp simd
    for (ptrdiff_t j = 0; j < n; j++) acc[j] += s * (double)z[j];
}

/* ---- IEEE binary16 ("half") features --------------------------------------------------------------
 * Why: AsyDSSKL's inner loop streams random rows of its feature matrix from DRAM (memory-bound);
 * storing |phi| <= sqrt(2) in half precision (11 significant bits, relative rounding error <= 2^-11)
 * halves that traffic. Values are converted to float exactly (every half is a float) and rounded
 * float -> half to nearest-even, as IEEE 754 and NumPy's astype(float16) do. x86-64 with F16C uses
 * vcvtph2ps / vcvtps2ph (AVX-512 or AVX2 width, chosen once at run time); elsewhere the portable
 * bit-level conversions below give the same bits. */
#include <stdint.h>
#include <string.h>
typedef uint16_t kb_half;

static inline float kb_half_to_float_soft(kb_half h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
    if (exponent == 0) {                                   /* zero or subnormal: mantissa * 2^-24 (exact) */
        float f = (float)mantissa * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    if (exponent == 31) bits = sign | 0x7f800000u | (mantissa << 13);          /* inf / nan */
    else bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);          /* rebias 15 -> 127 */
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline kb_half kb_float_to_half_soft(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (kb_half)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));  /* inf / nan */
    if (ax >= 0x477ff000u) return (kb_half)(sign | 0x7c00u);          /* >= 65520 rounds to inf */
    if (ax < 0x38800000u) {                                           /* below 2^-14: a subnormal half */
        float a;
        memcpy(&a, &ax, sizeof a);
        float scaled = a * 16777216.0f;                               /* a * 2^24, exact */
        uint32_t m = (uint32_t)scaled;
        float rest = scaled - (float)m;
        if (rest > 0.5f || (rest == 0.5f && (m & 1u))) m++;          /* round to nearest even */
        return (kb_half)(sign | m);
    }
    uint32_t h = (ax - 0x38000000u) >> 13, rest = ax & 0x1fffu;       /* rebias 127 -> 15, 23 -> 10 bits */
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;         /* nearest even; may carry into the exponent */
    return (kb_half)(sign | h);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define KB_HALF_SIMD 1
/* 0: portable, 1: AVX2 + F16C + FMA, 2: AVX-512F + F16C; set once by kb_half_init() */
static int kb_half_level = 0;

static void kb_half_init(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("f16c")) kb_half_level = 2;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma")) kb_half_level = 1;
    else kb_half_level = 0;
}

__attribute__((target("avx512f,f16c"))) static double kb_dot_f16_avx512(const kb_half *restrict z, const double *restrict a, ptrdiff_t n) {
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    ptrdiff_t j = 0;
    for (; j + 16 <= n; j += 16) {
        s0 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(z + j)))), _mm512_loadu_pd(a + j), s0);
        s1 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(z + j + 8)))), _mm512_loadu_pd(a + j + 8), s1);
    }
    double s = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    for (; j < n; j++) s += (double)_cvtsh_ss(z[j]) * a[j];
    return s;
}
__attribute__((target("avx2,f16c,fma"))) static double kb_dot_f16_avx2(const kb_half *restrict z, const double *restrict a, ptrdiff_t n) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    ptrdiff_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(z + j)));
        s0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_loadu_pd(a + j), s0);
        s1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), _mm256_loadu_pd(a + j + 4), s1);
    }
    __m256d t = _mm256_add_pd(s0, s1);
    __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    double s = _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
    for (; j < n; j++) s += (double)_cvtsh_ss(z[j]) * a[j];
    return s;
}
__attribute__((target("avx512f,f16c"))) static void kb_axpy_f16_avx512(double *restrict acc, double s, const kb_half *restrict z, ptrdiff_t n) {
    __m512d vs = _mm512_set1_pd(s);
    ptrdiff_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm512_storeu_pd(acc + j, _mm512_fmadd_pd(vs, _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(z + j)))), _mm512_loadu_pd(acc + j)));
    for (; j < n; j++) acc[j] += s * (double)_cvtsh_ss(z[j]);
}
__attribute__((target("avx2,f16c,fma"))) static void kb_axpy_f16_avx2(double *restrict acc, double s, const kb_half *restrict z, ptrdiff_t n) {
    __m256d vs = _mm256_set1_pd(s);
    ptrdiff_t j = 0;
    for (; j + 4 <= n; j += 4)
        _mm256_storeu_pd(acc + j, _mm256_fmadd_pd(vs, _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(z + j)))), _mm256_loadu_pd(acc + j)));
    for (; j < n; j++) acc[j] += s * (double)_cvtsh_ss(z[j]);
}
__attribute__((target("avx2,f16c"))) static void kb_store_f16_f16c(kb_half *restrict dst, const float *restrict src, ptrdiff_t n) {
    ptrdiff_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm_storeu_si128((__m128i *)(dst + j), _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT));
    for (; j < n; j++) dst[j] = _cvtss_sh(src[j], _MM_FROUND_TO_NEAREST_INT);
}
#else
#define KB_HALF_SIMD 0
static int kb_half_level = 0;
static void kb_half_init(void) {}
#endif

/* the vector path in use (tests force each one in turn and compare the bits) */
static int kb_half_path(void) { return kb_half_level; }
static void kb_set_half_path(int level) { kb_half_level = level; }

/* one element (the inner loop reads one feature per sampled row): the exact bit-level conversion */
static inline float kb_half_to_float(kb_half h) { return kb_half_to_float_soft(h); }

/* sum_j z[j] * a[j], half features, float64 accumulation */
static double kb_dot_f16(const kb_half *restrict z, const double *restrict a, ptrdiff_t n) {
#if KB_HALF_SIMD
    if (kb_half_level == 2) return kb_dot_f16_avx512(z, a, n);
    if (kb_half_level == 1) return kb_dot_f16_avx2(z, a, n);
#endif
    double s = 0.0;
    for (ptrdiff_t j = 0; j < n; j++) s += (double)kb_half_to_float_soft(z[j]) * a[j];
    return s;
}

/* acc[j] += s * z[j], half features */
static void kb_axpy_f16(double *restrict acc, double s, const kb_half *restrict z, ptrdiff_t n) {
#if KB_HALF_SIMD
    if (kb_half_level == 2) { kb_axpy_f16_avx512(acc, s, z, n); return; }
    if (kb_half_level == 1) { kb_axpy_f16_avx2(acc, s, z, n); return; }
#endif
    for (ptrdiff_t j = 0; j < n; j++) acc[j] += s * (double)kb_half_to_float_soft(z[j]);
}

/* dst[j] = half(src[j]), round to nearest even */
static void kb_store_f16(kb_half *restrict dst, const float *restrict src, ptrdiff_t n) {
#if KB_HALF_SIMD
    if (kb_half_level > 0) { kb_store_f16_f16c(dst, src, n); return; }
#endif
    for (ptrdiff_t j = 0; j < n; j++) dst[j] = kb_float_to_half_soft(src[j]);
}
#endif
