"""The client for Driverless AI engines: create, get and list them.

The engines it returns carry their own actions (:meth:`~ai_engine_manager.dai_engine.dai_engine.DAIEngine.wait`,
``pause``, ``resume``, ``update``, ``resize_storage``, ``upgrade_dai_engine_version``,
``download_logs``, ``migrate_creator``, ``delete``).

Example:
    >>> dai = clients.dai_engine_client
    >>> engine = dai.create_engine(
    ...     engine_id="churn-model",
    ...     display_name="Churn model",
    ...     cpu=4,
    ...     memory_bytes="16Gi",
    ...     max_idle_duration="2h",
    ... )
    >>> engine.wait()
    >>> [e.engine_id for e in dai.list_all_engines(filter="state = STATE_RUNNING")]
    ['churn-model']
"""

from __future__ import annotations

from typing import Any

from ai_engine_manager import _codec as _c
from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.dai_engine.dai_engine import DAIEngine
from ai_engine_manager.dai_engine.mapper import dai_engine_from_api, dai_engine_to_api, dai_engines_page_from_api
from ai_engine_manager.dai_engine.page import DAIEnginesPage
from ai_engine_manager.engine_id.generator import generate_engine_id
from ai_engine_manager.exception import CustomApiException

__all__ = ["DAIEngineClient", "DEFAULT_DAI_ENGINE_VERSION"]

_SERVICE = "enginemanager.v1.DAIEngineService."

DEFAULT_DAI_ENGINE_VERSION = "workspaces/global/daiEngineVersions/latest"
"""The version a new engine runs when the caller names none: whatever ``latest`` points to."""


class DAIEngineClient(ClientBase):
    """Creates, reads and lists Driverless AI engines.

    An engine is visible to its creator and to administrators. Methods take a ``workspace_id``
    (``"default"``) or a full workspace name (``"workspaces/default"``); without one they use
    the client's default workspace.
    """

    def create_engine(
        self,
        workspace_id: str = "",
        engine_id: str | None = None,
        cpu: int | None = None,
        gpu: int | None = None,
        memory_bytes: str | int | None = None,
        storage_bytes: str | int | None = None,
        max_idle_duration: str | int | None = None,
        max_running_duration: str | int | None = None,
        display_name: str = "",
        config: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        validate_only: bool = False,
        profile: str = "",
        dai_engine_version: str = "",
    ) -> DAIEngine:
        """Creates a Driverless AI engine and starts it. The engine is returned at once, starting;
        call :meth:`~ai_engine_manager.dai_engine.dai_engine.DAIEngine.wait` to wait until it runs.

        Settings left unset take the profile's defaults.

        Args:
            workspace_id: The workspace; the client's default when empty.
            engine_id: The engine's id: 1-63 lowercase letters, digits and hyphens, starting
                with a letter. When ``None``, one is generated from ``display_name`` (see
                :mod:`ai_engine_manager.engine_id.generator`).
            cpu: CPU cores.
            gpu: GPUs.
            memory_bytes: Memory, a quantity such as ``"16Gi"`` or an ``int`` number of bytes.
            storage_bytes: The data disk's size, as a quantity. It can only grow later.
            max_idle_duration: How long the engine may stay idle before it is paused, such as
                ``"2h"``.
            max_running_duration: How long the engine may run before it is paused, such as
                ``"1d"``.
            display_name: A human-readable name, at most 63 characters.
            config: Driverless AI configuration keys and values.
            annotations: Free-form labels.
            validate_only: Only check the request; the engine that would be created is
                returned, but nothing is created.
            profile: The profile,
                ``workspaces/{workspace}/daiEngineProfiles/{dai_engine_profile}``. When empty,
                the first profile in ``workspaces/global`` assigned to the caller (lowest
                ``priority`` value) is used.
            dai_engine_version: The Driverless AI version,
                ``workspaces/{workspace}/daiEngineVersions/{dai_engine_version}``; an alias is
                accepted. When empty, :data:`DEFAULT_DAI_ENGINE_VERSION`.

        Returns:
            The new engine.

        Raises:
            CustomApiException: ALREADY_EXISTS when the id is taken, INVALID_ARGUMENT when a
                value is outside the profile's constraints, RESOURCE_EXHAUSTED when a limit of
                the profile would be exceeded.
            ValueError: when no id could be generated, no profile is assigned to the caller, or
                a size or duration is malformed.
        """
        parent = self._workspace(workspace_id)
        if not profile:
            profile = self._first_assigned_profile()
        engine = DAIEngine(
            profile=profile,
            dai_engine_version=dai_engine_version or DEFAULT_DAI_ENGINE_VERSION,
            cpu=cpu,
            gpu=gpu,
            memory_bytes=memory_bytes,  # type: ignore[arg-type]
            storage_bytes=storage_bytes,  # type: ignore[arg-type]
            max_idle_duration=max_idle_duration,  # type: ignore[arg-type]
            max_running_duration=max_running_duration,  # type: ignore[arg-type]
            display_name=display_name,
            config=dict(config or {}),
            annotations=dict(annotations or {}),
        )
        if engine_id is None:
            engine_id = generate_engine_id(display_name, "dai", lambda candidate: self._exists(parent, candidate))
        response = self._connection.call(
            _SERVICE + "CreateDAIEngine",
            {
                "parent": parent,
                "daiEngine": dai_engine_to_api(engine),
                "daiEngineId": engine_id,
                "validateOnly": validate_only,
            },
        )
        return self._bind(dai_engine_from_api(response.get("daiEngine") or {}))

    def get_engine(self, engine_id: str, workspace_id: str = "") -> DAIEngine:
        """Returns one engine.

        Args:
            engine_id: The engine's id, or its full name
                ``workspaces/{workspace}/daiEngines/{dai_engine}``.
            workspace_id: The workspace; the client's default when empty.

        Raises:
            CustomApiException: NOT_FOUND when there is no such engine.
        """
        name = engine_id if "/" in engine_id else f"{self._workspace(workspace_id)}/daiEngines/{engine_id}"
        return self._get(name)

    def list_engines(
        self,
        workspace_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter: str = "",
    ) -> DAIEnginesPage:
        """Lists one page of the engines of a workspace that the caller can see.

        Args:
            workspace_id: The workspace; the client's default when empty.
            page_size: The most engines to return: 0 means 50, values above 1000 mean 1000.
            page_token: The ``next_page_token`` of the previous page.
            order_by: The sort order, for example ``"display_name, create_time desc"``.
                Default ``create_time desc``.
            filter: An AIP-160 filter, for example
                ``'state = STATE_RUNNING AND display_name = "demo*"'``.

        Returns:
            The page: ``dai_engines``, ``next_page_token`` and ``total_size``.

        Raises:
            CustomApiException: INVALID_ARGUMENT for a malformed filter or order.
        """
        response = self._connection.call(
            _SERVICE + "ListDAIEngines",
            {
                "parent": self._workspace(workspace_id),
                "pageSize": page_size,
                "pageToken": page_token,
                "orderBy": order_by,
                "filter": filter,
            },
        )
        page = dai_engines_page_from_api(response)
        for engine in page.dai_engines:
            self._bind(engine)
        return page

    def list_all_engines(
        self,
        workspace_id: str = "",
        order_by: str = "",
        filter: str = "",
        page_size: int = 0,
    ) -> list[DAIEngine]:
        """Lists every engine of a workspace that the caller can see, following all pages.

        Args:
            workspace_id: The workspace; the client's default when empty.
            order_by: The sort order; see :meth:`list_engines`.
            filter: An AIP-160 filter; see :meth:`list_engines`.
            page_size: How many engines to fetch per request: 0 means 50.

        Returns:
            All matching engines.
        """
        found: list[DAIEngine] = []
        token = ""
        while True:
            page = self.list_engines(workspace_id, page_size, token, order_by, filter)
            found.extend(page.dai_engines)
            token = page.next_page_token
            if not token:
                return found

    def set_default_workspace_id(self, default_workspace_id: str) -> None:
        """Sets the workspace of later calls that name none.

        Args:
            default_workspace_id: A workspace id (``"team-a"``) or name (``"workspaces/team-a"``).
        """
        self.default_workspace_id = default_workspace_id

    def generate_engine_id(self, display_name: str, workspace_id: str) -> str:
        """Returns an engine id derived from a display name that no engine of the workspace uses
        yet, as :meth:`create_engine` does when it is given none (see
        :mod:`ai_engine_manager.engine_id.generator`).

        Args:
            display_name: The display name, for example ``"Churn model"`` (``churn-model``).
            workspace_id: The workspace; the client's default when empty.

        Raises:
            ValueError: when the id and its suffixed variants are all taken.
        """
        parent = self._workspace(workspace_id)
        return generate_engine_id(display_name, "dai", lambda candidate: self._exists(parent, candidate))

    # The engine objects' actions call these.

    def _bind(self, engine: DAIEngine) -> DAIEngine:
        engine._client = self
        return engine

    def _get(self, name: str) -> DAIEngine:
        response = self._connection.call(_SERVICE + "GetDAIEngine", {"name": name})
        return self._bind(dai_engine_from_api(response.get("daiEngine") or {}))

    def _exists(self, parent: str, engine_id: str) -> bool:
        try:
            self._get(f"{parent}/daiEngines/{engine_id}")
        except CustomApiException as e:
            if e.code_name == "NOT_FOUND":
                return False
            raise
        return True

    def _action(self, method: str, name: str, fields: dict[str, Any]) -> DAIEngine:
        response = self._connection.call(_SERVICE + method, {"name": name, **fields})
        return dai_engine_from_api(response.get("daiEngine") or {})

    def _delete(self, name: str, allow_missing: bool, validate_only: bool) -> DAIEngine | None:
        response = self._connection.call(
            _SERVICE + "DeleteDAIEngine", {"name": name, "allowMissing": allow_missing, "validateOnly": validate_only}
        )
        engine = response.get("daiEngine")
        return dai_engine_from_api(engine) if engine else None

    def _update(self, engine: DAIEngine, update_mask: str | list[str], validate_only: bool, allow_missing: bool = False) -> DAIEngine:
        response = self._connection.call(
            _SERVICE + "UpdateDAIEngine",
            {
                "daiEngine": dai_engine_to_api(engine),
                "updateMask": _c.field_mask_to_api(update_mask),
                "allowMissing": allow_missing,
                "validateOnly": validate_only,
            },
        )
        return dai_engine_from_api(response.get("daiEngine") or {})

    def _download_logs(self, name: str) -> bytes:
        response = self._connection.call(_SERVICE + "DownloadDAIEngineLogs", {"name": name})
        return _c.bytes_from_api((response.get("logs") or {}).get("data"))

    def _first_assigned_profile(self) -> str:
        response = self._connection.call(
            "enginemanager.v1.DAIEngineProfileService.ListAssignedDAIEngineProfiles",
            {"parent": "workspaces/global", "pageSize": 1},
        )
        profiles = response.get("daiEngineProfiles") or []
        if not profiles:
            raise ValueError("no DAI engine profile in workspaces/global is assigned to you; pass profile=")
        return str(profiles[0].get("name", ""))
