"""The generated code is up to date, every public name has a docstring, and every client method is
exercised by some test."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import unittest

from tests import support
import ai_engine_manager

GENERATOR = support.CLIENT_ROOT / "scripts" / "generate.py"
IMAGE = support.REPO_ROOT / "proto" / "gen" / "image.binpb"


class RegenerationTest(unittest.TestCase):
    @unittest.skipUnless(IMAGE.exists(), "proto/gen/image.binpb is missing; run npm install")
    def test_regenerating_changes_nothing(self) -> None:
        result = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, "run python3 clients/python/scripts/generate.py:\n" + result.stdout + result.stderr)


def public(name: str) -> bool:
    return not name.startswith("_")


class DocstringTest(unittest.TestCase):
    """The docs site's py/clients pages are made from these docstrings (web/build/pydoc.py rules:
    public modules, classes, functions and methods, and __init__)."""

    def test_every_public_module_class_and_function_has_a_docstring(self) -> None:
        missing = []
        package_dir = support.CLIENT_ROOT / "ai_engine_manager"
        for path in sorted(package_dir.rglob("*.py")):
            relative = path.relative_to(package_dir)
            if any(part.startswith("_") and part != "__init__.py" for part in relative.parts):
                continue
            tree = ast.parse(path.read_text())
            where = str(path.relative_to(support.CLIENT_ROOT))
            if not ast.get_docstring(tree):
                missing.append(where)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and public(node.name) and not ast.get_docstring(node):
                    missing.append(f"{where}: {node.name}")
                if isinstance(node, ast.ClassDef) and public(node.name):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and (public(item.name) or item.name == "__init__"):
                            if not ast.get_docstring(item):
                                missing.append(f"{where}: {node.name}.{item.name}")
        self.assertEqual(missing, [])

    def test_all_lists_existing_names(self) -> None:
        for info in pkgutil.walk_packages(ai_engine_manager.__path__, "ai_engine_manager."):
            module = importlib.import_module(info.name)
            for name in getattr(module, "__all__", []):
                self.assertTrue(hasattr(module, name), f"{info.name}.__all__ names {name}")


def client_classes() -> list[type]:
    """Every client class, and the engine classes whose methods act on the server."""
    from ai_engine_manager.dai_engine.dai_engine import DAIEngine
    from ai_engine_manager.h2o_engine.h2o_engine import H2OEngine
    from ai_engine_manager.notebook_engine.notebook_engine import NotebookEngine
    from ai_engine_manager.sandbox_engine.sandbox_engine import SandboxEngine

    found: list[type] = [DAIEngine, H2OEngine, NotebookEngine, SandboxEngine]
    for info in pkgutil.walk_packages(ai_engine_manager.__path__, "ai_engine_manager."):
        if info.name.endswith(".client"):
            module = importlib.import_module(info.name)
            found += [c for _, c in inspect.getmembers(module, inspect.isclass)
                      if c.__module__ == info.name and c.__name__.endswith("Client")]
    return found


class MethodCoverageTest(unittest.TestCase):
    def test_every_client_method_is_called_by_a_test(self) -> None:
        sources = "\n".join(p.read_text() for p in support.TESTS_DIR.glob("test_*.py") if p.name != "test_generated.py")
        classes = client_classes()
        self.assertGreaterEqual(len(classes), 23)
        unused = []
        for cls in classes:
            for name, member in vars(cls).items():
                if not public(name) or not callable(member) or isinstance(member, (staticmethod, classmethod)):
                    continue
                if not re.search(rf"\b{re.escape(name)}\(", sources):
                    unused.append(f"{cls.__name__}.{name}")
        self.assertEqual(unused, [])


if __name__ == "__main__":
    unittest.main()
