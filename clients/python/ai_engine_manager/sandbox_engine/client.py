"""The client for sandbox engines: create, get, list, wait for, terminate and delete them.

Example:
    >>> sandboxes = clients.sandbox_engine_client
    >>> sandbox = sandboxes.create_sandbox_engine(
    ...     parent="workspaces/default",
    ...     sandbox_engine_id="agent-run-1",
    ...     sandbox_engine_image="workspaces/global/sandboxEngineImages/default",
    ...     sandbox_engine_template="workspaces/global/sandboxEngineTemplates/default",
    ... )
    >>> sandbox = sandboxes.wait(name=sandbox.name)
    >>> sandbox.state
    <SandboxEngineState.STATE_RUNNING: 'STATE_RUNNING'>
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.engine_id.generator import generate_engine_id
from ai_engine_manager.exception import CustomApiException
from ai_engine_manager.sandbox_engine.mapper import (
    sandbox_engine_from_api,
    sandbox_engine_to_api,
    sandbox_engines_page_from_api,
)
from ai_engine_manager.sandbox_engine.page import SandboxEnginesPage
from ai_engine_manager.sandbox_engine.sandbox_engine import SandboxEngine

__all__ = ["SandboxEngineClient"]

_SERVICE = "enginemanager.sandbox.v1.SandboxEngineService."


class SandboxEngineClient(ClientBase):
    """Creates, reads, lists, terminates and deletes sandbox engines.

    Only a sandbox engine's creator may work inside it, through the filesystem, process, port,
    drive and secure store clients. ``parent`` arguments take a workspace name
    (``"workspaces/default"``) or id (``"default"``); without one they use the client's default
    workspace.
    """

    def create_sandbox_engine(
        self,
        parent: str | None = None,
        sandbox_engine: SandboxEngine | None = None,
        sandbox_engine_id: str | None = None,
        *,
        sandbox_engine_image: str = "",
        sandbox_engine_template: str = "",
        display_name: str = "",
        annotations: dict[str, str] | None = None,
    ) -> SandboxEngine:
        """Creates a sandbox engine and starts it. It is returned at once in ``STATE_STARTING``;
        call :meth:`wait` to wait until it runs.

        Args:
            parent: The workspace; the client's default when ``None``.
            sandbox_engine: The sandbox engine to create; the keyword arguments are ignored when
                given.
            sandbox_engine_id: The id: 1-63 lowercase letters, digits and hyphens, starting with
                a letter. Generated from the display name when ``None``.
            sandbox_engine_image: The image,
                ``workspaces/{workspace}/sandboxEngineImages/{sandbox_engine_image}``. Required.
            sandbox_engine_template: The template,
                ``workspaces/{workspace}/sandboxEngineTemplates/{sandbox_engine_template}``.
                Required.
            display_name: A human-readable name, at most 63 characters.
            annotations: Free-form labels.

        Returns:
            The new sandbox engine.

        Raises:
            CustomApiException: ALREADY_EXISTS when the id is taken, FAILED_PRECONDITION when the
                image or template does not exist or is disabled.
        """
        workspace = self._workspace(parent)
        if sandbox_engine is None:
            sandbox_engine = SandboxEngine(
                sandbox_engine_image=sandbox_engine_image,
                sandbox_engine_template=sandbox_engine_template,
                display_name=display_name,
                annotations=dict(annotations or {}),
            )
        if sandbox_engine_id is None:
            sandbox_engine_id = generate_engine_id(
                sandbox_engine.display_name, "sandbox", lambda candidate: self._exists(f"{workspace}/sandboxEngines/{candidate}")
            )
        response = self._connection.call(
            _SERVICE + "CreateSandboxEngine",
            {
                "parent": workspace,
                "sandboxEngine": sandbox_engine_to_api(sandbox_engine),
                "sandboxEngineId": sandbox_engine_id,
            },
        )
        return self._bind(sandbox_engine_from_api(response.get("sandboxEngine") or {}))

    def get_sandbox_engine(self, name: str) -> SandboxEngine:
        """Returns one sandbox engine.

        Args:
            name: Its name, ``workspaces/{workspace}/sandboxEngines/{sandbox_engine}``.

        Raises:
            CustomApiException: NOT_FOUND when there is no such sandbox engine.
        """
        response = self._connection.call(_SERVICE + "GetSandboxEngine", {"name": name})
        return self._bind(sandbox_engine_from_api(response.get("sandboxEngine") or {}))

    def list_sandbox_engines(
        self,
        parent: str | None = None,
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter: str = "",
    ) -> SandboxEnginesPage:
        """Lists one page of the sandbox engines of a workspace that the caller may see.

        Args:
            parent: The workspace, or ``"workspaces/-"`` for all (needs the LIST_ALL
                permission); the client's default when ``None``.
            page_size: The most sandbox engines to return: 0 means 50, values above 1000 mean
                1000.
            page_token: The ``next_page_token`` of the previous page.
            order_by: The sort order. Default ``create_time desc``.
            filter: An AIP-160 filter, for example ``"state = STATE_RUNNING"``.

        Returns:
            The page: ``sandbox_engines``, ``next_page_token`` and ``total_size``.

        Raises:
            CustomApiException: INVALID_ARGUMENT for a malformed filter or order.
        """
        response = self._connection.call(
            _SERVICE + "ListSandboxEngines",
            {
                "parent": self._workspace(parent),
                "pageSize": page_size,
                "pageToken": page_token,
                "orderBy": order_by,
                "filter": filter,
            },
        )
        page = sandbox_engines_page_from_api(response)
        for sandbox in page.sandbox_engines:
            self._bind(sandbox)
        return page

    def list_all_sandbox_engines(
        self,
        parent: str | None = None,
        order_by: str = "",
        filter: str = "",
        page_size: int = 0,
    ) -> list[SandboxEngine]:
        """Lists every sandbox engine of a workspace that the caller may see, following all pages.

        Args:
            parent: The workspace; the client's default when ``None``.
            order_by: The sort order; see :meth:`list_sandbox_engines`.
            filter: An AIP-160 filter; see :meth:`list_sandbox_engines`.
            page_size: How many to fetch per request: 0 means 50.

        Returns:
            All matching sandbox engines.
        """
        found: list[SandboxEngine] = []
        token = ""
        while True:
            page = self.list_sandbox_engines(parent, page_size, token, order_by, filter)
            found.extend(page.sandbox_engines)
            token = page.next_page_token
            if not token:
                return found

    def terminate_sandbox_engine(self, name: str) -> SandboxEngine:
        """Stops a sandbox engine for good: its processes are killed and it moves through
        ``STATE_TERMINATING`` to ``STATE_TERMINATED``.

        Args:
            name: The sandbox engine's name.

        Returns:
            The sandbox engine, now terminating.

        Raises:
            CustomApiException: FAILED_PRECONDITION in a state other than starting, running or
                failed.
        """
        response = self._connection.call(_SERVICE + "TerminateSandboxEngine", {"name": name})
        return self._bind(sandbox_engine_from_api(response.get("sandboxEngine") or {}))

    def delete_sandbox_engine(self, name: str) -> SandboxEngine:
        """Deletes a sandbox engine: its processes are killed, its ports closed and its files
        removed. It is returned in ``STATE_DELETING`` and disappears once the deletion is done.

        Args:
            name: The sandbox engine's name.

        Returns:
            The sandbox engine, now deleting.

        Raises:
            CustomApiException: NOT_FOUND when there is no such sandbox engine.
        """
        response = self._connection.call(_SERVICE + "DeleteSandboxEngine", {"name": name})
        return self._bind(sandbox_engine_from_api(response.get("sandboxEngine") or {}))

    def wait(
        self,
        name: str,
        timeout_seconds: float | None = None,
        *,
        poll_interval_seconds: float | None = None,
    ) -> SandboxEngine:
        """Blocks until a sandbox engine is running or terminated, and returns it.

        Args:
            name: The sandbox engine's name.
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.
            poll_interval_seconds: How often to ask the server; by default a fiftieth of a second
                at first, doubling up to five seconds.

        Returns:
            The sandbox engine as last read. When it was being deleted and is now gone, its
            last state, ``STATE_DELETING``.

        Raises:
            FailedEngineException: when the sandbox engine reaches ``STATE_FAILED``.
            TimeoutException: when the time runs out first.
        """
        sandbox = self.get_sandbox_engine(name)
        sandbox.wait(timeout_seconds, poll_interval_seconds)
        return sandbox

    def _bind(self, sandbox: SandboxEngine) -> SandboxEngine:
        sandbox._client = self
        return sandbox

    def _exists(self, name: str) -> bool:
        try:
            self.get_sandbox_engine(name)
        except CustomApiException as e:
            if e.code_name == "NOT_FOUND":
                return False
            raise
        return True
