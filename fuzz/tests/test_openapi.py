"""The OpenAPI document is valid, and a bounded schemathesis run against a live server is clean.

``npm test`` runs this; ``npm run fuzz`` is the longer run of the same fuzzer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

import yaml
from openapi_spec_validator import validate

FUZZ_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = FUZZ_DIR.parent
DOCUMENT_DIR = REPO_ROOT / "proto" / "gen" / "openapi"
# A minute of fuzzing, with a fixed seed so that a failure here repeats with the same command.
MAX_TIME = int(os.environ.get("AIEM_FUZZ_MAX_TIME", "60"))
SEED = int(os.environ.get("AIEM_FUZZ_SEED", "20261125"))
PYTEST_CLOSING = re.compile(r"^=+ .* in [\d.]+s(?: \(.*\))? =+$")


class DocumentTest(unittest.TestCase):
    def test_json_document_is_a_valid_swagger_2_document(self) -> None:
        document = json.loads((DOCUMENT_DIR / "openapi.json").read_text())
        validate(document)
        self.assertEqual(document["swagger"], "2.0")
        self.assertGreater(len(document["paths"]), 50)

    def test_yaml_document_is_the_same_document(self) -> None:
        from_json = json.loads((DOCUMENT_DIR / "openapi.json").read_text())
        from_yaml = yaml.safe_load((DOCUMENT_DIR / "openapi.yaml").read_text())
        self.assertEqual(from_yaml, from_json)


class FuzzTest(unittest.TestCase):
    def test_bounded_fuzz_run_finds_nothing(self) -> None:
        args = [sys.executable, str(FUZZ_DIR / "fuzz_api.py"), "--max-time", str(MAX_TIME), "--seed", str(SEED)]
        result = subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=MAX_TIME + 300)
        output = result.stdout + result.stderr
        at = output.find("SUMMARY")
        summary = output[output.rfind("\n", 0, at) + 1:] if at >= 0 else output[-3000:]
        # schemathesis ends like pytest ("=== 2 warnings in 60.05s ==="), which CI would read
        # as the run's closing line, one that counts no test: leave that line out.
        summary = "\n".join(line for line in summary.splitlines() if not PYTEST_CLOSING.match(line))
        print(f"\nschemathesis, {MAX_TIME} s, seed {SEED}:\n{summary}", file=sys.stderr)
        self.assertEqual(result.returncode, 0, f"schemathesis found problems (repeat: {' '.join(args[1:])}):\n{output}")


if __name__ == "__main__":
    unittest.main()
