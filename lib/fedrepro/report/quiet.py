"""Imports that would otherwise print warnings into a chapter's outputs.

pooch (imported with the dataset loaders) imports ``tqdm.auto``, which warns on stderr in a
Jupyter kernel without ipywidgets; an unexpected stderr output fails the chapter's check
against its committed outputs. :func:`import_tqdm_quietly` imports it once, silenced, so that
later imports find it loaded.
"""

from __future__ import annotations

import warnings

__all__ = ["import_tqdm_quietly"]


def import_tqdm_quietly() -> None:
    """Import ``tqdm.auto`` with its warnings silenced (a no-op once it is loaded)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import tqdm.auto  # noqa: F401
