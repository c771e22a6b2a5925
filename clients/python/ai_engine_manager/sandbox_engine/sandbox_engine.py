"""A sandbox engine, with its actions: wait, terminate and delete.

Sandbox engine objects come from
:class:`~ai_engine_manager.sandbox_engine.client.SandboxEngineClient`. Work inside a running
sandbox goes through the filesystem, process, port, drive and secure store clients, which take
the sandbox engine's ``name``.

Example:
    >>> sandbox = clients.sandbox_engine_client.create_sandbox_engine(
    ...     parent="workspaces/default", sandbox_engine_id="agent-run-1",
    ...     sandbox_engine_image="workspaces/global/sandboxEngineImages/default",
    ...     sandbox_engine_template="workspaces/global/sandboxEngineTemplates/default")
    >>> sandbox.wait()
    >>> sandbox.terminate()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ai_engine_manager import _wait
from ai_engine_manager._client_base import BoundResource

# BEGIN GENERATED IMPORTS (scripts/generate.py)
import datetime
from ai_engine_manager.sandbox_engine.image_info import SandboxEngineImageInfo
from ai_engine_manager.sandbox_engine.pending_reason import SandboxEnginePendingReason
from ai_engine_manager.sandbox_engine.state import SandboxEngineState
from ai_engine_manager.sandbox_engine.template_info import SandboxEngineTemplateInfo
# END GENERATED IMPORTS

if TYPE_CHECKING:
    from ai_engine_manager.sandbox_engine.client import SandboxEngineClient

__all__ = ["SandboxEngine"]


@dataclass
class SandboxEngine(BoundResource):
    """A sandbox engine: an isolated environment in which a user runs code and tools.

    It starts from a sandbox engine image and takes its resources and idle limit from a sandbox
    engine template. It terminates on request or when it has been idle for the template's
    ``max_idle_duration``; ``STATE_TERMINATED`` is final.
    """

    # BEGIN GENERATED FIELDS SandboxEngine (scripts/generate.py)
    name: str = ""
    """The resource name, `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`."""

    display_name: str = ""
    """A human-readable name shown in lists, at most 63 characters."""

    uid: str = ""
    """A unique identifier the server assigns at creation. Unlike `name`, it is never reused after
    the sandbox engine is deleted.

    Read-only: set by the server.
    """

    state: SandboxEngineState = SandboxEngineState.STATE_UNSPECIFIED
    """The current state of the sandbox engine.

    Read-only: set by the server.
    """

    creator: str = ""
    """Who created the sandbox engine, as `users/<id>`. Only this user may use its filesystem,
    process, port, drive and secure-store calls.

    Read-only: set by the server.
    """

    creator_display_name: str = ""
    """The display name of the creator.

    Read-only: set by the server.
    """

    create_time: datetime.datetime | None = None
    """When the sandbox engine was created.

    Read-only: set by the server.
    """

    sandbox_engine_image: str = ""
    """The image the sandbox engine runs, the name of a sandbox engine image,
    `workspaces/{workspace}/sandboxEngineImages/{sandbox_engine_image}`, usually in
    `workspaces/global`. The image must exist and be enabled when the sandbox engine is created.

    Set on create; cannot change afterwards.
    """

    sandbox_engine_image_info: SandboxEngineImageInfo | None = None
    """A copy of the image as it was when the sandbox engine was created. Later changes to the
    image do not change this copy.

    Read-only: set by the server.
    """

    sandbox_engine_template: str = ""
    """The template that sets the sandbox engine's resources and idle limit, the name of a sandbox
    engine template, `workspaces/{workspace}/sandboxEngineTemplates/{sandbox_engine_template}`.
    The template must exist and be enabled when the sandbox engine is created.

    Set on create; cannot change afterwards.
    """

    sandbox_engine_template_info: SandboxEngineTemplateInfo | None = None
    """A copy of the template as it was when the sandbox engine was created. Later changes to the
    template do not change this copy.

    Read-only: set by the server.
    """

    current_idle_duration: str | None = None
    """How long the sandbox engine has been idle, that is without API calls on it or traffic
    through its ports. When it reaches the template's `max_idle_duration`, the sandbox engine
    terminates.

    A duration such as ``"2h"``: a whole number and one unit of ``s``, ``m``, ``h`` or ``d``.

    Read-only: set by the server.
    """

    annotations: dict[str, str] = field(default_factory=dict)
    """Free-form labels for your own use. Keys are at most 63 characters, begin and end with a
    letter or digit, and may contain dashes, underscores and dots in between.
    """

    pending_reason: SandboxEnginePendingReason = SandboxEnginePendingReason.PENDING_REASON_UNSPECIFIED
    """What the sandbox engine is waiting for while it starts, terminates or is deleted.
    `PENDING_REASON_UNSPECIFIED` in the settled states.

    Read-only: set by the server.
    """

    pending_message: str = ""
    """A human-readable account of `pending_reason`. Empty in the settled states.

    Read-only: set by the server.
    """

    failure_reason: str = ""
    """Why the sandbox engine is in `STATE_FAILED`: what kept it from starting (for example what
    the machine lacks, and how to provide it) or how it ended unexpectedly. Empty in every other
    state.

    Read-only: set by the server.
    """
    # END GENERATED FIELDS SandboxEngine

    _client: SandboxEngineClient | None = field(default=None, init=False, repr=False, compare=False)


    @property
    def sandbox_engine_id(self) -> str:
        """The sandbox engine's id, the last segment of its name."""
        return self.name.rsplit("/", 1)[-1]

    def refresh(self) -> None:
        """Reads the sandbox engine again from the server and updates this object.

        Raises:
            CustomApiException: when it no longer exists (NOT_FOUND) or cannot be read.
        """
        self._assign(self._bound().get_sandbox_engine(self.name))

    def wait(
        self,
        timeout_seconds: float | None = None,
        poll_interval_seconds: float | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Blocks until the sandbox engine is running or terminated.

        A deleted sandbox engine ends the wait once it is gone; this object then keeps its last
        state, ``STATE_DELETING``.

        Args:
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.
            poll_interval_seconds: How often to ask the server; by default a fiftieth of a second
                at first, doubling up to five seconds.
            timeout: Another name for ``timeout_seconds``.

        Raises:
            FailedEngineException: when the sandbox engine reaches ``STATE_FAILED``.
            TimeoutException: when the time runs out first.
            CustomApiException: when the sandbox engine cannot be read.
        """
        client = self._bound()
        _wait.wait_for_engine(
            self,
            self.refresh,
            settled={SandboxEngineState.STATE_RUNNING, SandboxEngineState.STATE_TERMINATED},
            failed=SandboxEngineState.STATE_FAILED,
            deleting=SandboxEngineState.STATE_DELETING,
            timeout_seconds=timeout_seconds if timeout_seconds is not None else timeout,
            poll_interval_seconds=poll_interval_seconds if poll_interval_seconds is not None else client.poll_interval_seconds,
        )

    def terminate(self) -> None:
        """Stops the sandbox engine: its processes are killed and it moves through
        ``STATE_TERMINATING`` to ``STATE_TERMINATED``. It cannot be started again.

        Raises:
            CustomApiException: FAILED_PRECONDITION in a state other than starting, running or
                failed.
        """
        self._assign(self._bound().terminate_sandbox_engine(self.name))

    def delete(self) -> None:
        """Deletes the sandbox engine: its processes are killed, its ports closed and its files
        removed. It goes to ``STATE_DELETING`` and disappears once the deletion is complete;
        :meth:`wait` returns then.

        Raises:
            CustomApiException: NOT_FOUND when the sandbox engine does not exist.
        """
        self._assign(self._bound().delete_sandbox_engine(self.name))
