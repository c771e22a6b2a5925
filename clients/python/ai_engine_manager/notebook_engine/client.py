"""The client for notebook engines: create, get, list, update, delete and open them.

The engines it returns carry their own actions
(:meth:`~ai_engine_manager.notebook_engine.notebook_engine.NotebookEngine.wait`, ``pause``,
``resume``, ``update``, ``resize_storage``, ``access``, ``delete``).

Example:
    >>> notebooks = clients.notebook_engine_client
    >>> engine = notebooks.create_notebook_engine(
    ...     parent="workspaces/default",
    ...     notebook_engine_id="eda",
    ...     profile="workspaces/global/notebookEngineProfiles/default",
    ...     notebook_image="workspaces/global/notebookEngineImages/default",
    ...     memory_bytes="8Gi",
    ... )
    >>> engine.wait()
    >>> notebooks.access_notebook_engine(name=engine.name)
    'https://...'
"""

from __future__ import annotations

import time
from typing import Any

from ai_engine_manager import _codec as _c
from ai_engine_manager import _wait
from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.engine_id.generator import generate_engine_id
from ai_engine_manager.exception import CustomApiException, TimeoutException
from ai_engine_manager.notebook_engine.mapper import (
    notebook_engine_from_api,
    notebook_engine_to_api,
    notebook_engines_page_from_api,
)
from ai_engine_manager.notebook_engine.notebook_engine import NotebookEngine
from ai_engine_manager.notebook_engine.page import NotebookEnginesPage
from ai_engine_manager.notebook_engine.state import NotebookEngineState

__all__ = ["NotebookEngineClient"]

_SERVICE = "enginemanager.v1.NotebookEngineService."


class NotebookEngineClient(ClientBase):
    """Creates, reads, lists, updates and deletes notebook engines.

    ``parent`` arguments take a workspace name (``"workspaces/default"``) or id
    (``"default"``); without one they use the client's default workspace.
    """

    def create_notebook_engine(
        self,
        parent: str | None = None,
        notebook_engine: NotebookEngine | None = None,
        notebook_engine_id: str | None = None,
        *,
        profile: str = "",
        notebook_image: str = "",
        display_name: str = "",
        cpu: int | None = None,
        gpu: int | None = None,
        memory_bytes: str | int | None = None,
        storage_bytes: str | int | None = None,
        max_idle_duration: str | int | None = None,
        max_running_duration: str | int | None = None,
        shared: bool = False,
        validate_only: bool = False,
    ) -> NotebookEngine:
        """Creates a notebook engine and starts it. The engine is returned at once, starting;
        call :meth:`~ai_engine_manager.notebook_engine.notebook_engine.NotebookEngine.wait` to
        wait until it runs.

        Describe the engine either as a :class:`NotebookEngine` in ``notebook_engine`` or with the
        keyword arguments; settings left unset take the profile's defaults. The first three
        parameters come in the official client's order: ``create_notebook_engine(parent,
        notebook_engine, notebook_engine_id)``.

        Args:
            parent: The workspace; the client's default when ``None``.
            notebook_engine: The engine to create; the keyword arguments are ignored when given.
            notebook_engine_id: The engine's id; generated from the display name when ``None``.
            profile: The profile,
                ``workspaces/{workspace}/notebookEngineProfiles/{notebook_engine_profile}``.
                Required.
            notebook_image: The image,
                ``workspaces/{workspace}/notebookEngineImages/{notebook_engine_image}``. Required;
                it cannot change later.
            display_name: A human-readable name, at most 63 characters.
            cpu: CPU cores.
            gpu: GPUs.
            memory_bytes: Memory, a quantity such as ``"8Gi"``.
            storage_bytes: The storage volume's size, as a quantity. It can only grow later.
            max_idle_duration: How long the engine may stay idle before it is paused.
            max_running_duration: How long the engine may run before it is paused.
            shared: Whether every member of the workspace can open the engine. Fixed at create.
            validate_only: Only check the request; nothing is created.

        Returns:
            The new engine.

        Raises:
            CustomApiException: ALREADY_EXISTS when the id is taken, INVALID_ARGUMENT when a
                value is outside the profile's constraints or the image is disabled.
        """
        workspace = self._workspace(parent)
        if notebook_engine is None:
            notebook_engine = NotebookEngine(
                profile=profile,
                notebook_image=notebook_image,
                display_name=display_name,
                cpu=cpu,
                gpu=gpu,
                memory_bytes=memory_bytes,  # type: ignore[arg-type]
                storage_bytes=storage_bytes,  # type: ignore[arg-type]
                max_idle_duration=max_idle_duration,  # type: ignore[arg-type]
                max_running_duration=max_running_duration,  # type: ignore[arg-type]
                shared=shared,
            )
        if notebook_engine_id is None:
            notebook_engine_id = generate_engine_id(
                notebook_engine.display_name, "notebook", lambda candidate: self._exists(f"{workspace}/notebookEngines/{candidate}")
            )
        response = self._connection.call(
            _SERVICE + "CreateNotebookEngine",
            {
                "parent": workspace,
                "notebookEngine": notebook_engine_to_api(notebook_engine),
                "notebookEngineId": notebook_engine_id,
                "validateOnly": validate_only,
            },
        )
        return self._bind(notebook_engine_from_api(response.get("notebookEngine") or {}))

    def get_notebook_engine(self, name: str) -> NotebookEngine:
        """Returns one notebook engine.

        Args:
            name: The engine's name, ``workspaces/{workspace}/notebookEngines/{notebook_engine}``.

        Raises:
            CustomApiException: NOT_FOUND when there is no such engine.
        """
        response = self._connection.call(_SERVICE + "GetNotebookEngine", {"name": name})
        return self._bind(notebook_engine_from_api(response.get("notebookEngine") or {}))

    def list_notebook_engines(
        self,
        parent: str | None = None,
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter: str = "",
    ) -> NotebookEnginesPage:
        """Lists one page of the notebook engines of a workspace that the caller can see.

        Args:
            parent: The workspace; the client's default when ``None``.
            page_size: The most engines to return: 0 means 50, values above 1000 mean 1000.
            page_token: The ``next_page_token`` of the previous page.
            order_by: The sort order. Default ``create_time desc``.
            filter: An AIP-160 filter, for example ``"state = STATE_RUNNING"``.

        Returns:
            The page: ``notebook_engines``, ``next_page_token`` and ``total_size``.

        Raises:
            CustomApiException: INVALID_ARGUMENT for a malformed filter or order.
        """
        response = self._connection.call(
            _SERVICE + "ListNotebookEngines",
            {
                "parent": self._workspace(parent),
                "pageSize": page_size,
                "pageToken": page_token,
                "orderBy": order_by,
                "filter": filter,
            },
        )
        page = notebook_engines_page_from_api(response)
        for engine in page.notebook_engines:
            self._bind(engine)
        return page

    def list_all_notebook_engines(
        self,
        parent: str | None = None,
        order_by: str = "",
        filter: str = "",
        page_size: int = 0,
    ) -> list[NotebookEngine]:
        """Lists every notebook engine of a workspace that the caller can see, following all
        pages.

        Args:
            parent: The workspace; the client's default when ``None``.
            order_by: The sort order; see :meth:`list_notebook_engines`.
            filter: An AIP-160 filter; see :meth:`list_notebook_engines`.
            page_size: How many engines to fetch per request: 0 means 50.

        Returns:
            All matching engines.
        """
        found: list[NotebookEngine] = []
        token = ""
        while True:
            page = self.list_notebook_engines(parent, page_size, token, order_by, filter)
            found.extend(page.notebook_engines)
            token = page.next_page_token
            if not token:
                return found

    def update_notebook_engine(
        self, notebook_engine: NotebookEngine, update_mask: str | list[str] = "*"
    ) -> NotebookEngine:
        """Changes the fields of a notebook engine named in ``update_mask``.

        Args:
            notebook_engine: The engine with its new values; its ``name`` says which engine.
            update_mask: The snake_case paths to change (``profile``, ``cpu``, ``gpu``,
                ``memory_bytes``, ``display_name``, ``max_idle_duration``,
                ``max_running_duration``), comma-separated or as a list; ``"*"`` for all.

        Returns:
            The engine after the update.

        Raises:
            CustomApiException: INVALID_ARGUMENT when the mask names a field that cannot change
                (such as ``notebook_image``) or a value is outside the profile's constraints.
        """
        response = self._connection.call(
            _SERVICE + "UpdateNotebookEngine",
            {"notebookEngine": notebook_engine_to_api(notebook_engine), "updateMask": _c.field_mask_to_api(update_mask)},
        )
        return self._bind(notebook_engine_from_api(response.get("notebookEngine") or {}))

    def delete_notebook_engine(self, name: str) -> NotebookEngine:
        """Deletes a notebook engine and its storage. It is returned in ``STATE_DELETING`` and
        disappears once it is gone.

        Args:
            name: The engine's name.

        Returns:
            The engine, now deleting.

        Raises:
            CustomApiException: NOT_FOUND when there is no such engine.
        """
        response = self._connection.call(_SERVICE + "DeleteNotebookEngine", {"name": name})
        return self._bind(notebook_engine_from_api(response.get("notebookEngine") or {}))

    def access_notebook_engine(self, name: str) -> str:
        """Returns the URL at which a user opens a notebook engine in a browser.

        Args:
            name: The engine's name.

        Returns:
            The URL.

        Raises:
            CustomApiException: FAILED_PRECONDITION when the engine is not running.
        """
        response = self._connection.call(_SERVICE + "AccessNotebookEngine", {"name": name})
        return _c.string(response.get("uri"))

    def pause_notebook_engine(self, name: str) -> NotebookEngine:
        """Pauses a notebook engine: stops it and keeps its storage. Returns at once; the engine
        goes through ``STATE_PAUSING`` to ``STATE_PAUSED`` (:meth:`wait`).

        Args:
            name: The engine's name, ``workspaces/{workspace}/notebookEngines/{notebook_engine}``.

        Returns:
            The engine, now pausing.

        Raises:
            CustomApiException: FAILED_PRECONDITION when it cannot be paused in its current state.
        """
        return self._bind(self._action("PauseNotebookEngine", name, {}))

    def resume_notebook_engine(self, name: str) -> NotebookEngine:
        """Resumes a paused or failed notebook engine on its kept storage. Returns at once; the
        engine goes through ``STATE_STARTING`` to ``STATE_RUNNING`` (:meth:`wait`).

        Args:
            name: The engine's name.

        Returns:
            The engine, now starting.

        Raises:
            CustomApiException: FAILED_PRECONDITION when it is neither paused nor failed.
        """
        return self._bind(self._action("ResumeNotebookEngine", name, {}))

    def resize_notebook_engine_storage(self, name: str, new_storage: str | int) -> NotebookEngine:
        """Grows a notebook engine's storage volume. ``storage_resizing`` stays true until the new
        size is in place.

        Args:
            name: The engine's name.
            new_storage: The new size, a quantity such as ``"50Gi"`` or an ``int`` number of
                bytes. It must be larger than ``storage_bytes``.

        Returns:
            The engine after the request.

        Raises:
            CustomApiException: INVALID_ARGUMENT when the size is not larger, or outside the
                profile's storage constraint.
        """
        return self._bind(self._action("ResizeNotebookEngineStorage", name, {"newStorageBytes": _c.quantity_to_api(new_storage)}))

    def wait(self, name: str, timeout_seconds: float | None = None) -> NotebookEngine | None:
        """Blocks until a notebook engine is no longer reconciling (running, paused, terminated or
        failed), or is gone, as the official client's ``wait`` does.

        Unlike :meth:`NotebookEngine.wait <ai_engine_manager.notebook_engine.notebook_engine.NotebookEngine.wait>`,
        a failed engine is returned rather than raised. Polls at the client's
        ``poll_interval_seconds`` (by default a fiftieth of a second, doubling up to five seconds).

        Args:
            name: The engine's name.
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.

        Returns:
            The engine as last read, or ``None`` when it no longer exists.

        Raises:
            TimeoutException: when the time runs out first.
            CustomApiException: when the engine cannot be read.
        """
        settled = {
            NotebookEngineState.STATE_RUNNING,
            NotebookEngineState.STATE_PAUSED,
            NotebookEngineState.STATE_TERMINATED,
            NotebookEngineState.STATE_FAILED,
        }
        deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
        for pause in _wait.intervals(self.poll_interval_seconds):
            try:
                engine = self.get_notebook_engine(name)
            except CustomApiException as e:
                if e.code_name == "NOT_FOUND":
                    return None
                raise
            if engine.state in settled and not engine.reconciling:
                return engine
            if deadline is not None and time.monotonic() + pause > deadline:
                raise TimeoutException(f"{name} is still {engine.state.name} (reconciling: {engine.reconciling}) after {timeout_seconds} seconds")
            time.sleep(pause)
        raise AssertionError("unreachable")

    # The engine objects' actions call these.

    def _bind(self, engine: NotebookEngine) -> NotebookEngine:
        engine._client = self
        return engine

    def _exists(self, name: str) -> bool:
        try:
            self.get_notebook_engine(name)
        except CustomApiException as e:
            if e.code_name == "NOT_FOUND":
                return False
            raise
        return True

    def _action(self, method: str, name: str, fields: dict[str, Any]) -> NotebookEngine:
        response = self._connection.call(_SERVICE + method, {"name": name, **fields})
        return notebook_engine_from_api(response.get("notebookEngine") or {})
