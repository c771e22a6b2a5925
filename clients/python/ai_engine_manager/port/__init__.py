"""Ports of a sandbox engine made reachable from outside."""

from ai_engine_manager.port.client import PortClient
from ai_engine_manager.port.port import Port
from ai_engine_manager.port.page import PortsPage

__all__ = ["PortClient", "Port", "PortsPage"]
