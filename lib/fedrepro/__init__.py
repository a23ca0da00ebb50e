"""fedrepro: the library behind the book that reproduces, checks and extends
Fed-PLT, privacy-augmented FedPAQ and ALI-DPFL.

Four layers, each importing only the layers below it (``lint-imports`` checks the contracts
in ``pyproject.toml``):

* ``chapters`` -- one module per book chapter: configs, runs, tables, figures, scorecard;
* ``report`` -- paper values, the scorecard, book helpers (knows no paper);
* ``fedplt``, ``dpfedpaq``, ``alidpfl`` -- each paper's algorithms and proofs-as-checks
  (independent of each other);
* ``core``, ``problems``, ``privacy``, ``data`` -- shared machinery: results store and
  seeding, federated problems, privacy accounting, datasets.
"""

__version__ = "0.1.0"
