"""The profiles every experiment config knows: ``paper`` (the papers' settings) and ``quick``
(every experiment shrunk so that the whole book runs in a few minutes; used by the tests)."""

from __future__ import annotations

__all__ = ["PROFILES", "check_profile"]

#: ``paper``: the papers' settings; ``quick``: every experiment shrunk so that the whole
#: book runs in a few minutes (used by the tests).
PROFILES: tuple[str, ...] = ("paper", "quick")


def check_profile(profile: str) -> str:
    """Validate the chapters' ``profile`` parameter."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    return profile
