"""The client for Driverless AI versions: the releases engines can run, and their aliases.

Example:
    >>> versions = clients.dai_engine_version_client
    >>> versions.get_dai_engine_version(name="workspaces/global/daiEngineVersions/latest").name
    'workspaces/global/daiEngineVersions/1.11.0'
    >>> versions.assign_dai_engine_version_aliases(
    ...     name="workspaces/global/daiEngineVersions/1.11.0", aliases=["latest", "stable"])
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.dai_engine_version.mapper import dai_engine_version_from_api
from ai_engine_manager.dai_engine_version.mapper import dai_engine_version_to_api
from ai_engine_manager.dai_engine_version.mapper import dai_engine_versions_page_from_api
from ai_engine_manager.dai_engine_version.page import DAIEngineVersionsPage
from ai_engine_manager.dai_engine_version.version import DAIEngineVersion
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["DAIEngineVersionClient"]


class DAIEngineVersionClient(ClientBase):
    """Manages the Driverless AI versions that engines can run. Every signed-in user may read
    versions; only administrators may create, change or delete them or assign their aliases.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_dai_engine_version(
        self,
        parent: str,
        dai_engine_version: DAIEngineVersion,
        dai_engine_version_id: str,
    ) -> DAIEngineVersion:
        """Creates a Driverless AI version. Fails with ALREADY_EXISTS when the id is taken and
        with INVALID_ARGUMENT when the id is not a valid version.

        Args:
            parent: The workspace to create the version in, `workspaces/{workspace}`.
            dai_engine_version: The version to create.
            dai_engine_version_id: The id of the new version, the last segment of its
                name: one or more dot-separated numbers and an optional pre-release, at most
                63 characters, for example `1`, `1.10`, `1.10.3-alpha` or `1.10.3.1`.

        Returns:
            The created version.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "daiEngineVersion": None if dai_engine_version is None else dai_engine_version_to_api(dai_engine_version),
            "daiEngineVersionId": dai_engine_version_id,
        })
        response = self._connection.call("enginemanager.v1.DAIEngineVersionService.CreateDAIEngineVersion", request)
        return dai_engine_version_from_api(response.get("daiEngineVersion") or {})

    def get_dai_engine_version(
        self,
        name: str,
    ) -> DAIEngineVersion:
        """Returns one Driverless AI version. The name may use an alias in place of the version
        id.

        Args:
            name: The version's name,
                `workspaces/{workspace}/daiEngineVersions/{dai_engine_version}`. An alias
                may stand in for the version id, for example
                `workspaces/global/daiEngineVersions/latest`.

        Returns:
            The version.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.DAIEngineVersionService.GetDAIEngineVersion", request)
        return dai_engine_version_from_api(response.get("daiEngineVersion") or {})

    def list_dai_engine_versions(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> DAIEngineVersionsPage:
        """Lists the Driverless AI versions of a workspace.

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
        response = self._connection.call("enginemanager.v1.DAIEngineVersionService.ListDAIEngineVersions", request)
        return dai_engine_versions_page_from_api(response)

    def list_all_dai_engine_versions(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[DAIEngineVersion]:
        """Returns every result of :meth:`list_dai_engine_versions`, following
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
            All the DAIEngineVersion objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[DAIEngineVersion] = []
        page_token = ""
        while True:
            page = self.list_dai_engine_versions(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.dai_engine_versions)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_dai_engine_version(
        self,
        dai_engine_version: DAIEngineVersion,
        update_mask: str | list[str] = "*",
    ) -> DAIEngineVersion:
        """Changes the fields of a Driverless AI version named in `update_mask`. Engines that
        already run the version are not changed.

        Args:
            dai_engine_version: The version with its new values. Its `name` says which
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
            "daiEngineVersion": None if dai_engine_version is None else dai_engine_version_to_api(dai_engine_version),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.DAIEngineVersionService.UpdateDAIEngineVersion", request)
        return dai_engine_version_from_api(response.get("daiEngineVersion") or {})

    def delete_dai_engine_version(
        self,
        name: str,
    ) -> None:
        """Deletes a Driverless AI version and its aliases. Engines that run it keep running.

        Args:
            name: The version's name,
                `workspaces/{workspace}/daiEngineVersions/{dai_engine_version}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.DAIEngineVersionService.DeleteDAIEngineVersion", request)

    def assign_dai_engine_version_aliases(
        self,
        name: str,
        aliases: list[str] | None = None,
    ) -> list[DAIEngineVersion]:
        """Replaces the aliases of a Driverless AI version. An alias that another version of
        the same workspace holds is moved to this one. Returns every version of the
        workspace, newest version first, so callers see which versions lost an alias.

        Args:
            name: The version's name,
                `workspaces/{workspace}/daiEngineVersions/{dai_engine_version}`.
            aliases: The version's new aliases, replacing all it had; an empty list
                removes them all. Each alias is 1-63 lowercase letters, digits and hyphens,
                starting with a letter and ending with a letter or digit, for example
                `latest`. An alias that another version of the same workspace holds is
                removed from that version.

        Returns:
            Every Driverless AI version of the workspace after the change, including
            those that lost an alias.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "aliases": None if aliases is None else list(aliases),
        })
        response = self._connection.call("enginemanager.v1.DAIEngineVersionService.AssignDAIEngineVersionAliases", request)
        return [dai_engine_version_from_api(item) for item in response.get("daiEngineVersions") or []]

    def delete_all_dai_engine_versions(self, parent: str) -> None:
        """Deletes every DAIEngineVersion of a workspace, one by one, as listed by
        :meth:`list_all_dai_engine_versions`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_dai_engine_versions(parent):
            self.delete_dai_engine_version(item.name)

    def apply_dai_engine_version_configs(
        self,
        configs: Iterable[DAIEngineVersion | object],
        parent: str = "workspaces/global",
    ) -> list[DAIEngineVersion]:
        """Makes the DAIEngineVersion objects of a workspace exactly the given ones: deletes
        every one there (:meth:`delete_all_dai_engine_versions`), then creates each
        configuration in order.

        Args:
            configs: What to create: DAIEngineVersion objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``dai_engine_version_id`` and
                ``to_dai_engine_version()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every DAIEngineVersion of the workspace afterwards, as
            :meth:`list_all_dai_engine_versions` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "dai_engine_version", DAIEngineVersion) for config in configs]
        self.delete_all_dai_engine_versions(parent)
        for item, item_id in prepared:
            self.create_dai_engine_version(parent, item, item_id)
        return self.list_all_dai_engine_versions(parent)

    def get_first_dai_engine_version(self, workspace: str) -> DAIEngineVersion | None:
        """The first DAIEngineVersion that :meth:`list_dai_engine_versions` returns for a
        workspace, or ``None`` when there is none.

        Args:
            workspace: The workspace, `workspaces/{workspace}`.

        Returns:
            The first DAIEngineVersion of the first page, or ``None``.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        page = self.list_dai_engine_versions(workspace)
        return page.dai_engine_versions[0] if page.dai_engine_versions else None
    # END GENERATED METHODS
