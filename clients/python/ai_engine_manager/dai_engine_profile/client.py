"""The client for Driverless AI engine profiles: the limits, defaults and settings engines get.

Every signed-in user may read profiles; only administrators may create, change, copy or delete
them. Profiles usually live in ``workspaces/global``.

Example:
    >>> profiles = clients.dai_engine_profile_client
    >>> profile = profiles.create_dai_engine_profile(
    ...     parent="workspaces/global",
    ...     dai_engine_profile=DAIEngineProfile(
    ...         display_name="Large", enabled=True,
    ...         memory_bytes_constraint=ProfileConstraintNumeric(min="8Gi", default="32Gi", max="128Gi")),
    ...     dai_engine_profile_id="large",
    ... )
    >>> [p.name for p in profiles.list_all_assigned_dai_engine_profiles(parent="workspaces/global")]
    ['workspaces/global/daiEngineProfiles/default', 'workspaces/global/daiEngineProfiles/large']
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.dai_engine_profile.mapper import dai_engine_profile_from_api
from ai_engine_manager.dai_engine_profile.mapper import dai_engine_profile_to_api
from ai_engine_manager.dai_engine_profile.mapper import dai_engine_profiles_page_from_api
from ai_engine_manager.dai_engine_profile.page import DAIEngineProfilesPage
from ai_engine_manager.dai_engine_profile.profile import DAIEngineProfile
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["DAIEngineProfileClient"]


class DAIEngineProfileClient(ClientBase):
    """Manages DAI engine profiles: the limits, defaults and runtime settings that Driverless AI
    engines are created with. Every signed-in user may read profiles; only administrators may
    create, change, copy or delete them. Listing the profiles a user may use needs the
    `LIST_ASSIGNED` permission on the workspace.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_dai_engine_profile(
        self,
        parent: str,
        dai_engine_profile: DAIEngineProfile,
        dai_engine_profile_id: str,
    ) -> DAIEngineProfile:
        """Creates a DAI engine profile. Administrators only. Fails with ALREADY_EXISTS when
        the id is taken and with INVALID_ARGUMENT when a constraint's `default` lies outside
        its `[min, max]` or its `min` is above its `max`.

        Args:
            parent: The workspace to create the profile in, `workspaces/{workspace}`.
            dai_engine_profile: The profile to create.
            dai_engine_profile_id: The id of the new profile, the last segment of its
                name: 1-63 lowercase letters, digits and hyphens, starting with a letter and
                ending with a letter or digit.

        Returns:
            The created profile.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "daiEngineProfile": None if dai_engine_profile is None else dai_engine_profile_to_api(dai_engine_profile),
            "daiEngineProfileId": dai_engine_profile_id,
        })
        response = self._connection.call("enginemanager.v1.DAIEngineProfileService.CreateDAIEngineProfile", request)
        return dai_engine_profile_from_api(response.get("daiEngineProfile") or {})

    def get_dai_engine_profile(
        self,
        name: str,
    ) -> DAIEngineProfile:
        """Returns one DAI engine profile. Fails with NOT_FOUND when it does not exist.

        Args:
            name: The profile's name,
                `workspaces/{workspace}/daiEngineProfiles/{dai_engine_profile}`.

        Returns:
            The profile.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.DAIEngineProfileService.GetDAIEngineProfile", request)
        return dai_engine_profile_from_api(response.get("daiEngineProfile") or {})

    def list_dai_engine_profiles(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> DAIEngineProfilesPage:
        """Lists every DAI engine profile of a workspace, enabled or not. To get only the
        profiles the caller may use, call :meth:`list_assigned_dai_engine_profiles`. Only
        administrators list every profile: anyone else gets PERMISSION_DENIED, as from the
        real service.

        Args:
            parent: The workspace to list profiles of, `workspaces/{workspace}`.
            page_size: The most profiles to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent, filter and order.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `priority, display_name`. The fields are
                `name`, `display_name`, `priority`, `enabled`, `create_time` and
                `update_time`. Default `priority, name`: the lowest priority value first, as
                :meth:`list_assigned_dai_engine_profiles` orders.
            filter: An AIP-160 filter over `name`, `display_name`, `priority`,
                `enabled`, `create_time` and `update_time`, for example `enabled = true AND
                priority < 10`. A `*` at either end of a string value matches any
                characters.

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
        response = self._connection.call("enginemanager.v1.DAIEngineProfileService.ListDAIEngineProfiles", request)
        return dai_engine_profiles_page_from_api(response)

    def list_all_dai_engine_profiles(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[DAIEngineProfile]:
        """Returns every result of :meth:`list_dai_engine_profiles`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list profiles of, `workspaces/{workspace}`.
            page_size: The most profiles to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `priority, display_name`. The fields are
                `name`, `display_name`, `priority`, `enabled`, `create_time` and
                `update_time`. Default `priority, name`: the lowest priority value first, as
                `ListAssignedDAIEngineProfiles` orders.
            filter: An AIP-160 filter over `name`, `display_name`, `priority`,
                `enabled`, `create_time` and `update_time`, for example `enabled = true AND
                priority < 10`. A `*` at either end of a string value matches any
                characters.

        Returns:
            All the DAIEngineProfile objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[DAIEngineProfile] = []
        page_token = ""
        while True:
            page = self.list_dai_engine_profiles(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.dai_engine_profiles)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_dai_engine_profile(
        self,
        dai_engine_profile: DAIEngineProfile,
        update_mask: str | list[str] = "*",
    ) -> DAIEngineProfile:
        """Changes the fields of a DAI engine profile named in `update_mask`. Administrators
        only.

        Args:
            dai_engine_profile: The profile with its new values. Its `name` says which
                profile to update.
            update_mask: The fields to change, as exact snake_case paths, or `*` for
                every field that can change: `display_name`, `priority`, `enabled`,
                `assigned_oidc_roles_enabled`, `assigned_oidc_roles`, `max_running_engines`,
                `cpu_constraint`, `gpu_constraint`, `memory_bytes_constraint`,
                `storage_bytes_constraint`, `max_idle_duration_constraint`,
                `max_running_duration_constraint`, `max_non_interaction_duration`,
                `max_unused_duration`, `configuration_override`, `base_configuration`,
                `config_editability`, `yaml_pod_template_spec`, `yaml_gpu_tolerations`,
                `triton_enabled`, `gpu_resource_name`, `data_directory_storage_class`. Give
                the paths as a comma-separated string or a list; the default ``"*"`` changes
                every field that can change.

        Returns:
            The profile after the update.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "daiEngineProfile": None if dai_engine_profile is None else dai_engine_profile_to_api(dai_engine_profile),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.DAIEngineProfileService.UpdateDAIEngineProfile", request)
        return dai_engine_profile_from_api(response.get("daiEngineProfile") or {})

    def delete_dai_engine_profile(
        self,
        name: str,
    ) -> None:
        """Deletes a DAI engine profile. Administrators only. Engines that use it keep running.

        Args:
            name: The profile's name,
                `workspaces/{workspace}/daiEngineProfiles/{dai_engine_profile}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.DAIEngineProfileService.DeleteDAIEngineProfile", request)

    def copy_dai_engine_profile(
        self,
        name: str,
        parent: str,
        dai_engine_profile_id: str,
    ) -> DAIEngineProfile:
        """Creates a new DAI engine profile with every setting of an existing one, under a new
        id and possibly in another workspace. The copy gets fresh audit fields.
        Administrators only. Fails with ALREADY_EXISTS when the new id is taken.

        Args:
            name: The name of the profile to copy,
                `workspaces/{workspace}/daiEngineProfiles/{dai_engine_profile}`.
            parent: The workspace to create the copy in, `workspaces/{workspace}`. It
                may be the workspace of the source profile or another one.
            dai_engine_profile_id: The id of the copy, the last segment of its name:
                1-63 lowercase letters, digits and hyphens, starting with a letter and
                ending with a letter or digit.

        Returns:
            The new copy.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "parent": parent,
            "daiEngineProfileId": dai_engine_profile_id,
        })
        response = self._connection.call("enginemanager.v1.DAIEngineProfileService.CopyDAIEngineProfile", request)
        return dai_engine_profile_from_api(response.get("daiEngineProfile") or {})

    def list_assigned_dai_engine_profiles(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
    ) -> DAIEngineProfilesPage:
        """Lists the DAI engine profiles the caller may use to create engines: the enabled
        profiles that either do not verify roles or list one of the caller's
        identity-provider roles in `assigned_oidc_roles`. Ordered by `priority` (lowest
        value first), then by `name`. Needs the `LIST_ASSIGNED` permission on the workspace.

        Args:
            parent: The workspace to list profiles of, `workspaces/{workspace}`.
            page_size: The most profiles to return. 0 means 50; values above 1000 are
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
        response = self._connection.call("enginemanager.v1.DAIEngineProfileService.ListAssignedDAIEngineProfiles", request)
        return dai_engine_profiles_page_from_api(response)

    def list_all_assigned_dai_engine_profiles(
        self,
        parent: str,
        *,
        page_size: int = 0,
    ) -> list[DAIEngineProfile]:
        """Returns every result of :meth:`list_assigned_dai_engine_profiles`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list profiles of, `workspaces/{workspace}`.
            page_size: The most profiles to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.

        Returns:
            All the DAIEngineProfile objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[DAIEngineProfile] = []
        page_token = ""
        while True:
            page = self.list_assigned_dai_engine_profiles(parent, page_size=page_size, page_token=page_token)
            found.extend(page.dai_engine_profiles)
            page_token = page.next_page_token
            if not page_token:
                return found

    def delete_all_dai_engine_profiles(self, parent: str) -> None:
        """Deletes every DAIEngineProfile of a workspace, one by one, as listed by
        :meth:`list_all_dai_engine_profiles`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_dai_engine_profiles(parent):
            self.delete_dai_engine_profile(item.name)

    def apply_dai_engine_profile_configs(
        self,
        configs: Iterable[DAIEngineProfile | object],
        parent: str = "workspaces/global",
    ) -> list[DAIEngineProfile]:
        """Makes the DAIEngineProfile objects of a workspace exactly the given ones: deletes
        every one there (:meth:`delete_all_dai_engine_profiles`), then creates each
        configuration in order.

        Args:
            configs: What to create: DAIEngineProfile objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``dai_engine_profile_id`` and
                ``to_dai_engine_profile()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every DAIEngineProfile of the workspace afterwards, as
            :meth:`list_all_dai_engine_profiles` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "dai_engine_profile", DAIEngineProfile) for config in configs]
        self.delete_all_dai_engine_profiles(parent)
        for item, item_id in prepared:
            self.create_dai_engine_profile(parent, item, item_id)
        return self.list_all_dai_engine_profiles(parent)

    def get_first_dai_engine_profile(self, workspace: str) -> DAIEngineProfile | None:
        """The first DAIEngineProfile that :meth:`list_assigned_dai_engine_profiles` returns
        for a workspace, or ``None`` when there is none.

        Args:
            workspace: The workspace, `workspaces/{workspace}`.

        Returns:
            The first DAIEngineProfile of the first page, or ``None``.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        page = self.list_assigned_dai_engine_profiles(workspace)
        return page.dai_engine_profiles[0] if page.dai_engine_profiles else None
    # END GENERATED METHODS
