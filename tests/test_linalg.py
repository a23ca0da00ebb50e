"""Kernel-independent spectral norms and canonical top singular vectors (core.linalg)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy.stats import ortho_group

from fedrepro.core import linalg


def _matrix_with_singular_values(values, seed=0, n=None):
    n = n or len(values)
    U = ortho_group.rvs(n, random_state=seed)
    V = ortho_group.rvs(n, random_state=seed + 1)
    return U @ np.diag(values) @ V.T, U, V


def test_repeated_top_singular_value_gives_one_canonical_vector():
    """Two SVD bases of the same top subspace give the same vector (the search path cannot
    depend on which basis a LAPACK kernel returns)."""
    values = [2.0, 2.0, 2.0, 1.0, 0.5]
    M, U, V = _matrix_with_singular_values(values)
    R = ortho_group.rvs(3, random_state=7)  # another basis of the top right singular subspace
    V2 = V.copy()
    V2[:, :3] = V[:, :3] @ R
    U2 = U.copy()
    U2[:, :3] = U[:, :3] @ R
    M2 = U2 @ np.diag(values) @ V2.T
    np.testing.assert_allclose(M, M2, atol=1e-12)  # the same matrix, written in another basis
    s1, v1 = linalg.top_singular(M)
    s2, v2 = linalg.top_singular(M2 + 1e-15 * np.eye(5))
    assert s1 == pytest.approx(2.0, rel=1e-12) and s2 == pytest.approx(2.0, rel=1e-12)
    np.testing.assert_allclose(v1, v2, atol=1e-9)
    assert np.linalg.norm(M @ v1) == pytest.approx(2.0, rel=1e-12)  # a top singular vector
    assert np.linalg.norm(v1) == pytest.approx(1.0) and v1[np.argmax(np.abs(v1))] > 0
    ones = np.ones(5)
    expected = V[:, :3] @ (V[:, :3].T @ ones)  # the projection of the reference vector
    np.testing.assert_allclose(v1, expected / np.linalg.norm(expected), atol=1e-9)


def test_simple_top_singular_value_vector_up_to_sign():
    M, _, V = _matrix_with_singular_values([3.0, 1.0, 0.2])
    s, v = linalg.top_singular(M)
    assert s == pytest.approx(3.0, rel=1e-12)
    assert abs(v @ V[:, 0]) == pytest.approx(1.0, rel=1e-12)


def test_spectral_norm_falls_back_when_gesdd_does_not_converge(monkeypatch):
    """What OpenBLAS's Zen/Haswell gesdd did on a 128 x 128 round Jacobian: raise."""
    M, _, _ = _matrix_with_singular_values([1.5, 1.5, 0.3])

    def no_convergence(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(scipy.linalg, "svdvals", no_convergence)
    assert linalg.spectral_norm(M) == pytest.approx(1.5, rel=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="M must be a non-empty matrix"):
        linalg.spectral_norm(np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        linalg.spectral_norm(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="reference must have shape"):
        linalg.top_singular(np.eye(3), reference=np.ones(2))
