"""Our public surface matches the official client's (``tests/official_surface.py``).

Skipped unless the official ``h2o_engine_manager`` package is importable: ``npm run test:python``
runs on the system Python without it; ``npm run test:official`` runs the same check with the
virtual environment's Python (``clients/official-conformance/tests/test_our_client_surface.py``).
"""

from __future__ import annotations

import importlib.util
import unittest

from tests import official_surface

HAVE_OFFICIAL = importlib.util.find_spec("h2o_engine_manager") is not None


class AllowlistTest(unittest.TestCase):
    def test_the_allowlist_parses(self) -> None:
        entries = official_surface.allowlist()
        self.assertTrue(entries)
        for key, reason in entries.items():
            self.assertTrue(reason.strip(), key)


@unittest.skipUnless(HAVE_OFFICIAL, "the official h2o_engine_manager package is not installed (runs in npm run test:official)")
class OfficialSurfaceTest(unittest.TestCase):
    def test_our_surface_matches_the_official_one(self) -> None:
        official_surface.check(self)


if __name__ == "__main__":
    unittest.main()
