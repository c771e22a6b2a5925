"""The client for H2O versions: the releases H2O engines can run, and their aliases.

Example:
    >>> clients.h2o_engine_version_client.list_all_h2o_engine_versions(parent="workspaces/global")[0].aliases
    ['latest']
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.h2o_engine_version.mapper import h2o_engine_version_from_api
from ai_engine_manager.h2o_engine_version.mapper import h2o_engine_version_to_api
from ai_engine_manager.h2o_engine_version.mapper import h2o_engine_versions_page_from_api
from ai_engine_manager.h2o_engine_version.page import H2OEngineVersionsPage
from ai_engine_manager.h2o_engine_version.version import H2OEngineVersion
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["H2OEngineVersionClient"]


class H2OEngineVersionClient(ClientBase):
    """Manages the H2O versions that engines can run. Every signed-in user may read versions; only
    administrators may create, change or delete them or assign their aliases.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_h2o_engine_version(
        self,
        parent: str,
        h2o_engine_version: H2OEngineVersion,
        h2o_engine_version_id: str,
    ) -> H2OEngineVersion:
        """Creates an H2O version. Fails with ALREADY_EXISTS when the id is taken and with
        INVALID_ARGUMENT when the id is not a valid version.

        Args:
            parent: The workspace to create the version in, `workspaces/{workspace}`.
            h2o_engine_version: The version to create.
            h2o_engine_version_id: The id of the new version, the last segment of its
                name: one or more dot-separated numbers and an optional pre-release, at most
                63 characters, for example `3`, `3.46`, `3.46.0-beta` or `3.46.0.1`.

        Returns:
            The created version.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "h2oEngineVersion": None if h2o_engine_version is None else h2o_engine_version_to_api(h2o_engine_version),
            "h2oEngineVersionId": h2o_engine_version_id,
        })
        response = self._connection.call("enginemanager.v1.H2OEngineVersionService.CreateH2OEngineVersion", request)
        return h2o_engine_version_from_api(response.get("h2oEngineVersion") or {})

    def get_h2o_engine_version(
        self,
        name: str,
    ) -> H2OEngineVersion:
        """Returns one H2O version. The name may use an alias in place of the version id.

        Args:
            name: The version's name,
                `workspaces/{workspace}/h2oEngineVersions/{h2o_engine_version}`. An alias
                may stand in for the version id, for example
                `workspaces/global/h2oEngineVersions/latest`.

        Returns:
            The version.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.H2OEngineVersionService.GetH2OEngineVersion", request)
        return h2o_engine_version_from_api(response.get("h2oEngineVersion") or {})

    def list_h2o_engine_versions(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> H2OEngineVersionsPage:
        """Lists the H2O versions of a workspace.

        Args:
            parent: The workspace to list versions of, `workspaces/{workspace}`.
            page_size: The most versions to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent, filter and order.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `deprecated, create_time desc`. Fields:
                `name`, `deprecated`, `image`, `create_time`, `update_time`, and `version`,
                the version number (`1.11.10` after `1.11.4.1`; a pre-release such as
                `1.11.4-rc` before its release), for sorting only. Default `version desc`:
                the newest version first.
            filter: An AIP-160 filter over `name`, `deprecated`, `image`, `create_time`
                and `update_time`, for example `deprecated = false AND image =
                "ghcr.io/acme/*"`.

        Returns:
            One page of results.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "pageSize": page_size,
            "pageToken": page_token,
            "orderBy": order_by,
            "filter": filter,
        })
        response = self._connection.call("enginemanager.v1.H2OEngineVersionService.ListH2OEngineVersions", request)
        return h2o_engine_versions_page_from_api(response)

    def list_all_h2o_engine_versions(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[H2OEngineVersion]:
        """Returns every result of :meth:`list_h2o_engine_versions`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list versions of, `workspaces/{workspace}`.
            page_size: The most versions to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `deprecated, create_time desc`. Fields:
                `name`, `deprecated`, `image`, `create_time`, `update_time`, and `version`,
                the version number (`1.11.10` after `1.11.4.1`; a pre-release such as
                `1.11.4-rc` before its release), for sorting only. Default `version desc`:
                the newest version first.
            filter: An AIP-160 filter over `name`, `deprecated`, `image`, `create_time`
                and `update_time`, for example `deprecated = false AND image =
                "ghcr.io/acme/*"`.

        Returns:
            All the H2OEngineVersion objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[H2OEngineVersion] = []
        page_token = ""
        while True:
            page = self.list_h2o_engine_versions(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.h2o_engine_versions)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_h2o_engine_version(
        self,
        h2o_engine_version: H2OEngineVersion,
        update_mask: str | list[str] = "*",
    ) -> H2OEngineVersion:
        """Changes the fields of an H2O version named in `update_mask`. Engines that already
        run the version are not changed.

        Args:
            h2o_engine_version: The version with its new values. Its `name` says which
                version to update.
            update_mask: The fields to change, as exact snake_case paths, or `*` for
                every field that can change: `deprecated`, `image`, `image_pull_policy`,
                `image_pull_secrets`. Give the paths as a comma-separated string or a list;
                the default ``"*"`` changes every field that can change.

        Returns:
            The version after the update.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "h2oEngineVersion": None if h2o_engine_version is None else h2o_engine_version_to_api(h2o_engine_version),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.H2OEngineVersionService.UpdateH2OEngineVersion", request)
        return h2o_engine_version_from_api(response.get("h2oEngineVersion") or {})

    def delete_h2o_engine_version(
        self,
        name: str,
    ) -> None:
        """Deletes an H2O version and its aliases. Engines that run it keep running.

        Args:
            name: The version's name,
                `workspaces/{workspace}/h2oEngineVersions/{h2o_engine_version}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.H2OEngineVersionService.DeleteH2OEngineVersion", request)

    def assign_h2o_engine_version_aliases(
        self,
        name: str,
        aliases: list[str] | None = None,
    ) -> list[H2OEngineVersion]:
        """Replaces the aliases of an H2O version. An alias that another version of the same
        workspace holds is moved to this one. Returns every version of the workspace, newest
        version first, so callers see which versions lost an alias.

        Args:
            name: The version's name,
                `workspaces/{workspace}/h2oEngineVersions/{h2o_engine_version}`.
            aliases: The version's new aliases, replacing all it had; an empty list
                removes them all. Each alias is 1-63 lowercase letters, digits and hyphens,
                starting with a letter and ending with a letter or digit, for example
                `latest`. An alias that another version of the same workspace holds is
                removed from that version.

        Returns:
            Every H2O version of the workspace after the change, including those that
            lost an alias.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "aliases": None if aliases is None else list(aliases),
        })
        response = self._connection.call("enginemanager.v1.H2OEngineVersionService.AssignH2OEngineVersionAliases", request)
        return [h2o_engine_version_from_api(item) for item in response.get("h2oEngineVersions") or []]

    def delete_all_h2o_engine_versions(self, parent: str) -> None:
        """Deletes every H2OEngineVersion of a workspace, one by one, as listed by
        :meth:`list_all_h2o_engine_versions`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_h2o_engine_versions(parent):
            self.delete_h2o_engine_version(item.name)

    def apply_h2o_engine_version_configs(
        self,
        configs: Iterable[H2OEngineVersion | object],
        parent: str = "workspaces/global",
    ) -> list[H2OEngineVersion]:
        """Makes the H2OEngineVersion objects of a workspace exactly the given ones: deletes
        every one there (:meth:`delete_all_h2o_engine_versions`), then creates each
        configuration in order.

        Args:
            configs: What to create: H2OEngineVersion objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``h2o_engine_version_id`` and
                ``to_h2o_engine_version()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every H2OEngineVersion of the workspace afterwards, as
            :meth:`list_all_h2o_engine_versions` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "h2o_engine_version", H2OEngineVersion) for config in configs]
        self.delete_all_h2o_engine_versions(parent)
        for item, item_id in prepared:
            self.create_h2o_engine_version(parent, item, item_id)
        return self.list_all_h2o_engine_versions(parent)

    def get_first_h2o_engine_version(self, workspace: str) -> H2OEngineVersion | None:
        """The first H2OEngineVersion that :meth:`list_h2o_engine_versions` returns for a
        workspace, or ``None`` when there is none.

        Args:
            workspace: The workspace, `workspaces/{workspace}`.

        Returns:
            The first H2OEngineVersion of the first page, or ``None``.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        page = self.list_h2o_engine_versions(workspace)
        return page.h2o_engine_versions[0] if page.h2o_engine_versions else None
    # END GENERATED METHODS
