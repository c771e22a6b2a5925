"""The client for notebook engine profiles: the limits, defaults and settings notebook engines get.

Every signed-in user may read profiles; only administrators may create, change, copy or delete
them.

Example:
    >>> clients.notebook_engine_profile_client.get_notebook_engine_profile(
    ...     name="workspaces/global/notebookEngineProfiles/default").git_ref
    'HEAD'
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.notebook_engine_profile.mapper import notebook_engine_profile_from_api
from ai_engine_manager.notebook_engine_profile.mapper import notebook_engine_profile_to_api
from ai_engine_manager.notebook_engine_profile.mapper import notebook_engine_profiles_page_from_api
from ai_engine_manager.notebook_engine_profile.page import NotebookEngineProfilesPage
from ai_engine_manager.notebook_engine_profile.profile import NotebookEngineProfile
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["NotebookEngineProfileClient"]


class NotebookEngineProfileClient(ClientBase):
    """Manages notebook engine profiles: the limits, defaults and runtime settings that notebook
    engines are created with. Every signed-in user may read profiles; only administrators may
    create, change, copy or delete them. Listing the profiles a user may use needs the
    `LIST_ASSIGNED` permission on the workspace.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_notebook_engine_profile(
        self,
        parent: str,
        notebook_engine_profile: NotebookEngineProfile,
        notebook_engine_profile_id: str,
    ) -> NotebookEngineProfile:
        """Creates a notebook engine profile. Administrators only. Fails with ALREADY_EXISTS
        when the id is taken and with INVALID_ARGUMENT when a constraint's `default` lies
        outside its `[min, max]` or its `min` is above its `max`.

        Args:
            parent: The workspace to create the profile in, `workspaces/{workspace}`.
            notebook_engine_profile: The profile to create.
            notebook_engine_profile_id: The id of the new profile, the last segment of
                its name: 1-63 lowercase letters, digits and hyphens, starting with a letter
                and ending with a letter or digit.

        Returns:
            The created profile.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "notebookEngineProfile": None if notebook_engine_profile is None else notebook_engine_profile_to_api(notebook_engine_profile),
            "notebookEngineProfileId": notebook_engine_profile_id,
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineProfileService.CreateNotebookEngineProfile", request)
        return notebook_engine_profile_from_api(response.get("notebookEngineProfile") or {})

    def get_notebook_engine_profile(
        self,
        name: str,
    ) -> NotebookEngineProfile:
        """Returns one notebook engine profile. Fails with NOT_FOUND when it does not exist.

        Args:
            name: The profile's name,
                `workspaces/{workspace}/notebookEngineProfiles/{notebook_engine_profile}`.

        Returns:
            The profile.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineProfileService.GetNotebookEngineProfile", request)
        return notebook_engine_profile_from_api(response.get("notebookEngineProfile") or {})

    def list_notebook_engine_profiles(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> NotebookEngineProfilesPage:
        """Lists every notebook engine profile of a workspace, enabled or not. To get only the
        profiles the caller may use, call :meth:`list_assigned_notebook_engine_profiles`.
        Only administrators list every profile: anyone else gets PERMISSION_DENIED, as from
        the real service.

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
                :meth:`list_assigned_notebook_engine_profiles` orders.
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
        response = self._connection.call("enginemanager.v1.NotebookEngineProfileService.ListNotebookEngineProfiles", request)
        return notebook_engine_profiles_page_from_api(response)

    def list_all_notebook_engine_profiles(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[NotebookEngineProfile]:
        """Returns every result of :meth:`list_notebook_engine_profiles`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list profiles of, `workspaces/{workspace}`.
            page_size: The most profiles to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `priority, display_name`. The fields are
                `name`, `display_name`, `priority`, `enabled`, `create_time` and
                `update_time`. Default `priority, name`: the lowest priority value first, as
                `ListAssignedNotebookEngineProfiles` orders.
            filter: An AIP-160 filter over `name`, `display_name`, `priority`,
                `enabled`, `create_time` and `update_time`, for example `enabled = true AND
                priority < 10`. A `*` at either end of a string value matches any
                characters.

        Returns:
            All the NotebookEngineProfile objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[NotebookEngineProfile] = []
        page_token = ""
        while True:
            page = self.list_notebook_engine_profiles(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.notebook_engine_profiles)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_notebook_engine_profile(
        self,
        notebook_engine_profile: NotebookEngineProfile,
        update_mask: str | list[str] = "*",
    ) -> NotebookEngineProfile:
        """Changes the fields of a notebook engine profile named in `update_mask`.
        Administrators only.

        Args:
            notebook_engine_profile: The profile with its new values. Its `name` says
                which profile to update.
            update_mask: The fields to change, as exact snake_case paths, or `*` for
                every field that can change: `display_name`, `priority`, `enabled`,
                `assigned_oidc_roles_enabled`, `assigned_oidc_roles`, `max_running_engines`,
                `cpu_constraint`, `gpu_constraint`, `memory_bytes_constraint`,
                `storage_bytes_constraint`, `max_idle_duration_constraint`,
                `max_running_duration_constraint`, `yaml_pod_template_spec`,
                `yaml_gpu_tolerations`, `storage_class_name`, `gpu_resource_name`. Give the
                paths as a comma-separated string or a list; the default ``"*"`` changes
                every field that can change.

        Returns:
            The profile after the update.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "notebookEngineProfile": None if notebook_engine_profile is None else notebook_engine_profile_to_api(notebook_engine_profile),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineProfileService.UpdateNotebookEngineProfile", request)
        return notebook_engine_profile_from_api(response.get("notebookEngineProfile") or {})

    def delete_notebook_engine_profile(
        self,
        name: str,
    ) -> None:
        """Deletes a notebook engine profile. Administrators only. Engines that use it keep
        running.

        Args:
            name: The profile's name,
                `workspaces/{workspace}/notebookEngineProfiles/{notebook_engine_profile}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.NotebookEngineProfileService.DeleteNotebookEngineProfile", request)

    def copy_notebook_engine_profile(
        self,
        name: str,
        parent: str,
        notebook_engine_profile_id: str,
    ) -> NotebookEngineProfile:
        """Creates a new notebook engine profile with every setting of an existing one, under a
        new id and possibly in another workspace. The copy gets fresh audit fields.
        Administrators only. Fails with ALREADY_EXISTS when the new id is taken.

        Args:
            name: The name of the profile to copy,
                `workspaces/{workspace}/notebookEngineProfiles/{notebook_engine_profile}`.
            parent: The workspace to create the copy in, `workspaces/{workspace}`. It
                may be the workspace of the source profile or another one.
            notebook_engine_profile_id: The id of the copy, the last segment of its
                name: 1-63 lowercase letters, digits and hyphens, starting with a letter and
                ending with a letter or digit.

        Returns:
            The new copy.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "parent": parent,
            "notebookEngineProfileId": notebook_engine_profile_id,
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineProfileService.CopyNotebookEngineProfile", request)
        return notebook_engine_profile_from_api(response.get("notebookEngineProfile") or {})

    def list_assigned_notebook_engine_profiles(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
    ) -> NotebookEngineProfilesPage:
        """Lists the notebook engine profiles the caller may use to create engines: the enabled
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
        response = self._connection.call("enginemanager.v1.NotebookEngineProfileService.ListAssignedNotebookEngineProfiles", request)
        return notebook_engine_profiles_page_from_api(response)

    def list_all_assigned_notebook_engine_profiles(
        self,
        parent: str,
        *,
        page_size: int = 0,
    ) -> list[NotebookEngineProfile]:
        """Returns every result of :meth:`list_assigned_notebook_engine_profiles`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list profiles of, `workspaces/{workspace}`.
            page_size: The most profiles to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.

        Returns:
            All the NotebookEngineProfile objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[NotebookEngineProfile] = []
        page_token = ""
        while True:
            page = self.list_assigned_notebook_engine_profiles(parent, page_size=page_size, page_token=page_token)
            found.extend(page.notebook_engine_profiles)
            page_token = page.next_page_token
            if not page_token:
                return found

    def delete_all_notebook_engine_profiles(self, parent: str) -> None:
        """Deletes every NotebookEngineProfile of a workspace, one by one, as listed by
        :meth:`list_all_notebook_engine_profiles`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_notebook_engine_profiles(parent):
            self.delete_notebook_engine_profile(item.name)

    def apply_notebook_engine_profile_configs(
        self,
        configs: Iterable[NotebookEngineProfile | object],
        parent: str = "workspaces/global",
    ) -> list[NotebookEngineProfile]:
        """Makes the NotebookEngineProfile objects of a workspace exactly the given ones:
        deletes every one there (:meth:`delete_all_notebook_engine_profiles`), then creates
        each configuration in order.

        Args:
            configs: What to create: NotebookEngineProfile objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``notebook_engine_profile_id`` and
                ``to_notebook_engine_profile()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every NotebookEngineProfile of the workspace afterwards, as
            :meth:`list_all_notebook_engine_profiles` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "notebook_engine_profile", NotebookEngineProfile) for config in configs]
        self.delete_all_notebook_engine_profiles(parent)
        for item, item_id in prepared:
            self.create_notebook_engine_profile(parent, item, item_id)
        return self.list_all_notebook_engine_profiles(parent)
    # END GENERATED METHODS
