"""A PEP 517 build backend for ai-engine-manager that needs only the Python standard library.

Why not setuptools: the setuptools that ships with Python 3.11 (65.x) cannot build a wheel
without the separate ``wheel`` package, so ``pip install --no-build-isolation`` fails offline on
a plain Python. This backend writes the wheel itself: the package's files, ``METADATA`` from the
``[project]`` table of ``pyproject.toml``, ``WHEEL`` and ``RECORD``. It also builds editable
wheels (a ``.pth`` file pointing at the source tree) and source distributions.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "ai_engine_manager"
# Fixed timestamps keep the archives byte-for-byte reproducible.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
SDIST_FILES = ["pyproject.toml", "README.md", "_build/backend.py"]


def _read_project() -> dict:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python 3.10: read the few keys this project uses
        return _read_project_fallback(text)
    return tomllib.loads(text)["project"]


def _read_project_fallback(text: str) -> dict:
    section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not section:
        raise RuntimeError("pyproject.toml has no [project] table")
    project: dict = {}
    for match in re.finditer(r'^([A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|\[.*?\])', section.group(1), re.M | re.S):
        key, raw = match.group(1), match.group(2)
        if raw.startswith("["):
            project[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', raw)
        else:
            project[key] = raw[1:-1]
    return project


def _names() -> tuple[str, str]:
    project = _read_project()
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return name, project["version"]


def _metadata() -> str:
    project = _read_project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for classifier in project.get("classifiers", []):
        lines.append(f"Classifier: {classifier}")
    for dependency in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dependency}")
    readme = project.get("readme")
    body = ""
    if isinstance(readme, str) and (ROOT / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _wheel_file() -> str:
    return "Wheel-Version: 1.0\nGenerator: ai-engine-manager _build/backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _package_files() -> list[Path]:
    files = []
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
            files.append(path)
    return files


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(directory: str, entries: list[tuple[str, bytes]]) -> str:
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    entries = entries + [
        (f"{dist_info}/METADATA", _metadata().encode("utf-8")),
        (f"{dist_info}/WHEEL", _wheel_file().encode("utf-8")),
        (f"{dist_info}/top_level.txt", f"{PACKAGE}\n".encode()),
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arcname, data in entries:
        writer.writerow([arcname, _digest(data), str(len(data))])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode("utf-8")))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return filename


def _write_metadata_dir(directory: str) -> str:
    name, version = _names()
    dist_info = Path(directory) / f"{name}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata(), encoding="utf-8")
    (dist_info / "WHEEL").write_text(_wheel_file(), encoding="utf-8")
    return dist_info.name


def get_requires_for_build_wheel(config_settings: dict | None = None) -> list[str]:
    """Nothing beyond the standard library is needed."""
    return []


def get_requires_for_build_editable(config_settings: dict | None = None) -> list[str]:
    """Nothing beyond the standard library is needed."""
    return []


def get_requires_for_build_sdist(config_settings: dict | None = None) -> list[str]:
    """Nothing beyond the standard library is needed."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict | None = None) -> str:
    """Writes the ``.dist-info`` directory of the wheel."""
    return _write_metadata_dir(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict | None = None) -> str:
    """Writes the ``.dist-info`` directory of the editable wheel."""
    return _write_metadata_dir(metadata_directory)


def build_wheel(wheel_directory: str, config_settings: dict | None = None, metadata_directory: str | None = None) -> str:
    """Builds the wheel: the package's files plus its metadata."""
    entries = [(path.relative_to(ROOT).as_posix(), path.read_bytes()) for path in _package_files()]
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory: str, config_settings: dict | None = None, metadata_directory: str | None = None) -> str:
    """Builds an editable wheel: a ``.pth`` file that puts the source tree on ``sys.path``."""
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", f"{ROOT}\n".encode())])


def build_sdist(sdist_directory: str, config_settings: dict | None = None) -> str:
    """Builds the source distribution: the package, the build backend, the README and
    ``pyproject.toml``."""
    name, version = _names()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    files = [ROOT / f for f in SDIST_FILES] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as archive:
        def add(arcname: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = int(time.mktime((1980, 1, 1, 0, 0, 0, 0, 1, -1)))
            archive.addfile(info, io.BytesIO(data))

        for path in files:
            add(path.relative_to(ROOT).as_posix(), path.read_bytes())
        add("PKG-INFO", _metadata().encode("utf-8"))
    return filename
