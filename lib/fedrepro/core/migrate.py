"""Carry stored results over a change of the store's identities, without recomputing them.

``python -m fedrepro.core.migrate --reason TEXT [NAME ...]`` rewrites stored results under
the current identity rules -- the declared identity, the config hash and the code hash of
where the config class and its run functions live now -- leaving their values (``result``,
``units``) and their config fields untouched (the runner is renamed to where its functions
live now), and appends to each result's ``meta["adopted"]`` the hashes it had, the format it
was written in and ``reason``.

This is the only way a result becomes fresh without being computed, so it is narrow:

* it refuses a result whose config cannot be rebuilt, or whose rebuilt config's fields
  differ from the stored ones (a changed default or field), or which is corrupt;
* it is meant for changes that move code without changing what it computes (the split of
  runs from views, a change of how identities are hashed), and its use must be followed by
  ``make verify``, which recomputes the adopted results from the code and compares them
  with the carried values, within each config's tolerance;
* every adoption stays visible in the result's metadata, with its reason, until the result
  is next recomputed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedrepro.core import cache
from fedrepro.core.records import config_class, config_from_dict, config_hash, config_to_dict, identity

__all__ = ["adopt", "main"]


def _rebuild(payload: dict[str, Any]) -> Any:
    declared = payload.get("identity")
    if declared is None:
        raise ValueError("it was written before identities were declared (no identity): recompute it")
    config_class(declared["part"], declared["experiment"])  # exists and is unique
    return config_from_dict(payload["class"], payload["config"], declared)


def adopt(path: Path, reason: str) -> str:
    """Rewrite the stored result at ``path`` under the current identity rules (see the module
    docstring); returns what was done (``"adopted"``, ``"fresh"``) or raises ``ValueError``."""
    if not reason.strip():
        raise ValueError("reason must say why the results may be carried over without recomputing")
    path = Path(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    if payload.get("digest") != cache.payload_digest(payload):
        raise ValueError(f"{path.parent.name}/{path.name} is corrupt (digest mismatch): it is never carried over")
    if payload.get("format") == cache.FORMAT_VERSION and cache.is_fresh(path)[0]:
        return "fresh"
    config = _rebuild(payload)
    if config_to_dict(config) != payload["config"]:
        raise ValueError(f"{path.parent.name}/{path.name}: its config's fields differ from the stored ones "
                         "(a default or field changed): recompute it")
    runner = cache.current_runner(config, payload.get("runner"))
    roots = cache._code_roots(config, runner)
    old_meta = payload.get("meta") or {}
    record = {"reason": reason, "format": payload.get("format"), "config_hash": payload.get("config_hash"),
              "code_hash": payload.get("code_hash")}
    meta = {**old_meta, "adopted": [*old_meta.get("adopted", []), record]}
    new = {
        "format": cache.FORMAT_VERSION,
        "identity": identity(config),
        "class": cache._class_path(type(config)),
        "config": payload["config"],
        "config_hash": config_hash(config),
        "code_roots": roots,
        "code_hash": cache.code_hash(roots),
        "runner": runner,
        "result": payload["result"],
        "meta": meta,
    }
    if "units" in payload:
        new["units"] = payload["units"]
    new["digest"] = cache.payload_digest(new)
    cache.atomic_write_text(path, cache._dumps(new))
    return "adopted"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; returns the exit status (1 when any result could not be carried over)."""
    parser = argparse.ArgumentParser(prog="python -m fedrepro.core.migrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="only results whose <part>/<name> contains one of these")
    parser.add_argument("--reason", required=True, help="why these results may be carried over")
    parser.add_argument("--store", type=Path, default=None, help="the store (default: the committed one)")
    args = parser.parse_args(argv)
    files = cache.stored_files(args.store)
    if args.names:
        files = [f for f in files if any(n in f"{f.parent.name}/{f.stem}" for n in args.names)]
    failed = 0
    for path in files:
        try:
            what = adopt(path, args.reason)
        except (ValueError, LookupError, ImportError, AttributeError, KeyError) as exc:
            failed += 1
            what = f"REFUSED: {exc}"
        print(f"{path.parent.name}/{path.stem}: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
