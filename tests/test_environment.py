"""The pinned environment: requirements, constraints and environment.yml agree, and the
running interpreter has exactly the pinned set (torch the CPU build)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]


def _lines(name: str) -> list[str]:
    out = []
    for line in (REPO / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def _constraints() -> dict[str, str]:
    pins = {}
    for line in _lines("constraints.txt"):
        req = Requirement(line)
        spec = list(req.specifier)
        assert len(spec) == 1 and spec[0].operator == "==", f"constraints.txt: {line} is not an exact pin"
        pins[canonicalize_name(req.name)] = spec[0].version
    return pins


def test_every_requirement_is_pinned_and_satisfied_by_its_pin():
    pins = _constraints()
    for line in _lines("requirements.txt"):
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is required but not pinned in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}: pin {pins[name]} violates {req.specifier}"


def test_torch_is_pinned_exactly_to_the_cpu_release():
    assert "torch==2.13.0" in _lines("requirements.txt")
    assert _constraints()["torch"] == "2.13.0"


def test_environment_yml_wraps_the_pip_files():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    deps = env["dependencies"]
    conda = [d for d in deps if isinstance(d, str)]
    assert sorted(d.split("=")[0] for d in conda) == ["pip", "python"]
    python = next(d for d in conda if d.startswith("python"))
    assert python == f"python={sys.version_info.major}.{sys.version_info.minor}"
    pip_block = next(d["pip"] for d in deps if isinstance(d, dict))
    assert "-r requirements.txt" in pip_block and "-c constraints.txt" in pip_block


def test_installed_versions_match_the_constraints():
    pins = _constraints()
    wrong = {}
    for name, version in pins.items():
        try:
            got = metadata.version(name)
        except metadata.PackageNotFoundError:
            wrong[name] = "missing"
            continue
        if got.split("+")[0] != version:
            wrong[name] = got
    assert wrong == {}, f"installed versions differ from constraints.txt: {wrong}"


def test_no_cuda_packages_installed():
    names = {canonicalize_name(d.metadata["Name"]) for d in metadata.distributions()}
    gpu = sorted(n for n in names if n.startswith(("nvidia-", "cuda-")) or n == "triton")
    assert gpu == []
    import torch

    assert torch.__version__.startswith("2.13.0") and not torch.cuda.is_available()
