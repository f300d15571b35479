/* Budgeted kernel SGD (BSGD, BGS3VM): the compiled pieces shared through _budget.pxd.
 * Glasmachers & Qaadan, "Speeding up BSGD SVM training with precomputed golden section search". */
#ifndef KB_BUDGET_H
#define KB_BUDGET_H
#include <math.h>
#include <stddef.h>

#define KB_GSS_EPS_STANDARD 0.01      /* the paper's "GSS-standard" precision */
#define KB_GSS_EPS_PRECISE 1e-10      /* "GSS-precise", also used to compute the lookup tables */
#define KB_INVPHI 0.6180339887498949  /* 1/φ, the golden ratio's reciprocal */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((simd("notinbranch"))) double exp(double);
#define KB_BSGD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KB_BSGD_CLONES
#endif

/* k[j] = exp(c * d2[j]): kernel values through glibc's vector exp (libmvec) */
KB_BSGD_CLONES static void kb_bsgd_exp_scaled(double *restrict k, const double *restrict d2,
                                              double c, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) k[j] = exp(c * d2[j]);
}

/* Σ_j a[j] exp(-γ‖x − sv_j‖²) over the n SVs stored column-wise (SVT: d × cap, SV j is
 * column j), leaving ‖x − sv_j‖² in dist and the kernel values in kval. The dot products run
 * as d axpys over the SVs (vectorised over j, no reduction), skipping zero features of x:
 * a sparse row (a9a: 14 of 123 features) costs only its non-zeros. */
KB_BSGD_CLONES static double kb_bsgd_f(const double *restrict x, ptrdiff_t d,
                                       const double *restrict SVT, ptrdiff_t cap, ptrdiff_t n,
                                       const double *restrict norms, const double *restrict a,
                                       double neg_gamma, double *restrict dist,
                                       double *restrict kval) {
    double nx = 0.0, f = 0.0;
    for (ptrdiff_t k = 0; k < d; k++) nx += x[k] * x[k];
    for (ptrdiff_t j = 0; j < n; j++) dist[j] = 0.0;
    for (ptrdiff_t k = 0; k < d; k++) {
        const double xk = x[k];
        if (xk != 0.0) {
            const double *restrict col = SVT + k * cap;
            for (ptrdiff_t j = 0; j < n; j++) dist[j] += xk * col[j];
        }
    }
    for (ptrdiff_t j = 0; j < n; j++) {
        const double d2 = norms[j] + nx - 2.0 * dist[j];
        dist[j] = d2 > 0.0 ? d2 : 0.0;
    }
    for (ptrdiff_t j = 0; j < n; j++) kval[j] = exp(neg_gamma * dist[j]);
#pragma omp simd reduction(+ : f)
    for (ptrdiff_t j = 0; j < n; j++) f += kval[j] * a[j];
    return f;
}
#endif
