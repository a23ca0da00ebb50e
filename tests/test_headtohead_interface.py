"""The head-to-head interface is a type (issue 49, item 5): every algorithm of both tasks
implements it, and ``run`` refuses an object that does not, naming what it lacks."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from fedrepro.core.validate import ParameterTypeError
from fedrepro.headtohead import algorithms, alidpfl, cnn_algorithms, interface


def _algorithm_classes():
    for module in (algorithms, cnn_algorithms, alidpfl):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and not cls.__name__.startswith("_") and hasattr(cls, "name"):
                yield cls


def test_every_algorithm_of_both_tasks_implements_the_interface():
    classes = list(_algorithm_classes())
    assert {"FedAvg", "DPFL", "PrivateFedPAQ", "FedPLT", "FedAvgCNN", "DPFLCNN", "PrivateFedPAQCNN",
            "FedPLTCNN", "ALIDPFL"} <= {c.__name__ for c in classes}
    for cls in classes:
        assert interface.missing_methods(cls) == [], cls.__name__
    assert isinstance(algorithms.FedAvg(), interface.HeadToHeadAlgorithm)
    assert isinstance(alidpfl.ALIDPFL, type) and issubclass(alidpfl.ALIDPFL, algorithms.UpdateAveraging)


class _NoMessage(algorithms.UpdateAveraging):
    """A server without a client computation, a privacy plan or a name."""

    def message_bits(self, d: int) -> float:
        return 32.0 * d


def test_run_refuses_an_object_that_lacks_a_method_and_names_it():
    with pytest.raises(ParameterTypeError, match=r"lacks name, privacy_plan, client_message"):
        algorithms.run(None, _NoMessage(), epsilon=None, delta=1e-5, uplink_budget_bits=1e9,
                       clients_per_round=2, seed=0)
    with pytest.raises(ParameterTypeError, match="lacks"):
        interface.check_algorithm(np.zeros(3))
    fedavg = algorithms.FedAvg()
    assert interface.check_algorithm(fedavg) is fedavg
