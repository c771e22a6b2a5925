"""A Driverless AI engine, with its actions: wait, pause, resume, update, resize, upgrade, delete.

Engine objects come from :class:`~ai_engine_manager.dai_engine.client.DAIEngineClient`. Every
action sends one request and updates the object in place with what the server returned; the
server carries the action out in the background, so call :meth:`DAIEngine.wait` to block until
the engine has settled.

Example:
    >>> engine = clients.dai_engine_client.create_engine(display_name="Churn model")
    >>> engine.wait()
    >>> engine.pause()
    >>> engine.wait()
    >>> engine.state
    <DAIEngineState.STATE_PAUSED: 'STATE_PAUSED'>
"""

from __future__ import annotations

import asyncio

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ai_engine_manager import _codec as _c
from ai_engine_manager import _wait
from ai_engine_manager._client_base import BoundResource
from ai_engine_manager.connection_config import ConnectionConfig

# BEGIN GENERATED IMPORTS (scripts/generate.py)
import datetime
from ai_engine_manager.dai_engine.state import DAIEngineState
from ai_engine_manager.dai_engine_profile.profile import DAIEngineProfile
from ai_engine_manager.dai_engine_version.version import DAIEngineVersion
# END GENERATED IMPORTS

if TYPE_CHECKING:
    from ai_engine_manager.dai_engine.client import DAIEngineClient

__all__ = ["DAIEngine"]


@dataclass
class DAIEngine(BoundResource):
    """A Driverless AI engine: one Driverless AI server that a user runs in a workspace.

    The engine's profile bounds its resources and durations; its version says which Driverless
    AI release it runs. A running engine can be paused, which stops it and keeps its data, and
    resumed later. The server pauses an engine on its own when it exceeds its maximum idle or
    running duration.

    Sizes read as quantities (``memory_bytes == "16Gi"``) and durations as duration strings
    (``max_idle_duration == "2h"``); both accept the same forms when set.
    """

    # BEGIN GENERATED FIELDS DAIEngine (scripts/generate.py)
    name: str = ""
    """The resource name, `workspaces/{workspace}/daiEngines/{dai_engine}`."""

    uid: str = ""
    """A unique identifier that the server assigns. Unlike the name, it is never reused after the
    engine is deleted.

    Read-only: set by the server.
    """

    creator: str = ""
    """Who created the engine, as `users/<id>`. Changes only through `MigrateDAIEngineCreator`.

    Read-only: set by the server.
    """

    creator_display_name: str = ""
    """The display name of the creator.

    Read-only: set by the server.
    """

    profile: str = ""
    """The profile the engine uses,
    `workspaces/{workspace}/daiEngineProfiles/{dai_engine_profile}`. The profile must be enabled
    and, when it verifies roles, assigned to one of the caller's roles. Its constraints bound
    `cpu`, `gpu`, `memory_bytes`, `storage_bytes`, `max_idle_duration` and
    `max_running_duration`, and fill them when they are left unset.

    Required on create.
    """

    profile_info: DAIEngineProfile | None = None
    """A copy of the profile as it was when the engine was created or its profile last changed.
    Later changes to the profile do not show here.

    Read-only: set by the server.
    """

    state: DAIEngineState = DAIEngineState.STATE_UNSPECIFIED
    """The current state of the engine.

    Read-only: set by the server.
    """

    reconciling: bool = False
    """True while the engine is moving towards the state that was asked for, for example between a
    pause request and the engine reaching `STATE_PAUSED`.

    Read-only: set by the server.
    """

    storage_resizing: bool = False
    """True while the engine's storage is being grown by `ResizeDAIEngineStorage`. Resizing can
    take hours.

    Read-only: set by the server.
    """

    total_disk_size_bytes: str | None = None
    """The total size of the engine's data disk, in bytes. Reported only by Driverless AI 1.10.6
    and later, and only while the engine runs; unset otherwise.

    A quantity such as ``"16Gi"``; an ``int`` number of bytes is accepted too.

    Read-only: set by the server.
    """

    free_disk_size_bytes: str | None = None
    """The free space on the engine's data disk, in bytes. Reported only by Driverless AI 1.10.6
    and later, and only while the engine runs; unset otherwise.

    A quantity such as ``"16Gi"``; an ``int`` number of bytes is accepted too.

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
    """When the engine last started running, after create or after a resume. The running duration
    counts from here.

    Read-only: set by the server.
    """

    api_url: str = ""
    """The base URL of the engine's Driverless AI API, for clients and SDKs. Empty while the engine
    does not run.

    Read-only: set by the server.
    """

    login_url: str = ""
    """The URL a user opens in a browser to log in to the engine. Empty while the engine does not
    run.

    Read-only: set by the server.
    """

    annotations: dict[str, str] = field(default_factory=dict)
    """Free-form key/value labels for clients' own use. Each key has at most 63 characters, begins
    and ends with a letter or digit, and may contain dashes, underscores and dots in between.
    """

    display_name: str = ""
    """A human-readable name shown in lists, at most 63 characters."""

    cpu: int | None = None
    """The number of CPU cores. Unset takes the profile's `cpu_constraint` default; a value must
    lie within that constraint.
    """

    gpu: int | None = None
    """The number of GPUs. Unset takes the profile's `gpu_constraint` default; a value must lie
    within that constraint.
    """

    memory_bytes: str | None = None
    """The memory, in bytes. Unset takes the profile's `memory_bytes_constraint` default; a value
    must lie within that constraint.

    A quantity such as ``"16Gi"``; an ``int`` number of bytes is accepted too.
    """

    storage_bytes: str | None = None
    """The size of the engine's data disk, in bytes. Unset takes the profile's
    `storage_bytes_constraint` default; a value must lie within that constraint. Set it on
    create; afterwards it only grows, through `ResizeDAIEngineStorage`.

    A quantity such as ``"16Gi"``; an ``int`` number of bytes is accepted too.
    """

    config: dict[str, str] = field(default_factory=dict)
    """Driverless AI configuration for this engine, as configuration keys and their values. When a
    key is set in several places, the value that applies is, highest first: the profile's
    `configuration_override`, the server's core configuration, this map, then the profile's
    `base_configuration`. Keys that the engine manager reserves for itself are ignored without
    an error. The profile's `config_editability` says which keys users may set here.
    """

    max_idle_duration: str | None = None
    """How long the engine may stay idle before the server pauses it. Unset takes the profile's
    `max_idle_duration_constraint` default; a value must lie within that constraint. Idle time
    starts again on every client request, login or logout, sync event, dataset upload and custom
    recipe upload.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.
    """

    max_running_duration: str | None = None
    """How long the engine may run, counted from `resume_time`, before the server pauses it. Unset
    takes the profile's `max_running_duration_constraint` default; a value must lie within that
    constraint.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.
    """

    upgrade_available: bool = False
    """True when a newer Driverless AI version than the engine's is available. Move to it with
    `UpgradeDAIEngineVersion`.

    Read-only: set by the server.
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

    dai_engine_version: str = ""
    """The Driverless AI version the engine runs,
    `workspaces/{workspace}/daiEngineVersions/{dai_engine_version}`, usually in
    `workspaces/global`. An alias such as `workspaces/global/daiEngineVersions/latest` is
    accepted and resolved to the version it points to; the engine then returns that version's
    name. After create it changes only through `UpgradeDAIEngineVersion`.

    Required on create.
    """

    dai_engine_version_info: DAIEngineVersion | None = None
    """A copy of the version the engine runs, as it was when the engine was created or upgraded.

    Read-only: set by the server.
    """

    data_directory_storage_class: str = ""
    """The storage class of the engine's data disk, taken from the profile's
    `data_directory_storage_class` when the engine was created. Empty means the cluster's
    default storage class.

    Read-only: set by the server.
    """

    failure_message: str = ""
    """Why the engine failed, in words meant for people. Set while the engine is in `STATE_FAILED`;
    empty otherwise.

    Read-only: set by the server.
    """
    # END GENERATED FIELDS DAIEngine

    _client: DAIEngineClient | None = field(default=None, init=False, repr=False, compare=False)


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
        """Blocks until the engine is running or paused and no longer reconciling.

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
            settled={DAIEngineState.STATE_RUNNING, DAIEngineState.STATE_PAUSED},
            failed=DAIEngineState.STATE_FAILED,
            deleting=DAIEngineState.STATE_DELETING,
            timeout_seconds=timeout_seconds if timeout_seconds is not None else timeout,
            poll_interval_seconds=poll_interval_seconds if poll_interval_seconds is not None else client.poll_interval_seconds,
        )

    async def wait_async(self, timeout_seconds: float | None = None, poll_interval_seconds: float | None = None) -> None:
        """:meth:`wait` for ``asyncio`` code: waits in a worker thread, so the event loop keeps
        running. Takes the same arguments and raises the same exceptions."""
        await asyncio.to_thread(self.wait, timeout_seconds, poll_interval_seconds)

    def pause(self, validate_only: bool = False) -> None:
        """Pauses the engine: stops it and keeps its data. It goes through ``STATE_PAUSING`` to
        ``STATE_PAUSED``.

        Args:
            validate_only: Only check the request; the engine is not paused.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine cannot be paused in its
                current state.
        """
        self._assign(self._bound()._action("PauseDAIEngine", self.name, {"validateOnly": validate_only}))

    def resume(self, validate_only: bool = False) -> None:
        """Resumes a paused or failed engine on its kept data. It goes through ``STATE_STARTING``
        to ``STATE_RUNNING``.

        Args:
            validate_only: Only check the request; the engine is not resumed.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine is neither paused nor failed.
        """
        self._assign(self._bound()._action("ResumeDAIEngine", self.name, {"validateOnly": validate_only}))

    def delete(self, allow_missing: bool = False, validate_only: bool = False) -> None:
        """Deletes the engine and its data. It goes to ``STATE_DELETING`` and disappears once it
        is gone; :meth:`wait` returns then.

        Args:
            allow_missing: Succeed when the engine does not exist any more.
            validate_only: Only check the request; nothing is deleted.

        Raises:
            CustomApiException: NOT_FOUND when the engine does not exist and ``allow_missing`` is
                false.
        """
        self._assign(self._bound()._delete(self.name, allow_missing, validate_only))

    def update(self, update_mask: str | list[str] = "*", allow_missing: bool = False, validate_only: bool = False) -> None:
        """Sends the fields named in ``update_mask`` of this object to the server.

        Change the attributes first, for example ``engine.display_name = "Q3"``, then call
        ``engine.update(update_mask="display_name")``. The paths that can change are
        ``profile``, ``cpu``, ``gpu``, ``memory_bytes``, ``config``, ``annotations``,
        ``display_name``, ``max_idle_duration`` and ``max_running_duration``; storage grows
        through :meth:`resize_storage` and the version changes through
        :meth:`upgrade_dai_engine_version`.

        Args:
            update_mask: The snake_case paths to change, comma-separated or as a list; ``"*"``
                for every path that can change.
            allow_missing: When the engine does not exist, create it from this object, with the
                last segment of its ``name`` as the id.
            validate_only: Only check the request; the engine as it would become is returned,
                but nothing changes.

        Raises:
            CustomApiException: INVALID_ARGUMENT when the mask names a field that cannot change
                or a value is outside the profile's constraints.
        """
        self._assign(self._bound()._update(self, update_mask, validate_only, allow_missing))

    def download_logs(self) -> str:
        """Returns the engine's logs as text.

        Raises:
            CustomApiException: when the logs cannot be read.
        """
        return self._bound()._download_logs(self.name).decode("utf-8", "replace")

    def upgrade_dai_engine_version(self, new_dai_engine_version: str) -> None:
        """Moves the engine to another Driverless AI version, keeping its data.

        Args:
            new_dai_engine_version: The version,
                ``workspaces/{workspace}/daiEngineVersions/{dai_engine_version}``; an alias such as
                ``workspaces/global/daiEngineVersions/latest`` is resolved.

        Raises:
            CustomApiException: when the version does not exist or cannot be used.
        """
        self._assign(
            self._bound()._action("UpgradeDAIEngineVersion", self.name, {"newDaiEngineVersion": new_dai_engine_version})
        )

    def migrate_creator(self, new_creator: str) -> None:
        """Hands the engine over to another user, who becomes its creator. Administrators only.

        Args:
            new_creator: The new creator, as ``users/<id>``.

        Raises:
            CustomApiException: PERMISSION_DENIED for callers who are not administrators.
        """
        self._assign(self._bound()._action("MigrateDAIEngineCreator", self.name, {"newCreator": new_creator}))

    def resize_storage(self, new_storage: str | int) -> None:
        """Grows the engine's data disk. ``storage_resizing`` stays true until the new size is in
        place, which can take hours.

        Args:
            new_storage: The new size, a quantity such as ``"128Gi"`` or an ``int`` number of
                bytes. It must be larger than ``storage_bytes``.

        Raises:
            CustomApiException: INVALID_ARGUMENT when the size is not larger, or outside the
                profile's storage constraint.
        """
        self._assign(
            self._bound()._action("ResizeDAIEngineStorage", self.name, {"newStorageBytes": _c.quantity_to_api(new_storage)})
        )

    def get_connection_config(self) -> ConnectionConfig:
        """Returns how to reach the engine's own Driverless AI API: its ``api_url`` with the token
        provider and TLS settings of this client. Useful for the Driverless AI Python client.

        Raises:
            RuntimeError: when the engine has no API URL (a server that gives it only while the
                engine runs).
        """
        if not self.api_url:
            raise RuntimeError(f"{self.name} has no API URL; it is {self.state.name}")
        return dataclasses.replace(self._bound()._connection.config, url=self.api_url)
