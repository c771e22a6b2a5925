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

    def test_patterns_allow_only_defaulted_extras(self) -> None:
        allowed = {"*Client.list_*(filter)": "extra", "A.b(c)": "exact"}
        extra = "official: absent; ours: keyword-only, no position, default ''"
        self.assertEqual(official_surface.allowed_by("XClient.list_x(filter)", extra, allowed), "*Client.list_*(filter)")
        self.assertEqual(official_surface.allowed_by("A.b(c)", "official: anything", allowed), "A.b(c)")
        moved = "official: positional_or_keyword, position 3, default ''; ours: keyword-only, no position, default ''"
        self.assertIsNone(official_surface.allowed_by("XClient.list_x(filter)", moved, allowed))
        required = "official: absent; ours: positional_or_keyword, position 1, required"
        self.assertIsNone(official_surface.allowed_by("XClient.list_x(filter)", required, allowed))
        self.assertIsNone(official_surface.allowed_by("XClient.get_x(filter)", extra, allowed))


@unittest.skipUnless(HAVE_OFFICIAL, "the official h2o_engine_manager package is not installed (runs in npm run test:official)")
class OfficialSurfaceTest(unittest.TestCase):
    def test_our_surface_matches_the_official_one(self) -> None:
        official_surface.check(self)


if __name__ == "__main__":
    unittest.main()
