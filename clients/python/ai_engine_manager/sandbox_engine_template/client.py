"""The client for sandbox engine templates: the resources and idle limit of sandbox engines.

A template must exist before a sandbox engine that uses it is created.

Example:
    >>> template = clients.sandbox_engine_template_client.create_sandbox_engine_template(
    ...     parent="workspaces/global",
    ...     sandbox_engine_template=SandboxEngineTemplate(
    ...         memory_bytes_limit="2Gi", milli_cpu_limit=1000, max_idle_duration="1h", enabled=True),
    ...     sandbox_engine_template_id="small",
    ... )
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.sandbox_engine_template.mapper import sandbox_engine_template_from_api
from ai_engine_manager.sandbox_engine_template.mapper import sandbox_engine_template_to_api
from ai_engine_manager.sandbox_engine_template.mapper import sandbox_engine_templates_page_from_api
from ai_engine_manager.sandbox_engine_template.page import SandboxEngineTemplatesPage
from ai_engine_manager.sandbox_engine_template.template import SandboxEngineTemplate
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["SandboxEngineTemplateClient"]


class SandboxEngineTemplateClient(ClientBase):
    """Manages the templates that set the resources and limits of sandbox engines. Every signed-in
    user may read templates; only administrators may create, change or delete them.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_sandbox_engine_template(
        self,
        parent: str,
        sandbox_engine_template: SandboxEngineTemplate,
        sandbox_engine_template_id: str = "",
    ) -> SandboxEngineTemplate:
        """Creates a sandbox engine template. Fails with ALREADY_EXISTS when the id is taken.

        Args:
            parent: The workspace to create the template in, `workspaces/{workspace}`.
            sandbox_engine_template: The template to create.
            sandbox_engine_template_id: The id of the new template, the last segment of
                its name: 1-63 lowercase letters, digits and hyphens, starting with a letter
                and ending with a letter or digit. When empty, the server generates one.

        Returns:
            The created template.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "sandboxEngineTemplate": None if sandbox_engine_template is None else sandbox_engine_template_to_api(sandbox_engine_template),
            "sandboxEngineTemplateId": sandbox_engine_template_id,
        })
        response = self._connection.call("enginemanager.v1.SandboxEngineTemplateService.CreateSandboxEngineTemplate", request)
        return sandbox_engine_template_from_api(response.get("sandboxEngineTemplate") or {})

    def get_sandbox_engine_template(
        self,
        name: str,
    ) -> SandboxEngineTemplate:
        """Returns one sandbox engine template.

        Args:
            name: The template's name,
                `workspaces/{workspace}/sandboxEngineTemplates/{sandbox_engine_template}`.

        Returns:
            The template.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.SandboxEngineTemplateService.GetSandboxEngineTemplate", request)
        return sandbox_engine_template_from_api(response.get("sandboxEngineTemplate") or {})

    def list_sandbox_engine_templates(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> SandboxEngineTemplatesPage:
        """Lists the sandbox engine templates of a workspace.

        Args:
            parent: The workspace to list templates of, `workspaces/{workspace}`.
            page_size: The most templates to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent, filter and order.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `enabled = true AND display_name =
                "Small*"`.

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
        response = self._connection.call("enginemanager.v1.SandboxEngineTemplateService.ListSandboxEngineTemplates", request)
        return sandbox_engine_templates_page_from_api(response)

    def list_all_sandbox_engine_templates(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[SandboxEngineTemplate]:
        """Returns every result of :meth:`list_sandbox_engine_templates`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list templates of, `workspaces/{workspace}`.
            page_size: The most templates to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `enabled = true AND display_name =
                "Small*"`.

        Returns:
            All the SandboxEngineTemplate objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[SandboxEngineTemplate] = []
        page_token = ""
        while True:
            page = self.list_sandbox_engine_templates(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.sandbox_engine_templates)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_sandbox_engine_template(
        self,
        sandbox_engine_template: SandboxEngineTemplate,
        update_mask: str | list[str] = "*",
    ) -> SandboxEngineTemplate:
        """Changes the fields of a sandbox engine template named in `update_mask`. Sandbox
        engines created from it are not changed.

        Args:
            sandbox_engine_template: The template with its new values. Its `name` says
                which template to update.
            update_mask: The fields to change, as exact snake_case paths, or `*` for
                every field that can change: `display_name`, `milli_cpu_request`,
                `milli_cpu_limit`, `gpu_resource`, `gpu`, `memory_bytes_request`,
                `memory_bytes_limit`, `storage_bytes`, `storage_class_name`,
                `environmental_variables`, `yaml_pod_template_spec`, `enabled`,
                `max_idle_duration`. An optional field named in the mask but left unset in
                the body becomes unset. Give the paths as a comma-separated string or a
                list; the default ``"*"`` changes every field that can change.

        Returns:
            The template after the update.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "sandboxEngineTemplate": None if sandbox_engine_template is None else sandbox_engine_template_to_api(sandbox_engine_template),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.SandboxEngineTemplateService.UpdateSandboxEngineTemplate", request)
        return sandbox_engine_template_from_api(response.get("sandboxEngineTemplate") or {})

    def delete_sandbox_engine_template(
        self,
        name: str,
    ) -> None:
        """Deletes a sandbox engine template. Sandbox engines created from it keep running.

        Args:
            name: The template's name,
                `workspaces/{workspace}/sandboxEngineTemplates/{sandbox_engine_template}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.SandboxEngineTemplateService.DeleteSandboxEngineTemplate", request)

    def delete_all_sandbox_engine_templates(self, parent: str) -> None:
        """Deletes every SandboxEngineTemplate of a workspace, one by one, as listed by
        :meth:`list_all_sandbox_engine_templates`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_sandbox_engine_templates(parent):
            self.delete_sandbox_engine_template(item.name)

    def apply_sandbox_engine_template_configs(
        self,
        configs: Iterable[SandboxEngineTemplate | object],
        parent: str = "workspaces/global",
    ) -> list[SandboxEngineTemplate]:
        """Makes the SandboxEngineTemplate objects of a workspace exactly the given ones:
        deletes every one there (:meth:`delete_all_sandbox_engine_templates`), then creates
        each configuration in order.

        Args:
            configs: What to create: SandboxEngineTemplate objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``sandbox_engine_template_id`` and
                ``to_sandbox_engine_template()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every SandboxEngineTemplate of the workspace afterwards, as
            :meth:`list_all_sandbox_engine_templates` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "sandbox_engine_template", SandboxEngineTemplate) for config in configs]
        self.delete_all_sandbox_engine_templates(parent)
        for item, item_id in prepared:
            self.create_sandbox_engine_template(parent, item, item_id)
        return self.list_all_sandbox_engine_templates(parent)
    # END GENERATED METHODS
