"""The client for the read-only list that mixes engines of every type.

Each :class:`~ai_engine_manager.engine.engine.Engine` is a summary; its ``name`` is the name of
the underlying Driverless AI, H2O or notebook engine, which that type's client manages.

Example:
    >>> page = clients.engine_client.list_engines(workspace_id="default")
    >>> [(e.type, e.name) for e in page.engines]
    [(<EngineType.TYPE_DRIVERLESS_AI: 'TYPE_DRIVERLESS_AI'>, 'workspaces/default/daiEngines/churn-model')]
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.engine.engine import Engine
from ai_engine_manager.engine.mapper import engines_page_from_api
from ai_engine_manager.engine.page import EnginesPage

__all__ = ["EngineClient"]

_LIST = "enginemanager.v1.EngineService.ListEngines"


class EngineClient(ClientBase):
    """Lists Driverless AI, H2O and notebook engines together."""

    def list_engines(
        self,
        workspace_id: str | None = None,
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter_expr: str = "",
    ) -> EnginesPage:
        """Lists one page of the engines of a workspace that the caller can see, of every type.

        Args:
            workspace_id: The workspace; the client's default when ``None``; ``"-"`` for all
                workspaces, which needs ``actions/enginemanager/engines/LIST_ALL``.
            page_size: The most engines to return: 0 means 50, values above 1000 mean 1000.
            page_token: The ``next_page_token`` of the previous page.
            order_by: The sort order, for example ``"version desc, create_time desc"``.
                Default ``create_time desc``.
            filter_expr: An AIP-160 filter, for example
                ``"deprecated_version = true AND state = STATE_RUNNING"``.

        Returns:
            The page: ``engines``, ``next_page_token`` and ``total_size``.

        Raises:
            CustomApiException: INVALID_ARGUMENT for a malformed filter or order,
                PERMISSION_DENIED for all workspaces without LIST_ALL.
        """
        response = self._connection.call(
            _LIST,
            {
                "parent": self._workspace(workspace_id),
                "pageSize": page_size,
                "pageToken": page_token,
                "orderBy": order_by,
                "filter": filter_expr,
            },
        )
        return engines_page_from_api(response)

    def list_all_engines(
        self,
        workspace_id: str | None = None,
        order_by: str = "",
        filter_expr: str = "",
        page_size: int = 0,
    ) -> list[Engine]:
        """Lists every engine of a workspace that the caller can see, following all pages.

        Args:
            workspace_id: The workspace; see :meth:`list_engines`.
            order_by: The sort order; see :meth:`list_engines`.
            filter_expr: An AIP-160 filter; see :meth:`list_engines`.
            page_size: How many engines to fetch per request: 0 means 50.

        Returns:
            All matching engines.
        """
        found: list[Engine] = []
        token = ""
        while True:
            page = self.list_engines(workspace_id, page_size, token, order_by, filter_expr)
            found.extend(page.engines)
            token = page.next_page_token
            if not token:
                return found

    def list_engines_all_workspaces(
        self,
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter_expr: str = "",
    ) -> EnginesPage:
        """Lists one page of the engines of every workspace. Needs
        ``actions/enginemanager/engines/LIST_ALL`` on the engine manager, which administrators
        have.

        Args:
            page_size: The most engines to return; see :meth:`list_engines`.
            page_token: The ``next_page_token`` of the previous page.
            order_by: The sort order; see :meth:`list_engines`.
            filter_expr: An AIP-160 filter; see :meth:`list_engines`.

        Returns:
            The page: ``engines``, ``next_page_token`` and ``total_size``.

        Raises:
            CustomApiException: PERMISSION_DENIED without LIST_ALL.
        """
        return self.list_engines("-", page_size, page_token, order_by, filter_expr)

    def list_all_engines_all_workspaces(self, order_by: str = "", filter_expr: str = "") -> list[Engine]:
        """Lists every engine of every workspace, following all pages. Needs
        ``actions/enginemanager/engines/LIST_ALL`` on the engine manager, which administrators
        have.

        Args:
            order_by: The sort order; see :meth:`list_engines`.
            filter_expr: An AIP-160 filter; see :meth:`list_engines`.

        Returns:
            All matching engines.

        Raises:
            CustomApiException: PERMISSION_DENIED without LIST_ALL.
        """
        return self.list_all_engines("-", order_by, filter_expr)
