"""Training refuses what would make it silently wrong: bad plans and data, and checkpoints
of another run or damaged ones (each of these was accepted before)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import torch

from fedrepro.alidpfl import budget, setting, tau_rule, training

SHAPE = (1, 28, 28)


def _data(x_edit=None, y_edit=None) -> setting.FederatedData:
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (n,) + SHAPE).astype(np.float32) for n in (20, 30)]
    ys = [rng.integers(0, 10, n).astype(np.int64) for n in (20, 30)]
    clients = tuple(setting.ClientData(x, y) for x, y in zip(xs, ys, strict=True))
    # edited in place after the clients are built (ClientData checks at construction), so
    # that train()'s own check of the data is what meets the bad record
    if x_edit:
        x_edit(xs)
    if y_edit:
        y_edit(ys)
    return setting.FederatedData(clients, rng.uniform(-1, 1, (10,) + SHAPE).astype(np.float32),
                                 rng.integers(0, 10, 10).astype(np.int64))


def _plan(**kw) -> training.RunPlan:
    base = dict(budgets=budget.Budgets(1.0, 4, 4), tau=1, q=0.3, eval_rounds=(), curve_every=10 ** 6,
                curve_size=5, checkpoint_every=1)
    base.update(kw)
    return training.RunPlan(**base)


def _set(seq, i, j, value):
    seq[i][j] = value


@pytest.mark.parametrize(("edit", "message"), [
    (dict(x_edit=lambda xs: _set(xs, 1, 7, np.nan)), r"client 1: image 7 holds a non-finite value"),
    (dict(x_edit=lambda xs: _set(xs, 0, 3, np.inf)), r"client 0: image 3"),
    (dict(y_edit=lambda ys: _set(ys, 1, 4, 10)), r"client 1: label 10 of record 4 is outside 0..9"),
    (dict(y_edit=lambda ys: _set(ys, 0, 0, -1)), r"client 0: label -1 of record 0"),
])
def test_bad_training_data_is_rejected_naming_the_client_and_record(edit, message):
    with pytest.raises(ValueError, match=message):
        training.train(_plan(), _data(**edit))


@pytest.mark.parametrize(("fields", "name"), [
    (dict(eta=0.0), "eta"), (dict(clip_norm=-1.0), "clip_norm"), (dict(divisor=0.0), "divisor"),
    (dict(q=0.0), "q"), (dict(q=1.5), "q"), (dict(sigma=float("nan")), "sigma"),
    (dict(budgets=None), "budgets"), (dict(eval_rounds=(-1,)), "eval_rounds"),
    (dict(eval_rounds=("a",)), "eval_rounds"), (dict(eval_rounds=[3]), "eval_rounds"),
    (dict(seed=-1), "seed"), (dict(method="gpu"), "method"), (dict(clip=False), "clip"),
])
def test_plans_are_checked_at_construction_under_the_fields_own_names(fields, name):
    with pytest.raises(ValueError, match=name):
        _plan(**fields)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: tau_rule.Constants(float("nan"), 0.1, 0.1, 1.0, 1.0), "rho"),
    (lambda: tau_rule.Constants(0.1, -0.1, 0.1, 1.0, 1.0), "beta"),
    (lambda: tau_rule.Constants(0.1, 0.1, 0.1, 1.0, -1.0), "omega"),
    (lambda: tau_rule.ClientReport(1.0, 1.0, np.zeros(3), np.zeros(3), -1.0), "distance"),
    (lambda: tau_rule.ClientReport(1.0, 1.0, np.zeros(3), np.zeros(3), float("nan")), "distance"),
    (lambda: tau_rule.ClientReport(1.0, 1.0, np.full(3, np.nan), np.zeros(3), 1.0), "grad_local"),
    (lambda: tau_rule.horizon(np.arange(1, 4), 0, -1, 5), "rounds_left"),
    (lambda: tau_rule.choose_tau(None, tau_prev=1, eta=0.5, noise=0.1, iterations_done=0, rounds_left=1,
                                 iterations_left=1), "constants"),
    (lambda: budget.BudgetCounter(budget.Budgets(1.0, 5, 5), rounds_done=-100), "rounds_done"),
    (lambda: budget.BudgetCounter(budget.Budgets(1.0, 5, 5), iterations_done=6), "iterations_done"),
])
def test_tau_rule_and_budget_inputs_are_range_checked(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _checkpointed(tmp_path, plan, rounds=2):
    assert training.train(plan, _data(), checkpoint_dir=tmp_path, stop_after_rounds=rounds) is None
    return tmp_path / training.CHECKPOINT_NAME


@pytest.mark.parametrize("other", [dict(seed=1), dict(q=0.2), dict(tau=2, budgets=budget.Budgets(1.0, 4, 8)),
                                   dict(budgets=budget.Budgets(1.0, 3, 3))])
def test_a_checkpoint_of_another_plan_is_refused(tmp_path, other):
    torch.set_num_threads(1)
    _checkpointed(tmp_path, _plan())
    with pytest.raises(training.CheckpointError, match=r"checkpoint\.pt .*another plan.*delete checkpoint\.pt"):
        training.train(_plan(**other), _data(), checkpoint_dir=tmp_path)


def test_a_checkpoint_of_other_data_is_refused(tmp_path):
    torch.set_num_threads(1)
    _checkpointed(tmp_path, _plan())
    other = _data(x_edit=lambda xs: _set(xs, 0, 0, 0.5))
    with pytest.raises(training.CheckpointError, match="another plan, data or code"):
        training.train(_plan(), other, checkpoint_dir=tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "overwrite", "garbage"])
def test_a_damaged_checkpoint_is_refused_with_the_file_and_the_fix(tmp_path, damage):
    torch.set_num_threads(1)
    path = _checkpointed(tmp_path, _plan())
    raw = bytearray(path.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "overwrite":
        raw[len(raw) // 2: len(raw) // 2 + 1024] = os.urandom(1024)
    else:
        raw = bytearray(b"PK\x03\x04 not a checkpoint")
    path.write_bytes(bytes(raw))
    with pytest.raises(training.CheckpointError, match=r"checkpoint\.pt .*delete checkpoint\.pt"):
        training.train(_plan(), _data(), checkpoint_dir=tmp_path)


def test_orphan_temporary_files_are_removed_and_a_resume_equals_a_whole_run(tmp_path):
    torch.set_num_threads(1)
    whole = training.train(_plan(), _data(), return_model=True)
    _checkpointed(tmp_path, _plan())
    orphan = tmp_path / f".{training.CHECKPOINT_NAME}.abc123.tmp"
    orphan.write_bytes(b"x" * 4096)
    old = time.time() - 3600
    os.utime(orphan, (old, old))
    fresh = tmp_path / f".{training.CHECKPOINT_NAME}.def456.tmp"  # a writer may still own it
    fresh.write_bytes(b"y")
    resumed = training.train(_plan(), _data(), checkpoint_dir=tmp_path, return_model=True)
    assert not orphan.exists() and fresh.exists()
    np.testing.assert_array_equal(whole["model"], resumed["model"])
    assert whole["final_accuracy"] == resumed["final_accuracy"]
