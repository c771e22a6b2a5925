"""Processes in a sandbox engine: the client, processes, their states and output chunks."""

from ai_engine_manager.process.client import ProcessClient
from ai_engine_manager.process.process import Process
from ai_engine_manager.process.page import ProcessesPage
from ai_engine_manager.process.state import ProcessState
from ai_engine_manager.process.output_stream import OutputStream
from ai_engine_manager.process.output_chunk import OutputChunk
from ai_engine_manager.process.secret_environment_variable import SecretEnvironmentVariable

__all__ = ["ProcessClient", "Process", "ProcessesPage", "ProcessState", "OutputStream", "OutputChunk", "SecretEnvironmentVariable"]
