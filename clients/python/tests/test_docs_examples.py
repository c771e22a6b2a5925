"""The example scripts of the documentation site (web/content/py/examples) run as written
against the real server, each as a different user so their engine ids never meet."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

from tests import support
from tests.support import requires

EXAMPLES = support.CLIENT_ROOT.parent.parent / "web" / "content" / "py" / "examples"


class DocsExamplesTest(unittest.TestCase):
    def run_example(self, name: str) -> str:
        env = dict(os.environ)
        env.update({
            "AIEM_URL": support.server().url,
            "AIEM_TOKEN": support.server().token(f"docs-{name.split('_')[0]}"),
            "PYTHONPATH": str(support.CLIENT_ROOT),
        })
        result = subprocess.run(
            [sys.executable, str(EXAMPLES / name)], env=env, capture_output=True, text=True, timeout=300
        )
        self.assertEqual(result.returncode, 0, f"{name} failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    @requires("dai_engine", "dai_engine_profile", "dai_engine_version")
    def test_dai_examples(self) -> None:
        self.run_example("dai_examples.py")

    @requires("h2o_engine", "h2o_engine_profile", "h2o_engine_version")
    def test_h2o_examples(self) -> None:
        self.run_example("h2o_examples.py")

    @requires("notebook_engine", "notebook_engine_profile", "notebook_engine_image")
    def test_notebook_examples(self) -> None:
        self.run_example("notebook_examples.py")

    @requires("sandbox_engine", "sandbox_engine_image", "sandbox_engine_template", "process")
    def test_sandbox_examples(self) -> None:
        self.run_example("sandbox_examples.py")


if __name__ == "__main__":
    unittest.main()
