"""The client for H2O engines: create, get and list them, and size them for a dataset.

The engines it returns carry their own actions
(:meth:`~ai_engine_manager.h2o_engine.h2o_engine.H2OEngine.wait`, ``terminate``, ``delete``,
``download_logs``, ``get_connection_config``).

Example:
    >>> h2o = clients.h2o_engine_client
    >>> size = h2o.calculate_h2o_engine_size_raw_dataset(
    ...     dataset_size_bytes="20Gi", memory_bytes_per_node_min="4Gi", node_count_min=1)
    >>> engine = h2o.create_engine(
    ...     engine_id="fraud-features", node_count=size.node_count, memory_bytes=size.memory_bytes)
    >>> engine.wait()
"""

from __future__ import annotations

from typing import Any

from ai_engine_manager import _codec as _c
from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.engine_id.generator import generate_engine_id
from ai_engine_manager.exception import CustomApiException
from ai_engine_manager.h2o_engine.h2o_engine import H2OEngine
from ai_engine_manager.h2o_engine.mapper import (
    h2o_engine_from_api,
    h2o_engine_size_from_api,
    h2o_engine_size_limits_to_api,
    h2o_engine_to_api,
    h2o_engines_page_from_api,
)
from ai_engine_manager.h2o_engine.page import H2OEnginesPage
from ai_engine_manager.h2o_engine.size import H2OEngineSize, H2OEngineSizeLimits

__all__ = ["H2OEngineClient", "DEFAULT_H2O_ENGINE_VERSION"]

_SERVICE = "enginemanager.v1.H2OEngineService."

DEFAULT_H2O_ENGINE_VERSION = "workspaces/global/h2oEngineVersions/latest"
"""The version a new engine runs when the caller names none: whatever ``latest`` points to."""


class H2OEngineClient(ClientBase):
    """Creates, reads and lists H2O engines, and recommends engine sizes for datasets.

    Methods take a ``workspace_id`` (``"default"``) or a full workspace name
    (``"workspaces/default"``); without one they use the client's default workspace.
    """

    def create_engine(
        self,
        engine_id: str | None = None,
        node_count: int | None = None,
        cpu: int | None = None,
        gpu: int | None = None,
        memory_bytes: str | int | None = None,
        max_idle_duration: str | int | None = None,
        max_running_duration: str | int | None = None,
        workspace_id: str = "",
        display_name: str = "",
        annotations: dict[str, str] | None = None,
        validate_only: bool = False,
        profile: str = "",
        h2o_engine_version: str = "",
    ) -> H2OEngine:
        """Creates an H2O engine and starts it. The engine is returned at once, starting; call
        :meth:`~ai_engine_manager.h2o_engine.h2o_engine.H2OEngine.wait` to wait until it runs.

        Settings left unset take the profile's defaults.

        Args:
            engine_id: The engine's id; generated from ``display_name`` when ``None``.
            node_count: The number of nodes.
            cpu: CPU cores of each node.
            gpu: GPUs of each node.
            memory_bytes: Memory of each node, a quantity such as ``"16Gi"``.
            max_idle_duration: How long the engine may stay idle before it is terminated.
            max_running_duration: How long the engine may run before it is terminated.
            workspace_id: The workspace; the client's default when empty.
            display_name: A human-readable name, at most 63 characters.
            annotations: Free-form labels.
            validate_only: Only check the request; nothing is created.
            profile: The profile,
                ``workspaces/{workspace}/h2oEngineProfiles/{h2o_engine_profile}``. When empty,
                the first profile in ``workspaces/global`` assigned to the caller.
            h2o_engine_version: The H2O version,
                ``workspaces/{workspace}/h2oEngineVersions/{h2o_engine_version}``; an alias is
                accepted. When empty, :data:`DEFAULT_H2O_ENGINE_VERSION`. It cannot change later.

        Returns:
            The new engine.

        Raises:
            CustomApiException: ALREADY_EXISTS when the id is taken, INVALID_ARGUMENT when a
                value is outside the profile's constraints.
            ValueError: when no id could be generated, no profile is assigned to the caller, or
                a size or duration is malformed.
        """
        parent = self._workspace(workspace_id)
        if not profile:
            profile = self._first_assigned_profile()
        engine = H2OEngine(
            profile=profile,
            h2o_engine_version=h2o_engine_version or DEFAULT_H2O_ENGINE_VERSION,
            node_count=node_count,
            cpu=cpu,
            gpu=gpu,
            memory_bytes=memory_bytes,  # type: ignore[arg-type]
            max_idle_duration=max_idle_duration,  # type: ignore[arg-type]
            max_running_duration=max_running_duration,  # type: ignore[arg-type]
            display_name=display_name,
            annotations=dict(annotations or {}),
        )
        if engine_id is None:
            engine_id = generate_engine_id(display_name, "h2o", lambda candidate: self._exists(parent, candidate))
        response = self._connection.call(
            _SERVICE + "CreateH2OEngine",
            {"parent": parent, "h2oEngine": h2o_engine_to_api(engine), "h2oEngineId": engine_id, "validateOnly": validate_only},
        )
        return self._bind(h2o_engine_from_api(response.get("h2oEngine") or {}))

    def get_engine(self, engine_id: str, workspace_id: str = "") -> H2OEngine:
        """Returns one engine.

        Args:
            engine_id: The engine's id, or its full name
                ``workspaces/{workspace}/h2oEngines/{h2o_engine}``.
            workspace_id: The workspace; the client's default when ``None``.

        Raises:
            CustomApiException: NOT_FOUND when there is no such engine.
        """
        name = engine_id if "/" in engine_id else f"{self._workspace(workspace_id)}/h2oEngines/{engine_id}"
        return self._get(name)

    def list_engines(
        self,
        workspace_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter: str = "",
    ) -> H2OEnginesPage:
        """Lists one page of the engines of a workspace that the caller can see.

        Args:
            workspace_id: The workspace; the client's default when ``None``.
            page_size: The most engines to return: 0 means 50, values above 1000 mean 1000.
            page_token: The ``next_page_token`` of the previous page.
            order_by: The sort order, for example ``"node_count desc"``. Default
                ``create_time desc``.
            filter: An AIP-160 filter, for example ``"node_count >= 2"``.

        Returns:
            The page: ``h2o_engines``, ``next_page_token`` and ``total_size``.

        Raises:
            CustomApiException: INVALID_ARGUMENT for a malformed filter or order.
        """
        response = self._connection.call(
            _SERVICE + "ListH2OEngines",
            {
                "parent": self._workspace(workspace_id),
                "pageSize": page_size,
                "pageToken": page_token,
                "orderBy": order_by,
                "filter": filter,
            },
        )
        page = h2o_engines_page_from_api(response)
        for engine in page.h2o_engines:
            self._bind(engine)
        return page

    def list_all_engines(
        self,
        workspace_id: str = "",
        order_by: str = "",
        filter: str = "",
        page_size: int = 0,
    ) -> list[H2OEngine]:
        """Lists every engine of a workspace that the caller can see, following all pages.

        Args:
            workspace_id: The workspace; the client's default when ``None``.
            order_by: The sort order; see :meth:`list_engines`.
            filter: An AIP-160 filter; see :meth:`list_engines`.
            page_size: How many engines to fetch per request: 0 means 50.

        Returns:
            All matching engines.
        """
        found: list[H2OEngine] = []
        token = ""
        while True:
            page = self.list_engines(workspace_id, page_size, token, order_by, filter)
            found.extend(page.h2o_engines)
            token = page.next_page_token
            if not token:
                return found

    def calculate_h2o_engine_size_raw_dataset(
        self,
        dataset_size_bytes: str | int,
        limits: H2OEngineSizeLimits | None = None,
        *,
        memory_bytes_per_node_min: str | int | None = None,
        memory_bytes_per_node_max: str | int | None = None,
        node_count_min: int | None = None,
        node_count_max: int | None = None,
    ) -> H2OEngineSize:
        """Recommends an H2O engine size for a raw (uncompressed) dataset, which needs about five
        times its size in memory.

        Give the limits either one by one or as ``limits``.

        Args:
            dataset_size_bytes: The dataset's size, a quantity such as ``"20Gi"``.
            limits: All limits at once, as the official client takes them; or give them one by
                one with the keyword arguments below.
            memory_bytes_per_node_min: The least memory a node may have, as a quantity.
            memory_bytes_per_node_max: The most memory a node may have; unlimited when ``None``.
            node_count_min: The least number of nodes.
            node_count_max: The most nodes; unlimited when ``None``.

        Returns:
            The recommended ``node_count`` and per-node ``memory_bytes`` (a quantity).

        Raises:
            CustomApiException: INVALID_ARGUMENT for a non-positive size or inconsistent limits.
        """
        response = self._connection.call(
            _SERVICE + "CalculateH2OEngineSizeRawDataset",
            {
                "datasetSizeBytes": _c.quantity_to_api(dataset_size_bytes),
                "limits": self._limits(limits, memory_bytes_per_node_min, memory_bytes_per_node_max, node_count_min, node_count_max),
            },
        )
        return h2o_engine_size_from_api(response.get("h2oEngineSize") or {})

    def calculate_h2o_engine_size_compressed_dataset(
        self,
        rows_count: int,
        columns_count: int,
        limits: H2OEngineSizeLimits | None = None,
        *,
        memory_bytes_per_node_min: str | int | None = None,
        memory_bytes_per_node_max: str | int | None = None,
        node_count_min: int | None = None,
        node_count_max: int | None = None,
    ) -> H2OEngineSize:
        """Recommends an H2O engine size for a compressed dataset of the given shape, which needs
        about rows times columns times 32 bytes of memory.

        Give the limits either one by one or as ``limits``.

        Args:
            rows_count: The number of rows.
            columns_count: The number of columns.
            limits: All limits at once, as the official client takes them; or give them one by
                one with the keyword arguments below.
            memory_bytes_per_node_min: The least memory a node may have, as a quantity.
            memory_bytes_per_node_max: The most memory a node may have; unlimited when ``None``.
            node_count_min: The least number of nodes.
            node_count_max: The most nodes; unlimited when ``None``.

        Returns:
            The recommended ``node_count`` and per-node ``memory_bytes`` (a quantity).

        Raises:
            CustomApiException: INVALID_ARGUMENT for non-positive counts or inconsistent limits.
        """
        response = self._connection.call(
            _SERVICE + "CalculateH2OEngineSizeCompressedDataset",
            {
                "rowsCount": str(rows_count),
                "columnsCount": str(columns_count),
                "limits": self._limits(limits, memory_bytes_per_node_min, memory_bytes_per_node_max, node_count_min, node_count_max),
            },
        )
        return h2o_engine_size_from_api(response.get("h2oEngineSize") or {})

    @staticmethod
    def _limits(
        limits: H2OEngineSizeLimits | None,
        memory_min: str | int | None,
        memory_max: str | int | None,
        nodes_min: int | None,
        nodes_max: int | None,
    ) -> dict[str, Any]:
        if limits is None:
            limits = H2OEngineSizeLimits(
                memory_bytes_per_node_min=memory_min,  # type: ignore[arg-type]
                memory_bytes_per_node_max=memory_max,  # type: ignore[arg-type]
                node_count_min=nodes_min or 0,
                node_count_max=nodes_max,
            )
        return h2o_engine_size_limits_to_api(limits)

    def generate_engine_id(self, display_name: str, workspace_id: str) -> str:
        """Returns an engine id derived from a display name that no H2O engine of the workspace
        uses yet, as :meth:`create_engine` does when it is given none (see
        :mod:`ai_engine_manager.engine_id.generator`).

        Args:
            display_name: The display name, for example ``"Churn model"`` (``churn-model``).
            workspace_id: The workspace; the client's default when empty.

        Raises:
            ValueError: when the id and its suffixed variants are all taken.
        """
        parent = self._workspace(workspace_id)
        return generate_engine_id(display_name, "h2o", lambda candidate: self._exists(parent, candidate))

    # The engine objects' actions call these.

    def _bind(self, engine: H2OEngine) -> H2OEngine:
        engine._client = self
        return engine

    def _get(self, name: str) -> H2OEngine:
        response = self._connection.call(_SERVICE + "GetH2OEngine", {"name": name})
        return self._bind(h2o_engine_from_api(response.get("h2oEngine") or {}))

    def _exists(self, parent: str, engine_id: str) -> bool:
        try:
            self._get(f"{parent}/h2oEngines/{engine_id}")
        except CustomApiException as e:
            if e.code_name == "NOT_FOUND":
                return False
            raise
        return True

    def _action(self, method: str, name: str, fields: dict[str, Any]) -> H2OEngine:
        response = self._connection.call(_SERVICE + method, {"name": name, **fields})
        return h2o_engine_from_api(response.get("h2oEngine") or {})

    def _delete(self, name: str, allow_missing: bool, validate_only: bool) -> H2OEngine | None:
        response = self._connection.call(
            _SERVICE + "DeleteH2OEngine", {"name": name, "allowMissing": allow_missing, "validateOnly": validate_only}
        )
        engine = response.get("h2oEngine")
        return h2o_engine_from_api(engine) if engine else None

    def _download_logs(self, name: str) -> bytes:
        response = self._connection.call(_SERVICE + "DownloadH2OEngineLogs", {"name": name})
        return _c.bytes_from_api((response.get("logs") or {}).get("data"))

    def _first_assigned_profile(self) -> str:
        response = self._connection.call(
            "enginemanager.v1.H2OEngineProfileService.ListAssignedH2OEngineProfiles",
            {"parent": "workspaces/global", "pageSize": 1},
        )
        profiles = response.get("h2oEngineProfiles") or []
        if not profiles:
            raise ValueError("no H2O engine profile in workspaces/global is assigned to you; pass profile=")
        return str(profiles[0].get("name", ""))
