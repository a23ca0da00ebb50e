"""Federated multinomial logistic regression (softmax regression) on MNIST (DP-FedPAQ §IV).

The model (privacy-augmented FedPAQ, Mohammadi et al., Sec. IV; spec §6.2) is a linear
softmax classifier with parameter X ∈ R^{785×10} (d = 7850: a 784×10 weight matrix and the
bias row, fed by a constant 1 appended to every image, pixels scaled to [0, 1]). With
ã_j = [a_j; 1], p_j = softmax(Xᵀã_j) and e_j the one-hot label, the per-sample loss is the
cross-entropy ℓ(X; ξ_j) = −log p_{j, y_j} and

    f_i(X) = (1/n_i) Σ_{j∈D_i} ℓ(X; ξ_j) + (μ/2)‖X‖²,    f(X) = Σ_i (n_i/n) f_i(X),

the regulariser (μ = 10⁻³, the authors' weight decay) making f μ-strongly convex.

Closed forms used everywhere (spec §5.4): the per-sample gradient of the cross-entropy is the
outer product ã_j (p_j − e_j)ᵀ, so its Frobenius norm is ‖ã_j‖·‖p_j − e_j‖ and a clipped
mini-batch gradient is Ãᵀ(c ⊙ R)/b with rows R_j = p_j − e_j and c_j = min(1, C/‖g_j‖):
no per-sample gradient tensor is ever formed unless asked for
(:meth:`SoftmaxProblem.per_sample_gradients`, used by tests).

Storage (spec §10): the design matrix is stored once, float32, C-contiguous, with the rows
of each device consecutive (device i owns rows ``offsets[i]:offsets[i+1]``), so that a
mini-batch is a row gather and the full training loss one float32 matrix product.

Constants (spec §7.5; :func:`smoothness_constants`, :func:`gradient_constants`): μ exactly;
L by the Böhning bound ∇²CE ≼ ½ I ⊗ mean_j ã_jã_jᵀ, per device and per sample; σ², G², λ²
as maxima over a set of reference points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrepro.core.validate import check_array, check_int, check_nonnegative, check_positive

__all__ = [
    "N_CLASSES",
    "N_FEATURES",
    "SoftmaxProblem",
    "gradient_constants",
    "log_softmax",
    "softmax_problem",
    "design_matrix",
    "smoothness_constants",
    "solve_optimum",
]

#: Inputs per sample (784 pixels and the constant 1 of the bias).
N_FEATURES: int = 785
#: Classes (digits).
N_CLASSES: int = 10


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax (stable), same dtype as ``logits``; the last axis is the class."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _check_model(x: np.ndarray, name: str = "x", *, batch: bool = False) -> np.ndarray:
    arr = np.asarray(x)
    want = (N_FEATURES, N_CLASSES)
    if arr.shape == (N_FEATURES * N_CLASSES,):
        arr = arr.reshape(want)
    ok = arr.shape[-2:] == want and arr.ndim == (3 if batch else 2)
    if not ok:
        shape = f"(m, {N_FEATURES}, {N_CLASSES})" if batch else f"({N_FEATURES}, {N_CLASSES}) or (7850,)"
        raise ValueError(f"{name} must have shape {shape}, got {np.shape(x)}")
    if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a finite float array")
    return arr


@dataclass
class SoftmaxProblem:
    """Federated softmax regression: N devices, the data of device i in rows
    ``offsets[i]:offsets[i+1]`` of ``features`` (float32, (n, 785), last column 1).

    ``labels`` int64 (n,), ``mu`` the L2 weight, optional test set (``test_features``,
    ``test_labels``). Build it with :func:`softmax_problem` (MNIST: :mod:`fedrepro.dpfedpaq.mnist`).
    """

    features: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    mu: float
    test_features: np.ndarray | None = None
    test_labels: np.ndarray | None = None
    sq_norms: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_array("features", self.features, dtype=None, nonempty=False)
        feats = np.ascontiguousarray(self.features, dtype=np.float32)
        if feats.ndim != 2 or feats.shape[1] != N_FEATURES:
            raise ValueError(f"features must have shape (n, {N_FEATURES}), got {np.shape(self.features)}")
        labels = np.asarray(self.labels)
        if labels.shape != (feats.shape[0],) or labels.dtype.kind not in "iu":
            raise ValueError(f"labels must be integers of shape ({feats.shape[0]},), got {labels.shape}")
        if labels.size and (labels.min() < 0 or labels.max() >= N_CLASSES):
            raise ValueError(f"labels must lie in [0, {N_CLASSES - 1}]")
        offsets = np.asarray(self.offsets, dtype=np.int64)
        if (offsets.ndim != 1 or offsets.size < 2 or offsets[0] != 0 or offsets[-1] != feats.shape[0]
                or np.any(np.diff(offsets) < 1)):
            raise ValueError("offsets must increase strictly from 0 to n (every device at least one sample)")
        self.mu = check_nonnegative("mu", self.mu)
        self.features, self.labels, self.offsets = feats, labels.astype(np.int64), offsets
        self.sq_norms = np.einsum("ij,ij->i", feats, feats, dtype=np.float64).astype(np.float32)
        if (self.test_features is None) != (self.test_labels is None):
            raise ValueError("test_features and test_labels must be given together (or neither)")
        if self.test_features is not None:
            check_array("test_features", self.test_features, dtype=None)
            tl = check_array("test_labels", self.test_labels, dtype=None, ndim=1)
            if np.shape(self.test_features) != (tl.shape[0], N_FEATURES) or tl.dtype.kind not in "iu":
                raise ValueError(f"test_features must have shape (m, {N_FEATURES}) and test_labels integer shape "
                                 f"(m,), got {np.shape(self.test_features)} and {tl.dtype} {tl.shape}")
            self.test_features = np.ascontiguousarray(self.test_features, dtype=np.float32)
            self.test_labels = np.asarray(self.test_labels, dtype=np.int64)

    # ------------------------------------------------------------------ sizes
    @property
    def n_devices(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        """n_i per device (int64, (N,))."""
        return np.diff(self.offsets)

    @property
    def dim(self) -> int:
        return N_FEATURES * N_CLASSES

    def device_rows(self, i: int) -> slice:
        i = check_int("i (device)", i, 0, self.n_devices - 1)
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    # ------------------------------------------------------------------ full objective
    def _logits(self, x: np.ndarray, feats: np.ndarray) -> np.ndarray:
        return feats @ np.asarray(x, dtype=np.float32)

    def loss(self, x: np.ndarray) -> float:
        """Mean cross-entropy over all training samples (no regulariser): the curves' metric."""
        x = _check_model(x)
        logp = log_softmax(self._logits(x, self.features))
        picked = logp[np.arange(self.labels.size), self.labels]
        return float(-np.mean(picked, dtype=np.float64))

    def objective(self, x: np.ndarray) -> float:
        """f(x) = mean cross-entropy + (μ/2)‖x‖²."""
        x = _check_model(x)
        return self.loss(x) + 0.5 * self.mu * float(np.sum(np.square(x, dtype=np.float64)))

    def accuracy(self, x: np.ndarray, *, test: bool = True) -> float:
        """Fraction of correctly classified samples (test set by default, else training set)."""
        x = _check_model(x)
        if test:
            if self.test_features is None:
                raise ValueError("test=True needs a problem built with a test set")
            feats, labels = self.test_features, self.test_labels
        else:
            feats, labels = self.features, self.labels
        pred = np.argmax(self._logits(x, feats), axis=1)
        return float(np.mean(pred == labels))

    def loss_and_gradient(self, x: np.ndarray, *, chunk: int = 10_000) -> tuple[float, np.ndarray]:
        """f(x) and ∇f(x) in float64 arithmetic (data upcast in chunks of ``chunk`` rows), for
        the L-BFGS solve; ∇f = Ãᵀ(P − Y)/n + μx."""
        x = np.asarray(_check_model(x), dtype=np.float64)
        n = self.labels.size
        total, grad = 0.0, np.zeros_like(x)
        for start in range(0, n, chunk):
            a = self.features[start:start + chunk].astype(np.float64)
            y = self.labels[start:start + chunk]
            logp = log_softmax(a @ x)
            total -= float(logp[np.arange(y.size), y].sum())
            r = np.exp(logp)
            r[np.arange(y.size), y] -= 1.0
            grad += a.T @ r
        return (total / n + 0.5 * self.mu * float(np.sum(x * x)),
                grad / n + self.mu * x)

    def device_gradients(self, x: np.ndarray) -> np.ndarray:
        """∇f_i(x) for every device (float64, (N, 785, 10)), regulariser included."""
        x = _check_model(x)
        r = _softmax(self._logits(x, self.features)).astype(np.float64)
        r[np.arange(self.labels.size), self.labels] -= 1.0
        out = np.empty((self.n_devices, N_FEATURES, N_CLASSES))
        for i in range(self.n_devices):  # constants only, not a training hot path
            rows = slice(self.offsets[i], self.offsets[i + 1])
            out[i] = self.features[rows].T.astype(np.float64) @ r[rows] / (rows.stop - rows.start)
        return out + self.mu * np.asarray(x, dtype=np.float64)

    # ------------------------------------------------------------------ per-sample forms
    def check_rows(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` as a 1-d integer index array into the records; ValueError otherwise."""
        rows = np.asarray(rows)
        if rows.dtype.kind not in "iu" or rows.ndim != 1:
            raise ValueError("rows must be a 1-d integer index array")
        if rows.size and (rows.min() < 0 or rows.max() >= self.labels.size):
            raise ValueError(f"rows must lie in [0, {self.labels.size - 1}]")
        return rows

    def residuals(self, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """R_j = p_j − e_{y_j} for the given rows (float32, (m, 10))."""
        x = _check_model(x)
        rows = self.check_rows(rows)
        r = _softmax(self._logits(x, self.features[rows]))
        r[np.arange(rows.size), self.labels[rows]] -= 1.0
        return r

    def per_sample_grad_norms(self, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """‖∇ℓ(x; ξ_j)‖ = ‖ã_j‖·‖p_j − e_j‖ of the cross-entropy part (float64, (m,)),
        without forming the per-sample gradients."""
        r = self.residuals(x, rows)
        return np.sqrt(self.sq_norms[rows].astype(np.float64)
                       * np.einsum("ij,ij->i", r, r, dtype=np.float64))

    def per_sample_gradients(self, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The materialised per-sample gradients ã_j(p_j − e_j)ᵀ, (m, 785, 10) float64 (tests,
        small m only)."""
        r = self.residuals(x, rows).astype(np.float64)
        return self.features[rows].astype(np.float64)[:, :, None] * r[:, None, :]

    def sample_variances(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per device: v_i(x) = mean_j ‖g_j‖² − ‖mean_j g_j‖² of the per-sample gradients of
        f_i (the regulariser cancels) and ‖∇f_i(x)‖², both (N,) float64."""
        x = _check_model(x)
        r = _softmax(self._logits(x, self.features)).astype(np.float64)
        r[np.arange(self.labels.size), self.labels] -= 1.0
        sq = self.sq_norms.astype(np.float64) * np.einsum("ij,ij->i", r, r)
        mean_sq = np.add.reduceat(sq, self.offsets[:-1]) / self.sizes
        grads = self.device_gradients(x)
        ce = grads - self.mu * np.asarray(x, dtype=np.float64)
        ce_sq = np.einsum("nij,nij->n", ce, ce)
        return mean_sq - ce_sq, np.einsum("nij,nij->n", grads, grads)


def design_matrix(images: np.ndarray) -> np.ndarray:
    """uint8 images (n, 28, 28) → float32 (n, 785): pixels/255 and a constant-1 last column."""
    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim < 2:
        raise ValueError(f"images must be uint8 of shape (n, ...), got {images.dtype} {images.shape}")
    flat = images.reshape(images.shape[0], -1)
    if flat.shape[1] != N_FEATURES - 1:
        raise ValueError(f"images must have {N_FEATURES - 1} pixels each, got {flat.shape[1]}")
    out = np.empty((flat.shape[0], N_FEATURES), dtype=np.float32)
    out[:, :-1] = flat.astype(np.float32) / np.float32(255)
    out[:, -1] = 1.0
    return out


def softmax_problem(images: np.ndarray, labels: np.ndarray, parts: Sequence[np.ndarray], *,
                    mu: float = 1e-3, per_device: int | None = None,
                    test_images: np.ndarray | None = None,
                    test_labels: np.ndarray | None = None) -> SoftmaxProblem:
    """The federated problem of a partition: device i holds the samples ``parts[i]`` (index
    arrays into ``images``); ``per_device`` keeps only the first samples of each device."""
    mu = check_nonnegative("mu", mu)
    if per_device is not None:
        per_device = check_int("per_device", per_device, 1)
        parts = [np.asarray(p)[:per_device] for p in parts]
    if len(parts) == 0 or any(len(p) == 0 for p in parts):
        raise ValueError("parts must be a non-empty list of non-empty index arrays")
    order = np.concatenate([np.asarray(p) for p in parts])
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])])
    labels = np.asarray(labels)
    test_x = None if test_images is None else design_matrix(test_images)
    test_y = None if test_labels is None else np.asarray(test_labels, dtype=np.int64)
    return SoftmaxProblem(design_matrix(np.asarray(images)[order]), labels[order].astype(np.int64),
                          offsets, mu, test_x, test_y)


def solve_optimum(problem: SoftmaxProblem, *, gtol: float = 1e-8, max_iter: int = 20_000,
                  x0: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """x* = argmin f by scipy's L-BFGS-B in float64; returns (x*, info) with info the final
    gradient norm, objective, iterations and whether ‖∇f(x*)‖ ≤ ``gtol``."""
    from scipy.optimize import minimize

    gtol = check_positive("gtol", gtol)
    max_iter = check_int("max_iter", max_iter, 1)
    start = np.zeros(problem.dim) if x0 is None else np.asarray(_check_model(x0), dtype=float).ravel()

    def fun(v: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = problem.loss_and_gradient(v.reshape(N_FEATURES, N_CLASSES))
        return f, g.ravel()

    res = minimize(fun, start, jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "maxfun": 2 * max_iter, "gtol": gtol * 1e-2,
                            "ftol": 0.0, "maxcor": 30})
    x = res.x.reshape(N_FEATURES, N_CLASSES)
    f, g = problem.loss_and_gradient(x)
    gnorm = float(np.linalg.norm(g))
    return x, {"objective": f, "grad_norm": gnorm, "iterations": int(res.nit),
               "converged": gnorm <= gtol, "message": str(res.message)}


def smoothness_constants(problem: SoftmaxProblem) -> dict[str, Any]:
    """L by the Böhning bound (spec §7.5): the CE Hessian is ≼ ½ I ⊗ mean_j ã_jã_jᵀ, so

    * per device L_i = ½ λ_max(Ã_iᵀÃ_i/n_i) + μ (largest eigenvalue of a 785×785 Gram matrix, Lanczos),
    * per sample L_ℓ = ½ max_j ‖ã_j‖² + μ, and globally L_f = ½ λ_max(ÃᵀÃ/n) + μ;

    returns ``L_devices`` (N,), ``L_max`` = max_i L_i, ``L_sample``, ``L_global``, ``mu`` and
    the condition number ``kappa`` = L_max/μ (inf if μ = 0)."""
    from scipy.sparse.linalg import eigsh

    def top(gram: np.ndarray) -> float:  # largest eigenvalue by Lanczos (fast, to ~1e-10)
        v0 = np.ones(gram.shape[0])
        return float(eigsh(gram, k=1, which="LA", v0=v0, tol=1e-12, return_eigenvectors=False)[0])

    feats = problem.features
    L_dev = np.empty(problem.n_devices)
    for i in range(problem.n_devices):  # 100 eigenproblems of size 785: constants only
        a = feats[problem.offsets[i]:problem.offsets[i + 1]].astype(np.float64)
        L_dev[i] = 0.5 * top(a.T @ a / a.shape[0]) + problem.mu
    gram = np.zeros((N_FEATURES, N_FEATURES))
    for start in range(0, feats.shape[0], 10_000):
        a = feats[start:start + 10_000].astype(np.float64)
        gram += a.T @ a
    L_glob = 0.5 * top(gram / feats.shape[0]) + problem.mu
    L_max = float(L_dev.max())
    return {"L_devices": L_dev, "L_max": L_max,
            "L_sample": 0.5 * float(problem.sq_norms.max()) + problem.mu,
            "L_global": float(L_glob), "mu": problem.mu,
            "kappa": L_max / problem.mu if problem.mu > 0 else float("inf")}


def gradient_constants(problem: SoftmaxProblem, points: Sequence[np.ndarray], batch_size: int) -> dict[str, Any]:
    """σ², G², λ² of Assumptions 3, 6, 5 as maxima over reference ``points`` (spec §7.5):

    * v_i(x) = mean_j ‖g_j‖² − ‖∇f_i(x) − μx‖² (per-sample variance, closed-form norms);
      σ² = max_{i,x} v_i(x) (so a mini-batch of b with replacement has variance ≤ σ²/b);
    * G² = max_{i,x} (v_i(x)/b + ‖∇f_i(x)‖²) (second moment of a mini-batch gradient);
    * λ² = max_x (1/N) Σ_i ‖∇f_i(x) − ∇f(x)‖² with ∇f = (1/N) Σ_i ∇f_i (equal weights,
      as in the analysis).

    Returns the three maxima and the per-point values (lists, one entry per point).
    """
    batch_size = check_int("batch_size", batch_size, 1)
    if len(points) == 0:
        raise ValueError("points must contain at least one model")
    sig, gsq, lam = [], [], []
    for x in points:
        x = _check_model(x)
        var, gn2 = problem.sample_variances(x)
        grads = problem.device_gradients(x)
        mean = grads.mean(axis=0)
        lam.append(float(np.mean(np.einsum("nij,nij->n", grads - mean, grads - mean))))
        sig.append(float(var.max()))
        gsq.append(float(np.max(var / batch_size + gn2)))
    return {"sigma2": max(sig), "G2": max(gsq), "lambda2": max(lam),
            "sigma2_points": sig, "G2_points": gsq, "lambda2_points": lam}
