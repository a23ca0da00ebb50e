"""The transcription of the papers in data/paper: complete, consistent with the papers'
text, and right on spot values read independently from the papers."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from fedrepro.report import paper

REPO = Path(__file__).resolve().parents[1]
PAPERS_TEXT = REPO.parent / "shared" / "papers"
needs_papers = pytest.mark.skipif(not PAPERS_TEXT.is_dir(), reason="the papers' full texts are not beside the checkout")

#: Cells per table: rows x columns of the printed table body.
EXPECTED_SHAPES = {
    "fedplt-v2-TI": 36, "fedplt-v2-TII": 18, "fedplt-v2-TIII": 24, "fedplt-v2-TIV": 12,
    "fedplt-v2-TV": 24, "fedplt-v2-TVI": 7, "fedplt-v2-TVII": 8, "fedplt-v2-TVIII": 3,
    "fedplt-v2-TIX": 24, "fedplt-v1-TII": 24, "fedplt-v1-TIII": 10, "fedplt-v1-TIV": 8,
    "alidpfl-main-TII": 72, "alidpfl-main-TIII": 36, "alidpfl-main-TIV": 36,
    "alidpfl-main-Teps-iterations": 10,
}

#: Spot values read from the papers' texts by hand, independently of the CSV files:
#: (table, row, column, value) -- None where the paper prints no number.
SPOT_VALUES = [
    ("fedplt-v2-TII", "FedPD", "Convex", 70500.0),
    ("fedplt-v2-TII", "Fed-PLT", "Nonconvex", 21000.0),
    ("fedplt-v2-TII", "TAMUNA", "Nonconvex", None),
    ("fedplt-v2-TIII", "FedLin", "tC=0.1", 3720.0),
    ("fedplt-v2-TIV", "5GCS", "Acc. grad. Partial p.", 23250.0),
    ("fedplt-v2-TV", "FedPD", "tC=200", 2040000.0),
    ("fedplt-v2-TV", "FedLin", "tC=2000", 2884000.0),
    ("fedplt-v2-TVI", "70%", "Convergence rate", 19950.0),
    ("fedplt-v2-TVII", "1e-6", "Asymptotic err.", 0.02583),
    ("fedplt-v2-TVII", "10", "Asymptotic err.", 85.273),
    ("fedplt-v2-TVIII", "Comp. time", "rho=1", 58500.0),
    ("fedplt-v2-TIX", "Ne=1", "tC=100", 292900.0),
    ("fedplt-v1-TII", "Fed-PLT", "Grad.", 0.531),
    ("fedplt-v1-TII", "Fed-PD", "Gradient Partial p.", None),
    ("fedplt-v1-TII", "5GCS", "Acc. grad. Partial p.", 0.894),
    ("fedplt-v1-TIII", "1", "Convergence rate", 0.955),
    ("fedplt-v1-TIV", "10", "Asymptotic err.", 9.8387),
    ("alidpfl-main-TII", "ALI-DPFL", "Rs=Rc F-MNIST eps=1.75", 82.02),
    ("alidpfl-main-TII", "tau=5", "Rs=2Rc CIFAR10 eps=1.75", 41.25),
    ("alidpfl-main-TIII", "tau=5", "Rs=Rc/2 F-MNIST eps=2.25", 77.96),
    ("alidpfl-main-TIV", "tau=9", "Rs=Rc/5 F-MNIST eps=3.25", 71.13),
    ("alidpfl-main-Teps-iterations", "eps=1.55", "iterations", 79.0),
    ("alidpfl-main-Teps-iterations", "eps=3.75", "iterations", 1585.0),
]


def _cell(tid, row, column):
    found = [c for c in paper.load_table(tid) if c.row == row and c.column == column]
    assert len(found) == 1, f"{tid}: no single cell at row {row!r}, column {column!r}"
    return found[0]


def test_no_table_is_missing_and_shapes_are_complete():
    assert set(EXPECTED_SHAPES) == set(paper.EXPECTED_TABLES)
    for tid, n in EXPECTED_SHAPES.items():
        cells = paper.load_table(tid)
        assert len(cells) == n, f"{tid}: {len(cells)} cells, the printed table has {n}"
        assert paper.tolerance_for(tid)


@pytest.mark.parametrize("tid, row, column, value", SPOT_VALUES)
def test_spot_values(tid, row, column, value):
    assert _cell(tid, row, column).value == value


def test_ids_are_unique_and_well_formed():
    cells = paper.all_cells()
    ids = [c.id for c in cells]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+-[a-z0-9]+-T[A-Za-z0-9-]+", i) for i in ids)
    claim_ids = [c["id"] for p in paper.PAPERS for c in paper.claims(p)]
    figure_ids = [f["id"] for p in paper.PAPERS for f in paper.figures(p)]
    every = ids + claim_ids + figure_ids
    assert len(every) == len(set(every))


_SUFFIX = {"k": 1e3, "M": 1e6}


def _read_number(text: str) -> float | None:
    """The number printed in a cell, read independently of the transcription's value."""
    t = unicodedata.normalize("NFKC", text).replace("−", "-").replace(" ", "").replace("\u2009", "")
    t = t.replace("^{", "").replace("}", "").rstrip("†*")
    m = re.fullmatch(r"([-+]?\d+(?:\.\d+)?)(?:[×x]10\^?([-+]?\d+))?([kM]?)", t)
    if m:
        base = float(m.group(1)) * (10.0 ** int(m.group(2)) if m.group(2) else 1.0)
        return base * _SUFFIX.get(m.group(3), 1.0)
    m = re.fullmatch(r"10\^?([-+]?\d+)", t)
    if m:
        return 10.0 ** int(m.group(1))
    return None


def test_values_agree_with_their_printed_text():
    for cell in paper.all_cells():
        read = _read_number(cell.value_text)
        if cell.value is None:
            assert read is None, f"{cell.id}: {cell.value_text!r} is a number but value is empty"
        else:
            assert read is not None and read == pytest.approx(cell.value, rel=1e-12), (
                f"{cell.id}: printed {cell.value_text!r} but value {cell.value}")


def _normalise(text: str, keep_hyphen: bool = False) -> str:
    """NFKC, whitespace collapsed; a hyphen at a line end is removed (a word split by the
    extraction) or, with ``keep_hyphen``, kept (a real hyphen such as "Fed-PLT")."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"-[ \t]*\n\s*", "-" if keep_hyphen else "", text)
    return re.sub(r"\s+", " ", text).strip()


@needs_papers
def test_source_lines_are_the_papers_lines():
    texts: dict[str, list[str]] = {}
    for cell in paper.all_cells():
        lines = texts.setdefault(cell.source_file, (PAPERS_TEXT / cell.source_file).read_text(encoding="utf-8").splitlines())
        line = lines[cell.source_line - 1].strip()
        assert line == cell.source_text, f"{cell.id}: source line {cell.source_line} differs"
        if cell.value is not None:
            squeeze = lambda s: re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))
            assert squeeze(cell.value_text) in squeeze(line), f"{cell.id}: {cell.value_text!r} not on its line"


@needs_papers
def test_claim_quotes_are_verbatim():
    for p in paper.PAPERS:
        for claim in paper.claims(p):
            raw = (PAPERS_TEXT / claim["source_file"]).read_text(encoding="utf-8")
            sources = (_normalise(raw), _normalise(raw, keep_hyphen=True))
            for piece in re.split(r"\s*(?:…|\.\.\.)\s*", claim["quote"]):
                if piece.strip():
                    assert any(_normalise(piece) in s for s in sources), (
                        f"{claim['id']}: quote not found: {piece[:60]!r}")


def test_claims_and_figures_are_complete():
    required = {"id", "version", "section", "source_file", "source_line", "quote", "refers_to", "check", "kind"}
    for p in paper.PAPERS:
        data = paper.load_paper(p)
        refs = {t["id"] for t in data["tables"]} | {f["id"] for f in data["figures"]}
        assert data["claims"], f"{p} has no claims"
        for claim in data["claims"]:
            assert required <= set(claim), f"{claim.get('id')}: missing {required - set(claim)}"
            assert claim["kind"] in ("table", "figure", "text")
            assert set(claim["refers_to"] or []) <= refs, f"{claim['id']} refers to unknown ids"
            assert str(claim["check"]).strip()
    figs = {f"{p}:{f['figure']}" for p in paper.PAPERS for f in paper.figures(p)}
    for needed in ("fedplt:2", "fedplt:3", "alidpfl:1", "alidpfl:6"):
        assert needed in figs
    for n in ("2", "3", "4"):
        assert any(f.startswith(f"dpfedpaq:{n}") for f in figs), f"DP-FedPAQ Fig. {n} missing"
    indexed = {t["id"] for p in paper.PAPERS for t in paper.table_index(p)}
    assert indexed == set(paper.EXPECTED_TABLES)


def test_malformed_csv_is_reported_with_file_and_line(tmp_path, monkeypatch):
    folder = tmp_path / "tables"
    folder.mkdir()
    header = ",".join(paper.CSV_HEADER)
    (folder / "fedplt-v9-table-II.csv").write_text(
        header + "\nfedplt-v9-TII-a-b,fedplt,v9,II,a,b,notanumber,x,u,f.txt,1,x\n")
    monkeypatch.setattr(paper, "paper_dir", lambda: tmp_path)
    paper.load_table.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"fedplt-v9-table-II.csv, line 2"):
            paper.load_table("fedplt-v9-TII")
        with pytest.raises(FileNotFoundError, match="fedplt-v9-table-III.csv"):
            paper.load_table("fedplt-v9-TIII")
        with pytest.raises(ValueError, match="form"):
            paper.load_table("nonsense")
    finally:
        paper.load_table.cache_clear()
