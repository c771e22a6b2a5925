"""Fuzzes the REST API with schemathesis against a live all-in-one server.

Starts the repository's all-in-one server the way the Python client suites do
(``clients/python/tests/support.py``: a free port, a data directory of its own, the demo data),
mints an administrator's token for it (the code of ``npm run -s token``), and runs schemathesis on
the OpenAPI document the server serves at ``/openapi.json``: every operation, positive and
negative examples, every check but ``positive_data_acceptance`` (see docs/adr/0044).

On PGlite and the in-process bus unless ``DATABASE_URL``/``NATS_URL`` are set; then on those, with
a schema suffix and events prefix of its own that are removed afterwards.

Usage: .venv/bin/python fuzz/fuzz_api.py [--max-time SECONDS] [--seed N] [--workers N] [--report-dir DIR]
The exit code is schemathesis's: 0 when no check failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
CONFIG = Path(__file__).resolve().parent / "schemathesis.toml"
# Found a schema-valid request that the server turns down for reasons the document cannot state
# (an id already taken, a profile's bounds): not a disagreement with the document.
EXCLUDED_CHECKS = "positive_data_acceptance"


def schemathesis_args(url: str, token: str, options: argparse.Namespace) -> list[str]:
    args = [
        str(SCHEMATHESIS), "--config-file", str(CONFIG), "run", f"{url}/openapi.json",
        "--header", f"Authorization: Bearer {token}",
        "--mode", "all",
        "--checks", "all",
        "--exclude-checks", EXCLUDED_CHECKS,
        "--max-time", str(options.max_time),
        "--workers", str(options.workers),
        "--request-timeout", "30",
        "--no-color",
    ]
    if options.seed is not None:
        args += ["--seed", str(options.seed)]
    if options.report_dir:
        args += ["--report", "junit,har", "--report-dir", str(Path(options.report_dir).resolve())]
    return args


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Fuzz the REST API with schemathesis against a live server.")
    parser.add_argument("--max-time", type=int, default=600, help="time budget of the run in seconds (default 600)")
    parser.add_argument("--seed", type=int, help="schemathesis's random seed, to repeat a run")
    parser.add_argument("--workers", type=int, default=1, help="concurrent workers (default 1)")
    parser.add_argument("--report-dir", help="also write JUnit and HAR reports there")
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    options = parse(argv)
    # The Python client suites' test server: one way to start the product for every Python suite.
    sys.path.insert(0, str(REPO_ROOT / "clients" / "python" / "tests"))
    import support

    server = support.server()  # stopped, and its data removed, when this process exits
    token = server.token("fuzzer", admin=True)
    print(f"fuzzing {server.url} (server log: {server.log_path})", flush=True)
    # Hypothesis keeps its example database in the working directory: a scratch one per run.
    with tempfile.TemporaryDirectory(prefix="aiem-fuzz-work-") as work:
        code = subprocess.run(schemathesis_args(server.url, token, options), cwd=work).returncode
    if code != 0:
        print(f"\nthe server's log, last lines:\n{server.log_tail()}", file=sys.stderr)
    return code

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
