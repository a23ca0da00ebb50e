"""ALI-DPFL's data setting and fixed-τ budget against plain loops written from §VI-A of the
paper and the spec: the label-sorted shards ("sorted the training data based on numerical
labels and divided it equally into 400 fragments", each client "assigned 40 random data
fragments"; the shard draw is the same ``rng.permutation`` call), the pixel scaling to [−1, 1],
and the number of rounds a fixed-τ run fits in its budgets.
"""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.alidpfl import budget, setting


def _arrays(n_train=400, n_test=30, seed=0):
    rng = np.random.default_rng(seed)
    tr_y = np.repeat(np.arange(10), n_train // 10)
    rng.shuffle(tr_y)
    return (rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8), tr_y,
            rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8), rng.integers(0, 10, n_test))


@pytest.mark.parametrize("n_clients, n_shards, per_client", [(4, 40, 10), (5, 40, 4)])
def test_label_shards_and_scaling_by_a_plain_loop(n_clients, n_shards, per_client):
    tr_x, tr_y, te_x, te_y = _arrays()
    s = setting.FederatedSetting(n_clients=n_clients, n_shards=n_shards, shards_per_client=per_client)
    data = setting.build_clients(s, np.random.default_rng(5), arrays=(tr_x, tr_y, te_x, te_y))
    order = sorted(range(len(tr_y)), key=lambda i: int(tr_y[i]))  # Python's sort is stable
    size = len(tr_y) // n_shards
    shards = [order[j * size:(j + 1) * size] for j in range(n_shards)]
    drawn = np.random.default_rng(5).permutation(n_shards)  # the draw of the shards
    assert len(data.clients) == n_clients
    for i, client in enumerate(data.clients):
        idx = sorted(k for j in drawn[i * per_client:(i + 1) * per_client] for k in shards[int(j)])
        assert client.y.tolist() == [int(tr_y[k]) for k in idx]  # exact
        want = np.array([[[[2.0 * float(tr_x[k, r, c]) / 255.0 - 1.0 for c in range(28)] for r in range(28)]]
                         for k in idx[:3]])
        # float32 against the float64 value 2p/255 − 1: within one float32 ulp of 1 (6e-8)
        np.testing.assert_allclose(client.x[:3], want, rtol=0, atol=1.2e-7)
        assert client.x.shape == (len(idx), 1, 28, 28) and client.x.dtype == np.float32
    assert data.test_y.tolist() == te_y.tolist()


def test_scale_images_per_pixel_and_channels_first():
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (2, 3, 4, 3), dtype=np.uint8)  # (n, h, w, c)
    out = setting.scale_images(img)
    assert out.shape == (2, 3, 3, 4)
    for n in range(2):
        for ch in range(3):
            for r in range(3):
                for c in range(4):
                    # within 1.2e-7 absolute of 2p/255 − 1 (float32)
                    assert abs(float(out[n, ch, r, c]) - (2 * int(img[n, r, c, ch]) / 255 - 1)) <= 1.2e-7
    assert setting.scale_images(np.array([[[0, 255]]], dtype=np.uint8)).tolist() == [[[[-1.0, 1.0]]]]


@pytest.mark.parametrize("rounds, iterations, tau", [(10, 100, 7), (10, 100, 10), (5, 100, 3), (40, 41, 41),
                                                     (3, 3, 1)])
def test_fixed_tau_stop_by_counting_rounds(rounds, iterations, tau):
    r = it = 0
    while r + 1 <= rounds and it + tau <= iterations:  # one more round of τ local iterations fits
        r, it = r + 1, it + tau
    assert budget.fixed_tau_stop(budget.Budgets(1.0, rounds, iterations), tau) == (r, it)  # exact
