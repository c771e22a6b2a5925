#!/usr/bin/env python3
"""Reads a Python package's source with the ast module and prints its public API as JSON.

The docs site builds its Python client reference from this output, so the reference is always
the client's own signatures and docstrings. Nothing is imported or executed: the package may
need dependencies the build machine lacks, and reading source keeps the build side-effect free.

Usage: pydoc.py PACKAGE_DIR  (the directory holding the package's __init__.py)
"""

import ast
import json
import os
import sys


def unparse(node):
    return ast.unparse(node) if node is not None else None


def is_public(name):
    return not name.startswith("_")


def decorator_names(node):
    return [unparse(d) for d in node.decorator_list]


def format_signature(args, returns, drop_first):
    """Builds '(a: int, b=1, *args, c, **kw) -> R' from an ast.arguments node."""
    positional = list(args.posonlyargs) + list(args.args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = []
    for index, (arg, default) in enumerate(zip(positional, defaults)):
        if index == 0 and drop_first:
            continue
        params.append(param(arg, default, ""))
        if args.posonlyargs and index == len(args.posonlyargs) - 1:
            params.append({"text": "/", "name": "/", "annotation": None, "default": None, "kind": "marker"})
    if args.vararg is not None:
        params.append(param(args.vararg, None, "*"))
    elif args.kwonlyargs:
        params.append({"text": "*", "name": "*", "annotation": None, "default": None, "kind": "marker"})
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(param(arg, default, ""))
    if args.kwarg is not None:
        params.append(param(args.kwarg, None, "**"))
    signature = "(" + ", ".join(p["text"] for p in params) + ")"
    if returns is not None:
        signature += " -> " + unparse(returns)
    return signature, [p for p in params if p["kind"] != "marker"]


def param(arg, default, prefix):
    annotation = unparse(arg.annotation)
    default_text = unparse(default)
    text = prefix + arg.arg
    if annotation:
        text += ": " + annotation
    if default_text is not None:
        text += (" = " if annotation else "=") + default_text
    kind = {"": "param", "*": "var_positional", "**": "var_keyword"}[prefix]
    return {"text": text, "name": arg.arg, "annotation": annotation, "default": default_text, "kind": kind}


def function_info(node, in_class):
    decorators = decorator_names(node)
    is_static = "staticmethod" in decorators
    signature, params = format_signature(node.args, node.returns, in_class and not is_static)
    return {
        "name": node.name,
        "signature": signature,
        "params": params,
        "returns": unparse(node.returns),
        "decorators": decorators,
        "is_async": isinstance(node, ast.AsyncFunctionDef),
        "is_property": any(d == "property" or d.endswith(".setter") or d.endswith(".getter") for d in decorators),
        "docstring": ast.get_docstring(node),
        "lineno": node.lineno,
    }


def attribute_docstring(body, index):
    """The string literal right after an assignment documents it (the PEP 257 convention)."""
    if index + 1 < len(body):
        following = body[index + 1]
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant) and isinstance(following.value.value, str):
            return inspect_clean(following.value.value)
    return None


def inspect_clean(text):
    lines = text.expandtabs().splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
    cleaned = [lines[0].strip()] + [line[indent:].rstrip() for line in lines[1:]]
    while cleaned and not cleaned[-1]:
        cleaned.pop()
    while cleaned and not cleaned[0]:
        cleaned.pop(0)
    return "\n".join(cleaned)


def assignments(body, keep):
    """Public names assigned at this level: constants, enum members, dataclass fields."""
    found = []
    for index, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, annotation, value = node.target.id, unparse(node.annotation), unparse(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, annotation, value = node.targets[0].id, None, unparse(node.value)
        else:
            continue
        if not keep(name):
            continue
        found.append({
            "name": name,
            "annotation": annotation,
            "value": value,
            "docstring": attribute_docstring(body, index),
            "lineno": node.lineno,
        })
    return found


def class_info(node):
    bases = [unparse(b) for b in node.bases]
    methods = []
    for child in node.body:
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if is_public(child.name) or child.name == "__init__":
                methods.append(function_info(child, True))
    return {
        "name": node.name,
        "bases": bases,
        "decorators": decorator_names(node),
        "docstring": ast.get_docstring(node),
        "is_enum": any(b.split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag") for b in bases),
        "is_exception": any(b.endswith("Error") or b.endswith("Exception") for b in bases),
        "attributes": assignments(node.body, is_public),
        "methods": methods,
        "lineno": node.lineno,
    }


def static_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return [str(n) for n in ast.literal_eval(node.value)]
            except ValueError:
                return None
    return None


def resolve_relative(module_name, is_package, level, target):
    parts = module_name.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def module_info(package_root, package_name, path):
    relative = os.path.relpath(path, package_root)
    segments = relative[: -len(".py")].split(os.sep)
    is_package = segments[-1] == "__init__"
    if is_package:
        segments = segments[:-1]
    name = ".".join([package_name] + segments)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    tree = ast.parse(source, filename=path)
    exported = static_all(tree)

    def listed(item):
        return item in exported if exported is not None else is_public(item)

    classes = [class_info(n) for n in tree.body if isinstance(n, ast.ClassDef) and listed(n.name)]
    functions = [
        function_info(n, False)
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and listed(n.name)
    ]
    variables = assignments(tree.body, lambda n: listed(n) and n != "__all__")
    # Names a module re-exports from inside the package, so its page can link to where they live.
    imports = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source_module = (
                resolve_relative(name, is_package, node.level, node.module)
                if node.level
                else node.module
            )
            if not source_module or not (source_module == package_name or source_module.startswith(package_name + ".")):
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name != "*" and listed(local):
                    imports.append({"name": local, "target": alias.name, "module": source_module})
    return {
        "name": name,
        "path": relative.replace(os.sep, "/"),
        "is_package": is_package,
        "docstring": ast.get_docstring(tree),
        "all": exported,
        "classes": classes,
        "functions": functions,
        "variables": variables,
        "imports": imports,
    }


def walk(package_dir):
    package_root = os.path.abspath(package_dir)
    package_name = os.path.basename(package_root)
    modules = []
    for directory, subdirs, files in os.walk(package_root):
        # Private, cache and test folders are not part of the public API.
        subdirs[:] = sorted(
            d for d in subdirs
            if is_public(d) and d not in ("tests", "test") and os.path.isfile(os.path.join(directory, d, "__init__.py"))
        )
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            if file != "__init__.py" and (not is_public(file) or file.startswith("test_")):
                continue
            modules.append(module_info(package_root, package_name, os.path.join(directory, file)))
    modules.sort(key=lambda m: m["name"])
    return {"package": package_name, "modules": modules}


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    if not os.path.isfile(os.path.join(argv[1], "__init__.py")):
        sys.stderr.write("not a package: %s\n" % argv[1])
        return 2
    json.dump(walk(argv[1]), sys.stdout, indent=None, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
