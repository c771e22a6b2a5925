"""The client for the resource use of a sandbox engine: memory, disk and CPU.

Example:
    >>> m = clients.metrics_client.read_metrics(name=sandbox.name)
    >>> m.memory.current_bytes, m.memory.limit_bytes, m.cpu.usage_ratio
    (104857600, 2147483648, 0.02)
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.metrics.mapper import metrics_from_api
from ai_engine_manager.metrics.metrics import Metrics
# END GENERATED IMPORTS

__all__ = ["MetricsClient"]


class MetricsClient(ClientBase):
    """Reports how much memory, CPU and disk a sandbox engine uses. Every call is for the creator
    of the sandbox engine only; other callers are refused with PERMISSION_DENIED. The sandbox
    engine must be in `STATE_RUNNING`, otherwise calls fail with FAILED_PRECONDITION.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def read_metrics(
        self,
        name: str,
        strict_mode: bool = False,
    ) -> Metrics:
        """Returns a snapshot of the sandbox engine's memory, CPU and disk use, taken when the
        call arrives. When a figure cannot be measured, it is 0, unless `strict_mode` is
        true: the call then fails with UNAVAILABLE.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            strict_mode: Whether a figure that cannot be measured fails the call
                (UNAVAILABLE) instead of reading 0. Default false.

        Returns:
            The figures.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "strictMode": strict_mode,
        })
        response = self._connection.call("enginemanager.sandbox.v1.MetricsService.ReadMetrics", request)
        return metrics_from_api(response.get("metrics") or {})
    # END GENERATED METHODS
