"""Every public method of the official client is called by this suite (runs last: sorted last).

The methods a user calls, by this rule (see README.md):

1. the login functions the package exports, ``h2o_engine_manager.login`` and ``login_custom``;
2. every public method, and the constructor, of each class in ``h2o_engine_manager.clients`` whose
   name ends in ``Client``, except ``TokenApiClient``, which is the generated layer's transport
   (a subclass of its ``ApiClient``) rather than something a user calls;
3. every public method of the classes those client methods return (read from their return
   annotations, through ``Optional``, ``List``, ``tuple``, ``Iterator``), except the ``to_*``
   converters to the generated models, which are data-holder helpers the client itself uses.
   In 1.10.2 that gives ``DAIEngine`` and ``H2OEngine`` their actions and waits; the other
   returned classes (pages, profiles, versions, ports, processes, ...) hold data only.

Private names, dataclass helpers, value/config classes and enums are not in the list. A method
counts as called when the profile hook of ``_conformance`` saw its code object entered (observed,
not instrumented); a call that ended in an expected error counts too, as the other modules check
what it returned or raised. With ``AIEM_OFFICIAL_COVERAGE_OUT=<file>`` the list is written there
as JSON (method -> called).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import sys
import typing
import unittest
from pathlib import Path
from types import FunctionType
from typing import Iterator

from . import _conformance as oc

import h2o_engine_manager  # noqa: E402
import h2o_engine_manager.clients as official_clients  # noqa: E402
from h2o_engine_manager.gen.api_client import ApiClient  # noqa: E402


def _classes() -> Iterator[type]:
    for info in pkgutil.walk_packages(official_clients.__path__, official_clients.__name__ + "."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                yield obj


def _public_functions(cls: type) -> dict[str, FunctionType]:
    found = {}
    for name, value in vars(cls).items():
        function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if inspect.isfunction(function) and not name.startswith("_"):
            found[name] = function
    return found


def _returned_classes(function: FunctionType) -> set[type]:
    try:
        hint = typing.get_type_hints(function).get("return")
    except Exception:  # an annotation that does not resolve names no class
        return set()
    found: set[type] = set()
    pending = [hint]
    while pending:
        item = pending.pop()
        if inspect.isclass(item) and item.__module__.startswith(official_clients.__name__):
            found.add(item)
        pending.extend(typing.get_args(item))
    return found


def user_methods() -> dict[str, FunctionType]:
    """``"<Class>.<method>"`` (or ``"<module function>"``) -> function, by the rule above."""
    methods: dict[str, FunctionType] = {
        "login": h2o_engine_manager.login,
        "login_custom": h2o_engine_manager.login_custom,
    }
    clients = [c for c in _classes() if c.__name__.endswith("Client") and not issubclass(c, ApiClient)]
    returned: set[type] = set()
    for cls in clients:
        for name, function in _public_functions(cls).items():
            methods[f"{cls.__name__}.{name}"] = function
            returned |= _returned_classes(function)
        methods[f"{cls.__name__}.__init__"] = vars(cls)["__init__"]
    for cls in returned - set(clients):
        for name, function in _public_functions(cls).items():
            if not name.startswith("to_"):
                methods[f"{cls.__name__}.{name}"] = function
    return methods


def called(function: FunctionType) -> bool:
    return inspect.unwrap(function).__code__ in oc.entered


class EveryMethodIsCalledTest(unittest.TestCase):
    def test_every_public_method_of_the_official_client_is_called(self) -> None:
        tests_dir = Path(__file__).resolve().parent
        package = __package__ or "tests"
        missing_modules = [p.stem for p in tests_dir.glob("test_*.py") if f"{package}.{p.stem}" not in sys.modules]
        if missing_modules:
            self.skipTest("only judged when the whole suite runs; not loaded: " + ", ".join(sorted(missing_modules)))

        methods = user_methods()
        report = {name: called(function) for name, function in sorted(methods.items())}
        out = os.environ.get("AIEM_OFFICIAL_COVERAGE_OUT")
        if out:
            Path(out).write_text(json.dumps(report, indent=2) + "\n")
        # The rule finds what the notes on the client list (E.1), so it cannot silently shrink.
        self.assertGreaterEqual(len(methods), 150, sorted(methods))
        for required in ("DAIEngine.wait_async", "H2OEngine.get_connection_config", "EngineClient.list_all_engines_all_workspaces",
                         "ProcessClient.read_output_frames", "PortClient.wait", "MetricsClient.read_metrics"):
            self.assertIn(required, methods)
        uncalled = [name for name, was_called in report.items() if not was_called]
        self.assertEqual(uncalled, [], "methods of the official client this suite never calls:\n  " + "\n  ".join(uncalled))


if __name__ == "__main__":
    unittest.main()
