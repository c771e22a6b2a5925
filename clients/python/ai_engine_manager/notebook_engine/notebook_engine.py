"""A notebook engine, with its actions: wait, pause, resume, update, resize, access, delete.

Engine objects come from
:class:`~ai_engine_manager.notebook_engine.client.NotebookEngineClient`. Every action sends one
request and updates the object in place with what the server returned; call
:meth:`NotebookEngine.wait` to block until the engine has settled.

Example:
    >>> engine = clients.notebook_engine_client.create_notebook_engine(
    ...     parent="workspaces/default", notebook_engine_id="eda",
    ...     profile="workspaces/global/notebookEngineProfiles/default",
    ...     notebook_image="workspaces/global/notebookEngineImages/default")
    >>> engine.wait()
    >>> engine.access()
    'https://...'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ai_engine_manager import _codec as _c
from ai_engine_manager import _wait
from ai_engine_manager._client_base import BoundResource

# BEGIN GENERATED IMPORTS (scripts/generate.py)
import datetime
from ai_engine_manager.notebook_engine.failure_reason import NotebookEngineFailureReason
from ai_engine_manager.notebook_engine.state import NotebookEngineState
from ai_engine_manager.notebook_engine_image.image import NotebookEngineImage
from ai_engine_manager.notebook_engine_profile.profile import NotebookEngineProfile
# END GENERATED IMPORTS

if TYPE_CHECKING:
    from ai_engine_manager.notebook_engine.client import NotebookEngineClient

__all__ = ["NotebookEngine"]


@dataclass
class NotebookEngine(BoundResource):
    """A notebook engine: a Jupyter server that a user runs in a workspace.

    Its profile bounds its resources and durations; its image says what it runs and cannot
    change. A running engine can be paused, which keeps its storage, and resumed later. With
    ``shared`` set on create, every member of the workspace can open it.

    Sizes read as quantities (``memory_bytes == "8Gi"``) and durations as duration strings
    (``max_idle_duration == "1h"``); both accept the same forms when set.
    """

    # BEGIN GENERATED FIELDS NotebookEngine (scripts/generate.py)
    name: str = ""
    """The resource name, `workspaces/{workspace}/notebookEngines/{notebook_engine}`."""

    display_name: str = ""
    """A human-readable name shown in lists, at most 63 characters."""

    profile: str = ""
    """The profile the engine uses,
    `workspaces/{workspace}/notebookEngineProfiles/{notebook_engine_profile}`. The profile must
    be enabled and, when it verifies roles, assigned to one of the caller's roles. Its
    constraints bound `cpu`, `gpu`, `memory_bytes`, `storage_bytes`, `max_idle_duration` and
    `max_running_duration`, and fill them when they are left unset.

    Required on create.
    """

    notebook_image: str = ""
    """The image the engine runs,
    `workspaces/{workspace}/notebookEngineImages/{notebook_engine_image}`, usually in
    `workspaces/global`. The image must be enabled. It cannot change after create.

    Set on create; cannot change afterwards.
    """

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
    """The size of the engine's storage volume, in bytes. Unset takes the profile's
    `storage_bytes_constraint` default; a value must lie within that constraint. Set it on
    create; afterwards it only grows, through `ResizeNotebookEngineStorage`.

    A quantity such as ``"16Gi"``; an ``int`` number of bytes is accepted too.
    """

    max_idle_duration: str | None = None
    """How long the engine may stay idle before the server pauses it. Unset takes the profile's
    `max_idle_duration_constraint` default; a value must lie within that constraint. Idle time
    starts again on every request to the engine.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.
    """

    max_running_duration: str | None = None
    """How long the engine may run, counted from `resume_time`, before the server pauses it. Unset
    takes the profile's `max_running_duration_constraint` default; a value must lie within that
    constraint.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.
    """

    state: NotebookEngineState = NotebookEngineState.STATE_UNSPECIFIED
    """The current state of the engine.

    Read-only: set by the server.
    """

    reconciling: bool = False
    """True while the engine is moving towards the state that was asked for, for example between a
    pause request and the engine reaching `STATE_PAUSED`.

    Read-only: set by the server.
    """

    uid: str = ""
    """A unique identifier that the server assigns. Unlike the name, it is never reused after the
    engine is deleted.

    Read-only: set by the server.
    """

    notebook_image_info: NotebookEngineImage | None = None
    """A copy of the image the engine runs, as it was when the engine was created.

    Read-only: set by the server.
    """

    profile_info: NotebookEngineProfile | None = None
    """A copy of the profile as it was when the engine was created or its profile last changed.
    Later changes to the profile do not show here.

    Read-only: set by the server.
    """

    creator: str = ""
    """Who created the engine, as `users/<id>`.

    Read-only: set by the server.
    """

    updater: str = ""
    """Who last updated the engine, as `users/<id>`.

    Read-only: set by the server.
    """

    creator_display_name: str = ""
    """The display name of the creator.

    Read-only: set by the server.
    """

    updater_display_name: str = ""
    """The display name of the last updater.

    Read-only: set by the server.
    """

    create_time: datetime.datetime | None = None
    """When the engine was created.

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

    delete_time: datetime.datetime | None = None
    """When deletion of the engine was requested. Unset until then.

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

    storage_class_name: str = ""
    """The storage class of the engine's storage volume, taken from the profile's
    `storage_class_name` when the engine was created. Empty means the cluster's default storage
    class.

    Read-only: set by the server.
    """

    shared: bool = False
    """When true, the engine is shared with every member of its workspace, who can then see it.
    Otherwise only its creator and administrators can. Default false.
    """

    failure_reason: NotebookEngineFailureReason = NotebookEngineFailureReason.FAILURE_REASON_UNSPECIFIED
    """Why the engine failed. Set while the engine is in `STATE_FAILED`;
    `FAILURE_REASON_UNSPECIFIED` otherwise.

    Read-only: set by the server.
    """

    failure_message: str = ""
    """Why the engine failed, in words meant for people. Set while the engine is in `STATE_FAILED`;
    empty otherwise.

    Read-only: set by the server.
    """

    storage_resizing: bool = False
    """True while the engine's storage is being grown by `ResizeNotebookEngineStorage`. Resizing
    can take hours.

    Read-only: set by the server.
    """
    # END GENERATED FIELDS NotebookEngine

    _client: NotebookEngineClient | None = field(default=None, init=False, repr=False, compare=False)


    @property
    def engine_id(self) -> str:
        """The engine's id, the last segment of its name."""
        return self.name.rsplit("/", 1)[-1]

    def refresh(self) -> None:
        """Reads the engine again from the server and updates this object.

        Raises:
            CustomApiException: when the engine no longer exists (NOT_FOUND) or cannot be read.
        """
        self._assign(self._bound().get_notebook_engine(self.name))

    def wait(
        self,
        timeout_seconds: float | None = None,
        poll_interval_seconds: float | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Blocks until the engine is running, paused or terminated and no longer reconciling.

        A deleted engine ends the wait once it is gone; this object then keeps its last state,
        ``STATE_DELETING``.

        Args:
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.
            poll_interval_seconds: How often to ask the server; by default a fiftieth of a second
                at first, doubling up to five seconds.
            timeout: Another name for ``timeout_seconds``.

        Raises:
            FailedEngineException: when the engine reaches ``STATE_FAILED``; its
                ``failure_reason`` and ``failure_message`` say why.
            TimeoutException: when the time runs out first.
            CustomApiException: when the engine cannot be read.
        """
        client = self._bound()
        _wait.wait_for_engine(
            self,
            self.refresh,
            settled={NotebookEngineState.STATE_RUNNING, NotebookEngineState.STATE_PAUSED, NotebookEngineState.STATE_TERMINATED},
            failed=NotebookEngineState.STATE_FAILED,
            deleting=NotebookEngineState.STATE_DELETING,
            timeout_seconds=timeout_seconds if timeout_seconds is not None else timeout,
            poll_interval_seconds=poll_interval_seconds if poll_interval_seconds is not None else client.poll_interval_seconds,
        )

    def pause(self, validate_only: bool = False) -> None:
        """Pauses the engine: stops it and keeps its storage. It goes through ``STATE_PAUSING``
        to ``STATE_PAUSED``.

        Args:
            validate_only: Only check the request; the engine is not paused.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine cannot be paused in its
                current state.
        """
        self._assign(self._bound()._action("PauseNotebookEngine", self.name, {"validateOnly": validate_only}))

    def resume(self, validate_only: bool = False) -> None:
        """Resumes a paused or failed engine on its kept storage. It goes through
        ``STATE_STARTING`` to ``STATE_RUNNING``.

        Args:
            validate_only: Only check the request; the engine is not resumed.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine is neither paused nor failed.
        """
        self._assign(self._bound()._action("ResumeNotebookEngine", self.name, {"validateOnly": validate_only}))

    def delete(self) -> None:
        """Deletes the engine and its storage. It goes to ``STATE_DELETING`` and disappears once
        it is gone; :meth:`wait` returns then.

        Raises:
            CustomApiException: NOT_FOUND when the engine does not exist.
        """
        self._assign(self._bound().delete_notebook_engine(self.name))

    def update(self, update_mask: str | list[str] = "*") -> None:
        """Sends the fields named in ``update_mask`` of this object to the server.

        Change the attributes first, for example ``engine.memory_bytes = "16Gi"``, then call
        ``engine.update(update_mask="memory_bytes")``. The paths that can change are
        ``profile``, ``cpu``, ``gpu``, ``memory_bytes``, ``display_name``,
        ``max_idle_duration`` and ``max_running_duration``; the image and ``shared`` are fixed
        at create, and storage grows through :meth:`resize_storage`.

        Args:
            update_mask: The snake_case paths to change, comma-separated or as a list; ``"*"``
                for every path that can change.

        Raises:
            CustomApiException: INVALID_ARGUMENT when the mask names a field that cannot change
                or a value is outside the profile's constraints.
        """
        self._assign(self._bound().update_notebook_engine(self, update_mask))

    def resize_storage(self, new_storage: str | int) -> None:
        """Grows the engine's storage volume. ``storage_resizing`` stays true until the new size
        is in place, which can take hours.

        Args:
            new_storage: The new size, a quantity such as ``"50Gi"`` or an ``int`` number of
                bytes. It must be larger than ``storage_bytes``.

        Raises:
            CustomApiException: INVALID_ARGUMENT when the size is not larger, or outside the
                profile's storage constraint.
        """
        self._assign(
            self._bound()._action("ResizeNotebookEngineStorage", self.name, {"newStorageBytes": _c.quantity_to_api(new_storage)})
        )

    def access(self) -> str:
        """Returns the URL at which a user opens the engine in a browser.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine is not running.
        """
        return self._bound().access_notebook_engine(self.name)
