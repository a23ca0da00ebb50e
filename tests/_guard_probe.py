"""A pytest plugin for ``test_pages.py``: records the store guards a session runs under."""

from __future__ import annotations

import json
import os
from pathlib import Path


def pytest_collection_finish(session):
    out = os.environ.get("FEDREPRO_GUARD_PROBE_OUT")
    if out:
        Path(out).write_text(json.dumps({k: os.environ.get(k) for k in
                                         ("FEDREPRO_READ_ONLY_STORE", "FEDREPRO_NO_PAPER_COMPUTE")}))
