"""Our client's public surface matches this official client's, as far as ``SCOPE`` goes.

Runs the comparison of ``clients/python/tests/official_surface.py`` with the official package
importable (this virtual environment); our package is imported from ``clients/python``. The
allowed differences are the allowlist in ``docs/adr/0082-python-client-mirrors-official-surface.md``.
"""

from __future__ import annotations

import importlib.util
import sys
import unittest
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "python" / "tests" / "official_surface.py"
_spec = importlib.util.spec_from_file_location("aiem_official_surface", _PATH)
assert _spec is not None and _spec.loader is not None
official_surface = importlib.util.module_from_spec(_spec)
sys.modules["aiem_official_surface"] = official_surface
_spec.loader.exec_module(official_surface)


class OurClientSurfaceTest(unittest.TestCase):
    def test_our_surface_matches_the_official_one(self) -> None:
        official_surface.check(self)


if __name__ == "__main__":
    unittest.main()
