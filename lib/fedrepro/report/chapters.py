"""Run the book's chapter notebooks with papermill.

``python -m fedrepro.report.chapters list`` prints the chapters in ``_toc.yml`` order;
``python -m fedrepro.report.chapters run [--profile quick] [--output-dir DIR] [NAME ...]``
executes them (in place by default), the report page last because it summarises the
others. Papermill's timing metadata is stripped from the written notebooks so that two runs
give the same file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

from fedrepro.report.book import check_profile

__all__ = ["book_root", "chapters", "merge_streams", "run_chapter", "strip_run_metadata", "main"]


def book_root() -> Path:
    """The repository root (where ``_toc.yml`` is)."""
    return Path(__file__).resolve().parents[3]


def _toc_files(node) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        if "file" in node:
            out.append(node["file"])
        for key in ("root", "parts", "chapters", "sections"):
            value = node.get(key)
            if isinstance(value, str) and key == "root":
                out.append(value)
            elif isinstance(value, list):
                for child in value:
                    out.extend(_toc_files(child))
    return out


def chapters(root: Path | None = None) -> list[Path]:
    """The notebook chapters listed in ``_toc.yml``, report page last."""
    root = root or book_root()
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [root / f"{name}.ipynb" for name in _toc_files(toc)]
    notebooks = [f for f in files if f.exists()]
    return sorted(notebooks, key=lambda p: p.name == "report.ipynb")


def merge_streams(outputs: list) -> list:
    """Drop stderr (progress bars and the run's warnings: they change from run to run and
    may name local paths) and join consecutive stdout chunks: how the kernel splits printed
    text into chunks depends on timing, the text itself does not. The outputs given are not
    changed (a joined chunk is a new output of the type of the chunk it extends: a notebook's
    outputs stay ``NotebookNode`` objects, which ``nbformat.write`` needs)."""
    merged: list = []
    for out in outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            continue
        prev = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and prev is not None
                and prev.get("output_type") == "stream" and prev.get("name") == out.get("name")):
            merged[-1] = type(prev)({**prev, "text": _stream_text(prev) + _stream_text(out)})
        else:
            merged.append(out)
    return merged


def _stream_text(out) -> str:
    text = out.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def strip_run_metadata(path: Path) -> None:
    """Remove papermill's timestamps, durations and random cell id: reruns give identical files."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    pm = nb.metadata.get("papermill", {})
    for key in ("start_time", "end_time", "duration", "input_path", "output_path", "exception"):
        pm.pop(key, None)
    if pm.get("environment_variables") == {}:
        pm.pop("environment_variables")
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"  # papermill gives it a random id
            if "remove-cell" not in cell.metadata["tags"]:
                cell.metadata["tags"].append("remove-cell")  # the book shows only the literal cell
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.get("outputs", []))
        cell.metadata.pop("execution", None)
        cell.metadata.get("papermill", {}).clear()
        cell.metadata.pop("papermill", None)
    nbformat.write(nb, path)


def run_chapter(path: Path, output: Path | None = None, profile: str = "paper",
                timeout: int | None = None) -> Path:
    """Execute one chapter with papermill (parameter ``profile``); return the output path.

    The kernel runs in the chapter's folder, with the caller's environment (so
    ``FEDREPRO_RESULTS_DIR`` redirects where results are stored).
    """
    import papermill

    check_profile(profile)
    if os.environ.get("FEDREPRO_RESULTS_DIR"):  # the kernel starts in the chapter's folder
        os.environ["FEDREPRO_RESULTS_DIR"] = str(Path(os.environ["FEDREPRO_RESULTS_DIR"]).resolve())
    path = Path(path)
    output = Path(output) if output else path
    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(path), str(output), parameters={"profile": profile}, cwd=str(path.parent),
        kernel_name="python3", progress_bar=False, log_output=False, execution_timeout=timeout,
        # the kernel's own log would print a transport notice per chapter (the kernel and this
        # process talk over loopback TCP); its warnings and errors about cells reach the outputs
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    strip_run_metadata(output)
    return output


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``list`` the chapters or ``run`` them; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m fedrepro.report.chapters", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the chapters")
    run = sub.add_parser("run", help="execute chapters")
    run.add_argument("names", nargs="*", help="only chapters whose path contains one of these")
    run.add_argument("--profile", default="paper", choices=("paper", "quick"))
    run.add_argument("--output-dir", type=Path, default=None,
                     help="write executed copies here instead of in place")
    args = parser.parse_args(argv)
    # The kernels run in each chapter's folder: pass the store on as an absolute path, and
    # start a forced run's clock once for all chapters (each result recomputed once per run).
    if os.environ.get("FEDREPRO_RESULTS_DIR"):
        os.environ["FEDREPRO_RESULTS_DIR"] = str(Path(os.environ["FEDREPRO_RESULTS_DIR"]).resolve())
    if os.environ.get("FEDREPRO_FORCE") == "1":
        os.environ.setdefault("FEDREPRO_FORCE_SINCE", repr(time.time()))
    root = book_root()
    selected = chapters(root)
    if args.command == "list":
        for nb in selected:
            print(nb.relative_to(root))
        return 0
    if args.names:
        selected = [nb for nb in selected if any(n in str(nb.relative_to(root)) for n in args.names)]
        if not selected:
            parser.error(f"no chapter matches {args.names}")
    for nb in selected:
        rel = nb.relative_to(root)
        out = args.output_dir / rel if args.output_dir else None
        t0 = time.perf_counter()
        print(f"running {rel} (profile {args.profile}) ...", flush=True)
        run_chapter(nb, out, profile=args.profile)
        print(f"  done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
