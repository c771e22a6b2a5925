"""The client for ports of a sandbox engine: make a port reachable from outside, list, update and
close ports.

Example:
    >>> port = clients.port_client.create_port(parent=sandbox.name, port_id=8000, display_name="Preview")
    >>> port.internal_url
    'http://...'
"""

from __future__ import annotations

import time

from ai_engine_manager._client_base import ClientBase
from ai_engine_manager._wait import intervals
from ai_engine_manager.exception import CustomApiException, TimeoutException

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.port.mapper import port_from_api
from ai_engine_manager.port.mapper import port_to_api
from ai_engine_manager.port.mapper import ports_page_from_api
from ai_engine_manager.port.page import PortsPage
from ai_engine_manager.port.port import Port
# END GENERATED IMPORTS
from ai_engine_manager.port.state import PortState

__all__ = ["PortClient"]


class PortClient(ClientBase):
    """Makes ports of a sandbox engine reachable from outside. Every call is for the creator of the
    sandbox engine only; other callers are refused with PERMISSION_DENIED.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def get_port(
        self,
        name: str,
    ) -> Port:
        """Returns one port.

        Args:
            name: The port's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/ports/{port}`.

        Returns:
            The port.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.sandbox.v1.PortService.GetPort", request)
        return port_from_api(response.get("port") or {})

    def list_ports(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
    ) -> PortsPage:
        """Lists the ports of a sandbox engine.

        Args:
            parent: The sandbox engine to list ports of,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            page_size: The most ports to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent.

        Returns:
            One page of results.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "pageSize": page_size,
            "pageToken": page_token,
        })
        response = self._connection.call("enginemanager.sandbox.v1.PortService.ListPorts", request)
        return ports_page_from_api(response)

    def list_all_ports(
        self,
        parent: str,
        *,
        page_size: int = 0,
    ) -> list[Port]:
        """Returns every result of :meth:`list_ports`, following ``next_page_token`` from page
        to page.

        Args:
            parent: The sandbox engine to list ports of,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            page_size: The most ports to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.

        Returns:
            All the Port objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[Port] = []
        page_token = ""
        while True:
            page = self.list_ports(parent, page_size=page_size, page_token=page_token)
            found.extend(page.ports)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_port(
        self,
        port: Port,
        update_mask: str | list[str] = "*",
    ) -> Port:
        """Changes the fields of a port named in `update_mask`. Making a port public gives it a
        `public_url`; making it private again removes that URL.

        Args:
            port: The port with its new values. Its `name` says which port to update.
            update_mask: The fields to change, as exact snake_case paths, or `*` for
                every field that can change: `display_name`, `public`. Give the paths as a
                comma-separated string or a list; the default ``"*"`` changes every field
                that can change.

        Returns:
            The port after the update.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "port": None if port is None else port_to_api(port),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.sandbox.v1.PortService.UpdatePort", request)
        return port_from_api(response.get("port") or {})

    def delete_port(
        self,
        name: str,
    ) -> None:
        """Makes a port unreachable from outside again. Whatever listens on it inside the
        sandbox keeps running.

        Args:
            name: The port's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/ports/{port}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.sandbox.v1.PortService.DeletePort", request)
    # END GENERATED METHODS

    def create_port(
        self,
        parent: str,
        port: Port | None = None,
        port_id: int | str | None = None,
        *,
        display_name: str = "",
        public: bool = False,
    ) -> Port:
        """Makes a port of a sandbox engine reachable from outside. Nothing needs to listen on it
        yet.

        Args:
            parent: The sandbox engine, ``workspaces/{workspace}/sandboxEngines/{sandbox_engine}``.
            port: The port to create; ``display_name`` and ``public`` are ignored when given.
            port_id: The port number inside the sandbox, 1024-65535. Required (a keyword or the
                third argument, as in the official client: ``create_port(parent, port, "8000")``).
            display_name: A human-readable name, at most 63 characters.
            public: Whether anyone may reach the port through its ``public_url`` without a token.

        Returns:
            The port, with its ``internal_url``.

        Raises:
            CustomApiException: INVALID_ARGUMENT for a number outside 1024-65535, ALREADY_EXISTS
                when the port is already reachable.
        """
        if port_id is None:
            raise TypeError("create_port() needs port_id, the port number inside the sandbox")
        if port is None:
            port = Port(display_name=display_name, public=public)
        response = self._connection.call(
            "enginemanager.sandbox.v1.PortService.CreatePort",
            {"parent": parent, "port": port_to_api(port), "portId": str(port_id)},
        )
        return port_from_api(response.get("port") or {})

    def wait(self, name: str, timeout_seconds: float | None = None) -> Port | None:
        """Waits until a port is ``STATE_READY`` (a program in the sandbox accepts connections on
        it) or ``STATE_FAILED`` (its sandbox engine no longer runs).

        Args:
            name: The port's name, ``workspaces/{workspace}/sandboxEngines/{sandbox_engine}/ports/{port}``.
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.

        Returns:
            The port in ``STATE_READY`` or ``STATE_FAILED``, or ``None`` when it no longer exists.

        Raises:
            TimeoutException: when ``timeout_seconds`` pass first.
            CustomApiException: when the server rejects a call.
        """
        deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
        for pause in intervals(self.poll_interval_seconds):
            try:
                port = self.get_port(name=name)
            except CustomApiException as e:
                if e.code_name == "NOT_FOUND":
                    return None
                raise
            if port.state in (PortState.STATE_READY, PortState.STATE_FAILED):
                return port
            if deadline is not None and time.monotonic() + pause > deadline:
                raise TimeoutException(f"{name} is still {port.state.name} after {timeout_seconds} seconds")
            time.sleep(pause)
        raise AssertionError("unreachable")
