"""The property-based contract of a public function (shared by the API contract tests).

A :class:`Spec` names each parameter's :class:`Kind`: values in its valid range (extremes
included), real numbers outside it and values of a wrong type. :func:`check_contract` draws
calls with hypothesis (derandomised: deterministic in CI) where none, one or two parameters
are bad, and requires: either the output passes the spec's check, or a ValueError/TypeError
names the offending parameter (TypeError for a wrong type, ValueError for an out-of-range
number; with all inputs valid only a ValueError naming a parameter may be raised).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

__all__ = ["Kind", "Spec", "check_contract"]


@dataclasses.dataclass(frozen=True)
class Kind:
    """Strategies for one parameter: values in its valid range (extremes included), real
    numbers outside it (ValueError expected) and values of a wrong type (TypeError)."""

    valid: st.SearchStrategy
    bad_range: st.SearchStrategy | None
    bad_type: st.SearchStrategy | None


@dataclasses.dataclass(frozen=True)
class Spec:
    """Parameters in the order they are drawn (a parameter may depend on earlier ones), the
    output check, fixed arguments, the name a parameter is reported under (validators take
    the name to report as an argument) and the number of examples."""

    params: dict[str, Kind | Callable[[dict], Kind]]
    out: Callable[[Any, dict], None]
    fixed: dict[str, Any] = dataclasses.field(default_factory=dict)
    reported_as: dict[str, str] = dataclasses.field(default_factory=dict)
    examples: int = 80


def _named(name: str, message: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


# A longer local campaign: FEDREPRO_CONTRACT_SCALE=20 runs 20 times as many examples.
_SCALE = int(os.environ.get("FEDREPRO_CONTRACT_SCALE", "1"))
_MODES = st.sampled_from(["valid", "valid", "valid", "one bad", "one bad", "two bad"])


def check_contract(fn: Callable[..., Any], spec: Spec) -> None:
    """Run the contract of ``fn`` (see the module docstring)."""
    @settings(max_examples=spec.examples * _SCALE, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(st.data())
    def check(data):
        mode = data.draw(_MODES, label="mode")
        names = list(spec.params)
        n_bad = {"valid": 0, "one bad": 1, "two bad": min(2, len(names))}[mode]
        bad = set(data.draw(st.lists(st.sampled_from(names), min_size=n_bad, max_size=n_bad, unique=True),
                            label="bad")) if n_bad else set()
        args, bad_kind = {}, {}
        for name in names:
            kind = spec.params[name]
            if not isinstance(kind, Kind):
                kind = kind(args)
            options = [(label, s) for label, s in (("range", kind.bad_range), ("type", kind.bad_type)) if s is not None]
            if name in bad and options:
                label, strategy = data.draw(st.sampled_from(options), label=f"{name} kind")
                bad_kind[name] = label
                args[name] = data.draw(strategy, label=name)
            else:
                args[name] = data.draw(kind.valid, label=name)
        try:
            result = fn(**args, **spec.fixed)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            reported = {name: spec.reported_as.get(name, name) for name in names}
            if bad_kind:
                assert any(_named(reported[n], message) for n in bad_kind), (message, bad_kind)
                if len(bad_kind) == 1:
                    (name, label), = bad_kind.items()
                    assert _named(reported[name], message), message
                    assert isinstance(exc, TypeError) == (label == "type"), (type(exc), label, message)
            else:
                assert not isinstance(exc, TypeError), message
                assert any(_named(reported[n], message) for n in names), message
            return
        except Exception as exc:  # noqa: BLE001 - anything else breaks the contract
            raise AssertionError(f"{type(exc).__name__}: {exc} for {args}") from exc
        assert not bad_kind, f"accepted {bad_kind}: {args} -> {result!r}"
        spec.out(result, {**args, **spec.fixed})

    check()
