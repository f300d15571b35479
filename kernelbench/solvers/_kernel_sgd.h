/* The RBF kernel row of the exact-kernel baselines (_kernel_sgd.pyx), vectorised as _simd.h's cos:
 * declaring exp with the `simd` attribute lets GCC call glibc's libmvec exp (_ZGV*_exp) from a plain
 * loop; KB_CLONES (from _simd.h) builds SSE/AVX2/AVX-512 versions picked at load time. Elsewhere the
 * loop compiles to scalar exp calls. No -ffast-math (NaN checks stay meaningful).
 */
#ifndef KB_KERNEL_SGD_H
#define KB_KERNEL_SGD_H
#include "_simd.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((simd("notinbranch"))) double exp(double);
#endif

/* g[j] <- exp(-gamma * max(0, xnorm + snorm[j] - 2 g[j])): inner products -> RBF kernel values
 * (||x - s||^2 = ||x||^2 + ||s||^2 - 2 x.s; the max clips rounding below 0 for x = s) */
KB_CLONES static void kb_rbf_from_dots(double *restrict g, const double *restrict snorm, double xnorm,
                                       double gamma, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) {
        double sq = xnorm + snorm[j] - 2.0 * g[j];
        sq = sq > 0.0 ? sq : 0.0;
        g[j] = exp(-gamma * sq);
    }
}
#endif
