"""Resource use of sandbox engines: memory, disk and CPU."""

from ai_engine_manager.metrics.client import MetricsClient
from ai_engine_manager.metrics.metrics import CpuMetrics, DiskMetrics, MemoryMetrics, Metrics

__all__ = ["MetricsClient", "Metrics", "MemoryMetrics", "DiskMetrics", "CpuMetrics"]
