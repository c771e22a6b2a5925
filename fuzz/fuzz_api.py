"""Fuzzes the REST API with schemathesis against a live all-in-one server.

Starts the repository's server (``node --import tsx edge/src/main.ts``) on port 0 with a data
directory of its own and the demo data, reads the address it got from its "listening" log line,
mints an administrator's token for it (the code of ``npm run -s token``), and runs schemathesis on
the OpenAPI document the server serves at ``/openapi.json``: every operation, positive and
negative examples, every check but ``positive_data_acceptance`` (see docs/decisions.md).

On PGlite and the in-process bus unless ``DATABASE_URL``/``NATS_URL`` are set; then on those, with
a schema suffix and events prefix of its own that are removed afterwards.

Usage: .venv/bin/python fuzz/fuzz_api.py [--max-time SECONDS] [--seed N] [--workers N] [--report-dir DIR]
The exit code is schemathesis's: 0 when no check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
CONFIG = Path(__file__).resolve().parent / "schemathesis.toml"
# Found a schema-valid request that the server turns down for reasons the document cannot state
# (an id already taken, a profile's bounds): not a disagreement with the document.
EXCLUDED_CHECKS = "positive_data_acceptance"


class Server:
    """The all-in-one server on a port the system picks."""

    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="aiem-fuzz-")
        self.log_path = Path(self.data_dir) / "server.log"
        self.url = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AIEM_")}
        self.env.update({"AIEM_HOST": "127.0.0.1", "AIEM_PORT": "0", "AIEM_DATA_DIR": self.data_dir, "AIEM_SEED_DEMO": "true"})
        # Sandboxes outlive a stopped server by default; the data directory goes with it here.
        self.env["AIEM_SANDBOX_STOP_WITH_SERVICE"] = "true"
        if os.environ.get("DATABASE_URL") or os.environ.get("NATS_URL"):
            suffix = secrets.token_hex(4)
            self.env["AIEM_DB_SCHEMA_SUFFIX"] = f"_fz{suffix}"
            self.env["AIEM_EVENTS_PREFIX"] = f"fz{suffix}"

    def start(self, timeout: float = 90.0) -> None:
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                ["node", "--import", "tsx", str(REPO_ROOT / "edge" / "src" / "main.ts")],
                cwd=REPO_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.log_tail()}")
            self.url = self._listening_url()
            if self.url:
                return
            time.sleep(0.1)
        raise RuntimeError(f"the server did not listen within {timeout} s:\n{self.log_tail()}")

    def _listening_url(self) -> str:
        for line in self.log_path.read_text(errors="replace").splitlines():
            if '"failed to start"' in line:
                raise RuntimeError(f"the server failed to start:\n{self.log_tail()}")
            if '"listening"' in line:
                try:
                    return str(json.loads(line)["url"])
                except (ValueError, KeyError):
                    continue
        return ""

    def token(self) -> str:
        """An administrator's token; the CLI names the issuer after the port the server got."""
        env = {**self.env, "AIEM_PORT": self.url.rsplit(":", 1)[1]}
        result = subprocess.run(
            ["node", str(REPO_ROOT / "services" / "kit" / "bin" / "token.mjs"), "--user", "fuzzer", "--admin"],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60,
        )
        if result.returncode != 0:
            raise RuntimeError(f"minting a token failed: {result.stderr}")
        return result.stdout.strip()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if "AIEM_DB_SCHEMA_SUFFIX" in self.env:
            cleanup = subprocess.run(
                ["node", "--import", "tsx", str(REPO_ROOT / "clients" / "python" / "tests" / "cleanup_shared.mts")],
                cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=60,
            )
            if cleanup.returncode != 0:
                print(f"cleaning up PostgreSQL/NATS failed: {cleanup.stderr.strip()}", file=sys.stderr)
        shutil.rmtree(self.data_dir, ignore_errors=True)


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
    server = Server()
    try:
        server.start()
        token = server.token()
        print(f"fuzzing {server.url} (server log: {server.log_path})", flush=True)
        # Hypothesis keeps its example database in the working directory: a scratch one per run.
        with tempfile.TemporaryDirectory(prefix="aiem-fuzz-work-") as work:
            code = subprocess.run(schemathesis_args(server.url, token, options), cwd=work).returncode
        if code != 0:
            print(f"\nthe server's log, last lines:\n{server.log_tail()}", file=sys.stderr)
        return code
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
