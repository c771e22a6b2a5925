"""The base of every client: the shared connection and the default workspace."""

from __future__ import annotations

import dataclasses

from ai_engine_manager._http import Connection


class ClientBase:
    """Holds what every client needs: the connection to the server and the default workspace."""

    def __init__(
        self,
        connection: Connection,
        default_workspace_id: str = "default",
        poll_interval_seconds: float | None = None,
    ) -> None:
        """Creates the client. :func:`~ai_engine_manager.login.login` creates them all at once.

        Args:
            connection: The connection to the server.
            default_workspace_id: The workspace of calls that name none.
            poll_interval_seconds: How often ``wait()`` asks the server for news; ``None`` starts
                at a fiftieth of a second and doubles up to five seconds.
        """
        self._connection = connection
        self.default_workspace_id = default_workspace_id
        self.poll_interval_seconds = poll_interval_seconds

    def _workspace(self, workspace_id: str | None) -> str:
        """``workspaces/<id>`` for a workspace id, a full workspace name, or the default."""
        workspace = workspace_id or self.default_workspace_id
        return workspace if workspace.startswith("workspaces/") else f"workspaces/{workspace}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self._connection.base_url!r})"


class BoundResource:
    """Mixin of the resource objects whose methods act through the client that returned them
    (engines and sandbox engines: ``engine.pause()``, ``engine.refresh()``)."""

    def _bound(self):  # type: ignore[no-untyped-def]
        """The client this object came from; objects built by hand have none."""
        client = getattr(self, "_client", None)
        if client is None:
            raise RuntimeError(f"this {type(self).__name__} is not bound to a client; get it through its client")
        return client

    def _assign(self, other: object | None) -> None:
        """Copies the fields of a fresh copy from the server into this object, keeping the client."""
        if other is None:
            return
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.init:
                setattr(self, f.name, getattr(other, f.name))
