"""Stopping the test server leaves no engine process behind.

Engines outlive the server on purpose (a restarted server adopts them), so a test run that stops
its server the way ``TestServer.stop`` does, SIGKILL included when SIGTERM takes too long, must
end them itself: otherwise each run leaves a stand-in server running from a deleted directory.
"""

from __future__ import annotations

import sys
import unittest

from tests import support
from ai_engine_manager.dai_engine.state import DAIEngineState


@unittest.skipUnless(sys.platform.startswith("linux"), "finds engine processes through /proc")
class ServerStopTest(unittest.TestCase):
    def test_no_engine_outlives_a_killed_server(self) -> None:
        # A server of its own: this test kills it.
        server = support.TestServer()
        try:
            server.start()
            clients = support.login(url=server.url, token=server.token("alice"), poll_interval_seconds=0.1)
            engine = clients.dai_engine_client.create_engine(workspace_id=support.unique("py-stop"), display_name="Killed")
            engine.wait(timeout_seconds=60)
            self.assertEqual(engine.state, DAIEngineState.STATE_RUNNING)
            engines = server.engine_processes()
            self.assertTrue(engines, "the running engine has a process")

            # What stop() falls back to when SIGTERM is not enough: nothing of the server runs after it.
            assert server.process is not None
            server.process.kill()
            server.process.wait(timeout=10)
            self.assertEqual(server.engine_processes(), engines, "engines outlive the server by design")
        finally:
            server.stop()
        self.assertEqual(server.engine_processes(), [], "stop() ended the engines")


if __name__ == "__main__":
    unittest.main()
