"""The Python client of the AI Engine Manager.

Sign in with :func:`login`, which returns a :class:`Clients` object holding one client per
resource kind: Driverless AI, H2O, notebook and sandbox engines, their profiles, versions,
images and templates, and what runs inside sandbox engines. The package uses only the Python
standard library.

Example:
    >>> from ai_engine_manager import login
    >>> clients = login(url="http://127.0.0.1:8080", token=token)
    >>> engine = clients.dai_engine_client.create_engine(display_name="Churn model")
    >>> engine.wait()
"""

from ai_engine_manager.exception import (
    ApiConnectionException,
    CustomApiException,
    FailedEngineException,
    TimeoutException,
)
from ai_engine_manager.login import Clients, SandboxClients, login, login_custom

__version__ = "0.1.0"
"""The version of this client."""

__all__ = [
    "login",
    "login_custom",
    "Clients",
    "SandboxClients",
    "CustomApiException",
    "FailedEngineException",
    "TimeoutException",
    "ApiConnectionException",
    "__version__",
]
