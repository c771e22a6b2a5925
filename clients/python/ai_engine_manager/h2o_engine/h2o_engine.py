"""An H2O engine, with its actions: wait, terminate, delete and download logs.

Engine objects come from :class:`~ai_engine_manager.h2o_engine.client.H2OEngineClient`. H2O
engines cannot be paused: :meth:`H2OEngine.terminate` stops one for good, and the server
terminates an engine on its own when it exceeds its maximum idle or running duration.

Example:
    >>> engine = clients.h2o_engine_client.create_engine(display_name="Fraud features", node_count=2)
    >>> engine.wait()
    >>> engine.terminate()
    >>> engine.wait()
    >>> engine.state
    <H2OEngineState.STATE_TERMINATED: 'STATE_TERMINATED'>
"""

from __future__ import annotations

import asyncio

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ai_engine_manager import _wait
from ai_engine_manager._client_base import BoundResource
from ai_engine_manager.connection_config import ConnectionConfig

# BEGIN GENERATED IMPORTS (scripts/generate.py)
import datetime
from ai_engine_manager.h2o_engine.state import H2OEngineState
from ai_engine_manager.h2o_engine_profile.profile import H2OEngineProfile
from ai_engine_manager.h2o_engine_version.version import H2OEngineVersion
# END GENERATED IMPORTS

if TYPE_CHECKING:
    from ai_engine_manager.h2o_engine.client import H2OEngineClient

__all__ = ["H2OEngine"]


@dataclass
class H2OEngine(BoundResource):
    """An H2O engine: a cluster of H2O nodes that a user runs in a workspace.

    Its profile bounds the nodes' resources and the engine's durations; its version says which
    H2O release it runs and cannot change. ``STATE_TERMINATED`` is final: a terminated engine
    stays listed until it is deleted.

    Sizes read as quantities (``memory_bytes == "16Gi"``, per node) and durations as duration
    strings (``max_idle_duration == "1h"``); both accept the same forms when set.
    """

    # BEGIN GENERATED FIELDS H2OEngine (scripts/generate.py)
    name: str = ""
    """The resource name, `workspaces/{workspace}/h2oEngines/{h2o_engine}`."""

    uid: str = ""
    """A unique identifier that the server assigns. Unlike the name, it is never reused after the
    engine is deleted.

    Read-only: set by the server.
    """

    creator: str = ""
    """Who created the engine, as `users/<id>`.

    Read-only: set by the server.
    """

    creator_display_name: str = ""
    """The display name of the creator.

    Read-only: set by the server.
    """

    profile: str = ""
    """The profile the engine uses,
    `workspaces/{workspace}/h2oEngineProfiles/{h2o_engine_profile}`. The profile must be enabled
    and, when it verifies roles, assigned to one of the caller's roles. Its constraints bound
    `node_count`, `cpu`, `gpu`, `memory_bytes`, `max_idle_duration` and `max_running_duration`,
    and fill them when they are left unset.

    Required on create.
    """

    profile_info: H2OEngineProfile | None = None
    """A copy of the profile as it was when the engine was created. Later changes to the profile do
    not show here.

    Read-only: set by the server.
    """

    state: H2OEngineState = H2OEngineState.STATE_UNSPECIFIED
    """The current state of the engine.

    Read-only: set by the server.
    """

    reconciling: bool = False
    """True while the engine is moving towards the state that was asked for, for example between a
    terminate request and the engine reaching `STATE_TERMINATED`.

    Read-only: set by the server.
    """

    create_time: datetime.datetime | None = None
    """When the engine was created.

    Read-only: set by the server.
    """

    delete_time: datetime.datetime | None = None
    """When deletion of the engine was requested. Unset until then.

    Read-only: set by the server.
    """

    update_time: datetime.datetime | None = None
    """When the engine was last updated.

    Read-only: set by the server.
    """

    resume_time: datetime.datetime | None = None
    """When the engine started running. The running duration counts from here.

    Read-only: set by the server.
    """

    api_url: str = ""
    """The base URL of the engine's H2O API, for clients and SDKs. Empty while the engine does not
    run.

    Read-only: set by the server.
    """

    login_url: str = ""
    """The URL a user opens in a browser to use the engine. Empty while the engine does not run.

    Read-only: set by the server.
    """

    annotations: dict[str, str] = field(default_factory=dict)
    """Free-form key/value labels for clients' own use. Each key has at most 63 characters, begins
    and ends with a letter or digit, and may contain dashes, underscores and dots in between.
    """

    display_name: str = ""
    """A human-readable name shown in lists, at most 63 characters."""

    node_count: int | None = None
    """The number of nodes in the cluster. Unset takes the profile's `node_count_constraint`
    default; a value must lie within that constraint. `CalculateH2OEngineSizeRawDataset` and
    `CalculateH2OEngineSizeCompressedDataset` suggest a value for a dataset.
    """

    cpu: int | None = None
    """The number of CPU cores of each node. Unset takes the profile's `cpu_constraint` default; a
    value must lie within that constraint.
    """

    gpu: int | None = None
    """The number of GPUs of each node. Unset takes the profile's `gpu_constraint` default; a value
    must lie within that constraint.
    """

    memory_bytes: str | None = None
    """The memory of each node, in bytes. Unset takes the profile's `memory_bytes_constraint`
    default; a value must lie within that constraint.

    A quantity such as ``"16Gi"``; an ``int`` number of bytes is accepted too.
    """

    max_idle_duration: str | None = None
    """How long the engine may stay idle before the server terminates it. Unset takes the profile's
    `max_idle_duration_constraint` default; a value must lie within that constraint. Idle time
    starts again on every client request to the engine.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.
    """

    max_running_duration: str | None = None
    """How long the engine may run, counted from `resume_time`, before the server terminates it.
    Unset takes the profile's `max_running_duration_constraint` default; a value must lie within
    that constraint.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.
    """

    current_idle_duration: str | None = None
    """How long the engine has been idle, computed when it is read. Set only while the engine runs.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.

    Read-only: set by the server.
    """

    current_running_duration: str | None = None
    """How long the engine has been running since `resume_time`, computed when it is read. Set only
    while the engine runs.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.

    Read-only: set by the server.
    """

    h2o_engine_version: str = ""
    """The H2O version the engine runs,
    `workspaces/{workspace}/h2oEngineVersions/{h2o_engine_version}`, usually in
    `workspaces/global`. An alias such as `workspaces/global/h2oEngineVersions/latest` is
    accepted and resolved to the version it points to; the engine then returns that version's
    name. It cannot change after create.

    Set on create; cannot change afterwards.
    """

    h2o_engine_version_info: H2OEngineVersion | None = None
    """A copy of the version the engine runs, as it was when the engine was created.

    Read-only: set by the server.
    """

    failure_message: str = ""
    """Why the engine failed, in words meant for people. Set while the engine is in `STATE_FAILED`;
    empty otherwise.

    Read-only: set by the server.
    """
    # END GENERATED FIELDS H2OEngine

    _client: H2OEngineClient | None = field(default=None, init=False, repr=False, compare=False)


    @property
    def engine_id(self) -> str:
        """The engine's id, the last segment of its name."""
        return self.name.rsplit("/", 1)[-1]

    @property
    def workspace_id(self) -> str:
        """The id of the engine's workspace."""
        parts = self.name.split("/")
        return parts[1] if len(parts) > 1 else ""

    def refresh(self) -> None:
        """Reads the engine again from the server and updates this object.

        Raises:
            CustomApiException: when the engine no longer exists (NOT_FOUND) or cannot be read.
        """
        self._assign(self._bound()._get(self.name))

    def wait(
        self,
        timeout_seconds: float | None = None,
        poll_interval_seconds: float | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Blocks until the engine is running or terminated and no longer reconciling.

        A deleted engine ends the wait once it is gone; this object then keeps its last state,
        ``STATE_DELETING``.

        Args:
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.
            poll_interval_seconds: How often to ask the server; by default a fiftieth of a second
                at first, doubling up to five seconds.
            timeout: Another name for ``timeout_seconds``.

        Raises:
            FailedEngineException: when the engine reaches ``STATE_FAILED``.
            TimeoutException: when the time runs out first.
            CustomApiException: when the engine cannot be read.
        """
        client = self._bound()
        _wait.wait_for_engine(
            self,
            self.refresh,
            # Paused is only seen on engines from before H2O engines stopped pausing.
            settled={H2OEngineState.STATE_RUNNING, H2OEngineState.STATE_TERMINATED, H2OEngineState.STATE_PAUSED},
            failed=H2OEngineState.STATE_FAILED,
            deleting=H2OEngineState.STATE_DELETING,
            timeout_seconds=timeout_seconds if timeout_seconds is not None else timeout,
            poll_interval_seconds=poll_interval_seconds if poll_interval_seconds is not None else client.poll_interval_seconds,
        )

    async def wait_async(self, timeout_seconds: float | None = None, poll_interval_seconds: float | None = None) -> None:
        """:meth:`wait` for ``asyncio`` code: waits in a worker thread, so the event loop keeps
        running. Takes the same arguments and raises the same exceptions."""
        await asyncio.to_thread(self.wait, timeout_seconds, poll_interval_seconds)

    def terminate(self) -> None:
        """Stops the engine for good. It goes through ``STATE_TERMINATING`` to
        ``STATE_TERMINATED`` and cannot be started again.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine cannot be terminated in its
                current state.
        """
        self._assign(self._bound()._action("TerminateH2OEngine", self.name, {}))

    def delete(self, allow_missing: bool = False, validate_only: bool = False) -> None:
        """Deletes the engine. It goes to ``STATE_DELETING`` and disappears once it is gone;
        :meth:`wait` returns then.

        Args:
            allow_missing: Succeed when the engine does not exist any more.
            validate_only: Only check the request; nothing is deleted.

        Raises:
            CustomApiException: NOT_FOUND when the engine does not exist and ``allow_missing`` is
                false.
        """
        self._assign(self._bound()._delete(self.name, allow_missing, validate_only))

    def download_logs(self) -> str:
        """Returns the engine's logs as text.

        Raises:
            CustomApiException: when the logs cannot be read.
        """
        return self._bound()._download_logs(self.name).decode("utf-8", "replace")

    def get_connection_config(self) -> ConnectionConfig:
        """Returns how to reach the engine's H2O cluster: its ``api_url`` with the token provider
        and TLS settings of this client. Useful for ``h2o.connect``.

        Raises:
            RuntimeError: when the engine has no API URL (a server that gives it only while the
                engine runs).
        """
        if not self.api_url:
            raise RuntimeError(f"{self.name} has no API URL; it is {self.state.name}")
        return dataclasses.replace(self._bound()._connection.config, url=self.api_url)
