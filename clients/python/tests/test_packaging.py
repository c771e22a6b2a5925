"""Installing the package offline, and that it imports nothing outside the standard library."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

from tests import support

PACKAGE_DIR = support.CLIENT_ROOT / "ai_engine_manager"

# Imports every module of the installed package, then reports the modules that appeared.
IMPORT_ALL = r"""
import importlib, json, pkgutil, sys
before = set(sys.modules)
import ai_engine_manager
for module in pkgutil.walk_packages(ai_engine_manager.__path__, "ai_engine_manager."):
    importlib.import_module(module.name)
print(json.dumps({"file": ai_engine_manager.__file__, "new": sorted(set(sys.modules) - before)}))
"""


def is_stdlib(module: str) -> bool:
    top = module.split(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names


def pip_available() -> bool:
    return subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0


class SourceImportsTest(unittest.TestCase):
    def test_every_import_is_stdlib_or_the_package(self) -> None:
        offenders = []
        for path in sorted(PACKAGE_DIR.rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    if not (is_stdlib(name) or name.split(".")[0] == "ai_engine_manager"):
                        offenders.append(f"{path.relative_to(support.CLIENT_ROOT)}:{node.lineno}: {name}")
        self.assertEqual(offenders, [])


@unittest.skipUnless(pip_available(), "pip is not installed for this Python")
class OfflineInstallTest(unittest.TestCase):
    def test_pip_installs_without_network_and_the_install_imports_only_stdlib(self) -> None:
        with tempfile.TemporaryDirectory(prefix="aiem-py-install-") as target, \
                tempfile.TemporaryDirectory(prefix="aiem-py-wheel-") as wheels:
            env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
            env.update({"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CONFIG_FILE": os.devnull})
            # A proxy that cannot be reached makes any attempt to use the network fail loudly.
            env.update({"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"})
            install = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                 "--target", target, str(support.CLIENT_ROOT)],
                env=env, capture_output=True, text=True, timeout=300,
            )
            self.assertEqual(install.returncode, 0, install.stdout + install.stderr)

            check = subprocess.run(
                [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {target!r})\n" + IMPORT_ALL],
                cwd=target, capture_output=True, text=True, timeout=120,
            )
            self.assertEqual(check.returncode, 0, check.stderr)
            report = json.loads(check.stdout)
            self.assertTrue(report["file"].startswith(target), report["file"])
            foreign = [m for m in report["new"] if not (is_stdlib(m) or m.split(".")[0] == "ai_engine_manager")]
            self.assertEqual(foreign, [])

            wheel = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
                 "--wheel-dir", wheels, str(support.CLIENT_ROOT)],
                env=env, capture_output=True, text=True, timeout=300,
            )
            self.assertEqual(wheel.returncode, 0, wheel.stdout + wheel.stderr)
            (built,) = Path(wheels).glob("*.whl")
            self.assertEqual(built.name, "ai_engine_manager-0.1.0-py3-none-any.whl")
            names = set(zipfile.ZipFile(built).namelist())
            sources = {p.relative_to(support.CLIENT_ROOT).as_posix() for p in PACKAGE_DIR.rglob("*.py")}
            self.assertLessEqual(sources, names)
            self.assertIn("ai_engine_manager/py.typed", names)
            self.assertFalse([n for n in names if n.startswith(("tests/", "scripts/", "_build/")) or "__pycache__" in n])


if __name__ == "__main__":
    unittest.main()
