"""r-Pegasos / n-Pegasos (Dai et al. 2014's fixed-approximation baselines): the mini-batch
Pegasos step against a per-sample NumPy reference, and the models against exact-kernel SVC
(many random features / full-rank Nyström approach the exact kernel machine)."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.svm import SVC, LinearSVC

import reference_baselines as ref
from kernelbench.baselines.random_features import PegasosClassifier, SDCAFeaturesClassifier
from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms


@pytest.mark.parametrize("feature_map", ["random_fourier", "nystroem"])
@pytest.mark.parametrize("loss,projection", [("hinge", True), ("hinge", False), ("logistic", False)])
def test_pegasos_matches_reference_step_for_step(feature_map, loss, projection):
    X, y = make_moons(47, noise=0.3, random_state=0)
    est = PegasosClassifier(feature_map=feature_map, loss=loss, gamma=0.8, C=0.3, n_components=20,
                            batch_size=5, projection=projection, random_state=3)
    est.begin(X, y)
    rows = est._order.copy()
    est.run(est.steps_per_pass)
    # the feature map is scikit-learn's: recompute it independently from the fitted map's seed
    seed = est.map_.random_state
    cls = RBFSampler(gamma=0.8, n_components=20, random_state=seed) if feature_map == "random_fourier" \
        else Nystroem(gamma=0.8, n_components=20, random_state=seed)
    Z = cls.fit(X).transform(X)
    Y = np.where(y == 1, 1.0, -1.0)
    w = ref.pegasos(Z, Y, rows, batch_size=5, lam=est.lambda_, loss=loss, projection=projection)
    np.testing.assert_allclose(est.coef_, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.decision_function(X), Z @ w, rtol=1e-10, atol=1e-10)


def _moons():
    X, y = make_moons(400, noise=0.25, random_state=0)
    Xt, yt = make_moons(2000, noise=0.25, random_state=1)
    return X, y, Xt, yt


def test_many_random_features_approach_exact_svc():
    X, y, Xt, yt = _moons()
    svc = SVC(C=1.0, gamma=1.0).fit(X, y)
    few = PegasosClassifier(gamma=1.0, C=1.0, n_components=2, passes=20, random_state=0).fit(X, y)
    many = PegasosClassifier(gamma=1.0, C=1.0, n_components=2000, batch_size=16, passes=20,
                             random_state=0).fit(X, y)
    agree_many = np.mean(many.predict(Xt) == svc.predict(Xt))
    agree_few = np.mean(few.predict(Xt) == svc.predict(Xt))
    assert agree_many > 0.97 > agree_few
    assert many.score(Xt, yt) > svc.score(Xt, yt) - 0.02


def test_full_rank_nystroem_approaches_exact_svc():
    X, y, Xt, yt = _moons()
    svc = SVC(C=1.0, gamma=1.0).fit(X, y)
    est = PegasosClassifier(feature_map="nystroem", gamma=1.0, C=1.0, n_components=400, batch_size=16,
                            passes=20, random_state=0).fit(X, y)
    assert np.mean(est.predict(Xt) == svc.predict(Xt)) > 0.97


def test_registered_with_dais_rank_and_clear_errors():
    specs = algorithms()
    for name in ("r-pegasos", "n-pegasos"):
        assert specs[name].defaults()["n_components"] == 2**8      # Dai et al. §7
    X, y, _, _ = _moons()
    est = specs["n-pegasos"].build({"n_components": 1000}).fit(X, y)
    assert est.n_random_features_ == 400                        # rank ≤ n: every training point
    with pytest.raises(SolverError, match="loss must be"):
        PegasosClassifier(loss="squared").fit(X, y)
    est = PegasosClassifier(n_components=8)
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("feature_map", ["random_fourier", "nystroem"])
@pytest.mark.parametrize("loss", ["hinge", "smooth_hinge"])
def test_feature_sdca_matches_plain_sdca(feature_map, loss):
    X, y = make_moons(31, noise=0.3, random_state=2)
    est = SDCAFeaturesClassifier(feature_map=feature_map, loss=loss, gamma=0.8, C=0.5, n_components=12,
                                 batch_size=4, random_state=1)
    est.begin(X, y)
    rows = [est._order.copy()]
    est.run(est.steps_per_pass)
    est.run(2)
    rows.append(est._order[:8].copy())
    Z = est._Z
    Y = np.where(y == 1, 1.0, -1.0)
    alpha = ref.sdca_linear(Z, Y, np.concatenate(rows), loss=loss, lam=est.lambda_)
    np.testing.assert_allclose(est.dual_coef_, alpha, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(est.coef_, Z.T @ alpha / (est.lambda_ * len(X)), rtol=1e-10, atol=1e-13)


def test_feature_sdca_gap_closes_and_solution_is_linear_svc():
    X, y = make_moons(120, noise=0.3, random_state=0)
    est = SDCAFeaturesClassifier(gamma=1.0, C=1.0, n_components=30, batch_size=10, random_state=0)
    est.begin(X, y)
    gaps = []
    for _ in range(300):
        est.run(est.steps_per_pass)
        gaps.append(est.duality_gap())
    assert min(gaps) >= -1e-12 and gaps[0] > 1e-4 and gaps[-1] < 1e-8
    # (1/n)Σ hinge + λ/2‖w‖², λ = 1/(nC)  ⇔  LinearSVC(C, hinge, no intercept) on the same features
    svm = LinearSVC(C=1.0, loss="hinge", fit_intercept=False, dual=True, tol=1e-9, max_iter=10**6)
    svm.fit(est._Z, y)
    np.testing.assert_allclose(est.coef_, svm.coef_.ravel(), atol=1e-4)
