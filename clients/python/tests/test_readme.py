"""The example in README.md runs as written against the real server."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import unittest

from tests import support
from tests.support import requires

README = support.CLIENT_ROOT / "README.md"


def example() -> str:
    """The first Python block under the README's "Example" heading."""
    text = README.read_text()
    section = text.split("\n## Example\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README.md has no python block under ## Example"
    return match.group(1)


class ReadmeExampleTest(unittest.TestCase):
    def test_example_is_valid_python_that_only_uses_the_client(self) -> None:
        tree = ast.parse(example())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        self.assertEqual(imported, {"os", "ai_engine_manager"})
        source = example()
        for call in ("create_engine", ".wait(", ".pause()", ".resume()", ".delete()", "create_process", "stream_output"):
            self.assertIn(call, source)

    @requires("dai_engine", "dai_engine_profile", "dai_engine_version", "sandbox_engine", "sandbox_engine_image",
              "sandbox_engine_template", "process")
    def test_example_runs(self) -> None:
        env = dict(os.environ)
        env.update({
            "AIEM_URL": support.server().url,
            "AIEM_TOKEN": support.server().token("readme-user"),
            "PYTHONPATH": str(support.CLIENT_ROOT),
        })
        result = subprocess.run([sys.executable, "-c", example()], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout
        self.assertRegex(out, r"workspaces/default/daiEngines/readme-example(-\d{4})? STATE_RUNNING")
        self.assertIn("STATE_PAUSED", out)
        for i in (1, 2, 3):
            self.assertIn(f"OUTPUT_STREAM_STDOUT line {i}\n", out)
        self.assertIn("OUTPUT_STREAM_STDERR finished\n", out)
        self.assertIn("exit code 0", out)


if __name__ == "__main__":
    unittest.main()
