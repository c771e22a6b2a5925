"""Compares the public surface of our client with the official ``h2o-engine-manager`` client.

A user's script should move from ``h2o_engine_manager`` to ``ai_engine_manager`` by changing its
import. This module lists what such a script can touch in each package and reports every
difference:

- the login functions (``login`` and ``login_custom``): parameters;
- the attributes of the ``Clients`` object ``login`` returns, and of its ``sandbox_clients``
  (``SandboxClients``), with the class name of each client (the official ``EngineClient``,
  which its ``Clients`` does not hold, is imported directly);
- for each client class and engine class in ``SCOPE``: its public methods, and for each method its parameters by
  name, kind (positional or keyword-only), position and default.

A difference has a key, ``Class.method`` for a method one side lacks and
``Class.method(param)`` for a parameter that differs (``Clients.attr`` for attributes,
``login_custom(param)`` for the login function). The keys allowed to differ, each with its
reason, are the lines ``- key: reason`` of the fenced block under the heading
``Official client surface allowlist`` in ``docs/adr/0082-python-client-mirrors-official-surface.md``. A key with ``*`` is a pattern
(``fnmatch``) and allows only our extras, defaulted parameters the official method does not have:
for example ``*Client.list_*(filter)``. Every other difference is listed by its exact key.

It is used by ``tests/test_official_surface.py`` (skipped when the official package is not
importable) and ``clients/official-conformance/tests/test_our_client_surface.py`` (the venv's
Python). ``python3 official_surface.py --all`` with the venv's Python prints every difference,
in scope or not.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import re
import sys
import typing
from pathlib import Path

CLIENT_ROOT = Path(__file__).resolve().parents[1]
REPO_ROOT = CLIENT_ROOT.parent.parent
DECISIONS = REPO_ROOT / "docs" / "adr" / "0082-python-client-mirrors-official-surface.md"
ALLOWLIST_HEADING = "Official client surface allowlist"

SCOPE = [
    "login",
    "login_custom",
    "Clients",
    "SandboxClients",
    "DAIEngineClient",
    "H2OEngineClient",
    "DAILicenseClient",
    "H2OSecureStoreClient",
    "DAIEngineProfileClient",
    "H2OEngineProfileClient",
    "NotebookEngineProfileClient",
    "DAIEngineVersionClient",
    "H2OEngineVersionClient",
    "NotebookEngineImageClient",
    "SandboxEngineImageClient",
    "SandboxEngineTemplateClient",
    "NotebookEngineClient",
    "EngineClient",
    "SandboxEngineClient",
    "FilesystemClient",
    "H2ODriveClient",
    "MetricsClient",
    "PortClient",
    "ProcessClient",
    "DAIEngine",
    "H2OEngine",
    "NotebookEngine",
    "SandboxEngine",
]
"""What the test compares: the two login functions, the two holder objects, these client classes
and the engine classes of ``RESOURCE_CLASSES`` (official names)."""

_MISSING = object()

RESOURCE_CLASSES = [
    ("DAIEngine", "h2o_engine_manager.clients.dai_engine.dai_engine", "ai_engine_manager.dai_engine.dai_engine"),
    ("H2OEngine", "h2o_engine_manager.clients.h2o_engine.h2o_engine", "ai_engine_manager.h2o_engine.h2o_engine"),
    ("NotebookEngine", "h2o_engine_manager.clients.notebook_engine.engine", "ai_engine_manager.notebook_engine.notebook_engine"),
    ("SandboxEngine", "h2o_engine_manager.clients.sandbox_engine.engine", "ai_engine_manager.sandbox_engine.sandbox_engine"),
]
"""Resource classes whose methods scripts call on the objects the clients return
(``engine.wait()``): name, official module, our module."""

OFFICIAL_STANDALONE = [("h2o_engine_manager.clients.engine.client", "EngineClient")]
"""Official client classes that its ``Clients`` does not hold (module, class): compared all the
same, with ours of the same name from our ``Clients``."""


def _import(package: str):  # type: ignore[no-untyped-def]
    if package == "ai_engine_manager" and str(CLIENT_ROOT) not in sys.path:
        sys.path.insert(0, str(CLIENT_ROOT))
    return importlib.import_module(package)


def _holder_fields(cls: type) -> dict[str, type]:
    """Attribute name -> class of a holder (a dataclass, or a class whose ``__init__`` takes them)."""
    if hasattr(cls, "__dataclass_fields__"):
        return dict(typing.get_type_hints(cls))
    hints = typing.get_type_hints(cls.__init__)
    names = [n for n in inspect.signature(cls.__init__).parameters if n != "self"]
    return {n: hints[n] for n in names}


def surface(package: str) -> dict[str, object]:
    """The public surface of a package: holders, client classes by name, login functions."""
    top = _import(package)
    login_module = importlib.import_module(f"{package}.clients.login" if package == "h2o_engine_manager" else f"{package}.login")
    clients = _holder_fields(login_module.Clients)
    sandbox = _holder_fields(clients["sandbox_clients"]) if "sandbox_clients" in clients else {}
    classes: dict[str, type] = {}
    for holder in (clients, sandbox):
        for cls in holder.values():
            if isinstance(cls, type) and cls.__name__.endswith("Client"):
                classes[cls.__name__] = cls
    if package == "h2o_engine_manager":
        # The official login builds no EngineClient; it has a constructor of its own there.
        for module, name in OFFICIAL_STANDALONE:
            classes[name] = getattr(importlib.import_module(module), name)
    for name, official_module, our_module in RESOURCE_CLASSES:
        module = official_module if package == "h2o_engine_manager" else our_module
        classes[name] = getattr(importlib.import_module(module), name)
    return {
        "login_custom": top.login_custom,
        "login": top.login,
        "Clients": clients,
        "SandboxClients": sandbox,
        "classes": classes,
    }


def _params(func) -> list[inspect.Parameter]:  # type: ignore[no-untyped-def]
    return [p for p in inspect.signature(func).parameters.values() if p.name != "self"]


def _describe(p: inspect.Parameter | None, position: int | None) -> str:
    if p is None:
        return "absent"
    kind = "keyword-only" if p.kind is p.KEYWORD_ONLY else p.kind.name.lower()
    default = "required" if p.default is p.empty else f"default {p.default!r}"
    where = f"position {position}" if position is not None else "no position"
    return f"{kind}, {where}, {default}"


def _compare_params(key: str, official, ours) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Differences of two callables' parameters, one per parameter name."""
    out: list[tuple[str, str]] = []
    op, ap = _params(official), _params(ours)
    opos = {p.name: i for i, p in enumerate(op) if p.kind is not p.KEYWORD_ONLY}
    apos = {p.name: i for i, p in enumerate(ap) if p.kind is not p.KEYWORD_ONLY}
    obyname, abyname = {p.name: p for p in op}, {p.name: p for p in ap}
    for name in list(obyname) + [n for n in abyname if n not in obyname]:
        o, a = obyname.get(name), abyname.get(name)
        same = (
            o is not None
            and a is not None
            and o.kind == a.kind
            and opos.get(name) == apos.get(name)
            and (o.default is o.empty) == (a.default is a.empty)
            and (o.default is o.empty or o.default == a.default)
        )
        if not same:
            out.append((f"{key}({name})", f"official: {_describe(o, opos.get(name))}; ours: {_describe(a, apos.get(name))}"))
    return out


def _methods(cls: type) -> dict[str, object]:
    return {n: m for n, m in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


def differences(scope: list[str] | None = SCOPE) -> list[tuple[str, str]]:
    """Every difference, as (key, description); only those in ``scope`` unless it is ``None``."""
    official, ours = surface("h2o_engine_manager"), surface("ai_engine_manager")
    wanted = (lambda name: True) if scope is None else (lambda name: name in scope)
    out: list[tuple[str, str]] = []
    for func in ("login_custom", "login"):
        if wanted(func):
            out += _compare_params(func, official[func], ours[func])
    for holder in ("Clients", "SandboxClients"):
        if not wanted(holder):
            continue
        o, a = official[holder], ours[holder]  # type: ignore[index]
        for attr in list(o) + [n for n in a if n not in o]:
            oc, ac = o.get(attr), a.get(attr)
            if oc is None or ac is None:
                out.append((f"{holder}.{attr}", "only in ours" if oc is None else "missing in ours"))
            elif getattr(oc, "__name__", oc) != getattr(ac, "__name__", ac):
                out.append((f"{holder}.{attr}", f"official class {oc.__name__}, ours {ac.__name__}"))
    oclasses, aclasses = official["classes"], ours["classes"]  # type: ignore[index]
    for name in sorted(set(oclasses) | set(aclasses)):
        if not wanted(name):
            continue
        oc, ac = oclasses.get(name), aclasses.get(name)
        if oc is None or ac is None:
            out.append((name, "only in ours" if oc is None else "missing in ours"))
            continue
        om, am = _methods(oc), _methods(ac)
        for method in sorted(set(om) | set(am)):
            key = f"{name}.{method}"
            if method not in am:
                out.append((key, "missing in ours"))
            elif method not in om:
                out.append((key, "only in ours"))
            else:
                out += _compare_params(key, om[method], am[method])
    return out


def allowlist(path: Path = DECISIONS) -> dict[str, str]:
    """The allowed differences, key -> reason, from the fenced block under the heading."""
    text = path.read_text(encoding="utf-8")
    heading = re.search(rf"^#+ +{re.escape(ALLOWLIST_HEADING)}\s*$", text, re.M)
    if heading is None:
        raise AssertionError(f"{path}: no heading '{ALLOWLIST_HEADING}'")
    block = re.search(r"^```[a-z]*\n(.*?)^```", text[heading.end():], re.M | re.S)
    if block is None:
        raise AssertionError(f"{path}: no fenced block after '{ALLOWLIST_HEADING}'")
    entries: dict[str, str] = {}
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        match = re.match(r"^- (\S+): (.+)$", line)
        if match is None:
            raise AssertionError(f"{path}: allowlist line not '- key: reason': {line!r}")
        entries[match.group(1)] = match.group(2)
    return entries


def allowed_by(key: str, description: str, allowed: dict[str, str]) -> str | None:
    """The allowlist entry that allows a difference, or ``None``: its exact key, or else a
    pattern, which allows only our extras with defaults (the official side ``absent``)."""
    if key in allowed:
        return key
    if not description.startswith("official: absent;") or description.endswith("required"):
        return None
    return next((k for k in allowed if "*" in k and fnmatch.fnmatchcase(key, k)), None)


def check(test) -> None:  # type: ignore[no-untyped-def]
    """Fails ``test`` on a difference not allowed, or an allowed one that no longer exists."""
    found = differences()
    allowed = allowlist()
    unexplained = [f"{k}: {d}" for k, d in found if allowed_by(k, d, allowed) is None]
    used = {allowed_by(k, d, allowed) for k, d in found}
    stale = [k for k in allowed if k not in used]
    test.assertEqual(unexplained, [], "differences from the official client not in the allowlist of docs/adr/0082")
    test.assertEqual(stale, [], "allowlist entries in docs/adr/0082 that no longer differ")


if __name__ == "__main__":
    everything = "--all" in sys.argv
    allowed = allowlist()
    for key, description in differences(None if everything else SCOPE):
        print(("allowed  " if allowed_by(key, description, allowed) else "DIFFERS  ") + f"{key}: {description}")
