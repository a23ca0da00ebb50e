"""Spectral norms and top singular vectors that do not depend on the LAPACK/BLAS kernel.

NumPy's SVD calls LAPACK's divide-and-conquer driver ``gesdd``, which on some OpenBLAS
kernels (seen on AMD Zen with OpenBLAS 0.3.31) fails to converge on a small, finite matrix
whose top singular value is repeated, and whose top singular vector is then not unique, so
a search that follows it depends on the kernel. Here:

* :func:`spectral_norm` needs no vectors (``gesdd`` without vectors, falling back to the
  QR-iteration driver ``gesvd``);
* :func:`top_singular` uses ``gesvd`` and returns a *canonical* top right singular vector:
  when the top singular value is repeated, the projection of a fixed reference vector onto
  the whole top singular subspace, so that the result does not depend on which basis of that
  subspace the kernel returned; the sign makes the largest entry positive.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

__all__ = ["spectral_norm", "top_singular"]

#: Singular values within this relative distance of the largest are treated as equal.
REPEATED_RTOL = 1e-9


def _matrix(M: Any, name: str) -> np.ndarray:
    A = np.asarray(M, dtype=float)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"{name} must be a non-empty matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} must have finite entries")
    return A


def spectral_norm(M: Any, name: str = "M") -> float:
    """Largest singular value ``||M||_2`` (no singular vectors computed)."""
    A = _matrix(M, name)
    try:
        return float(scipy.linalg.svdvals(A)[0])
    except (np.linalg.LinAlgError, ValueError):
        return float(scipy.linalg.svd(A, compute_uv=False, lapack_driver="gesvd")[0])


def top_singular(M: Any, reference: Any = None, name: str = "M") -> tuple[float, np.ndarray]:
    """``(sigma_1, v)``: the largest singular value and a canonical unit right singular vector.

    ``reference`` (default: the all-ones vector) picks the vector inside the top singular
    subspace when ``sigma_1`` is repeated (relative gap below :data:`REPEATED_RTOL`)."""
    A = _matrix(M, name)
    _, s, vt = scipy.linalg.svd(A, full_matrices=False, lapack_driver="gesvd")
    top = s[0]
    k = int(np.sum(s >= top * (1 - REPEATED_RTOL))) if top > 0 else vt.shape[0]
    basis = vt[:k]
    ref = np.ones(A.shape[1]) if reference is None else np.asarray(reference, dtype=float)
    if ref.shape != (A.shape[1],):
        raise ValueError(f"reference must have shape ({A.shape[1]},), got {ref.shape}")
    v = basis.T @ (basis @ ref)
    norm = np.linalg.norm(v)
    v = v / norm if norm > 1e-12 * max(1.0, np.linalg.norm(ref)) else basis[0].copy()
    i = int(np.argmax(np.abs(v)))
    return float(top), (v if v[i] >= 0 else -v)
