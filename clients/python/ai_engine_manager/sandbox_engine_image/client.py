"""The client for sandbox engine images: the container images sandbox engines run.

Example:
    >>> image = clients.sandbox_engine_image_client.create_sandbox_engine_image(
    ...     parent="workspaces/global",
    ...     sandbox_engine_image=SandboxEngineImage(image="docker.io/library/python:3.12-slim", enabled=True),
    ...     sandbox_engine_image_id="python",
    ... )
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.sandbox_engine_image.image import SandboxEngineImage
from ai_engine_manager.sandbox_engine_image.mapper import sandbox_engine_image_from_api
from ai_engine_manager.sandbox_engine_image.mapper import sandbox_engine_image_to_api
from ai_engine_manager.sandbox_engine_image.mapper import sandbox_engine_images_page_from_api
from ai_engine_manager.sandbox_engine_image.page import SandboxEngineImagesPage
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["SandboxEngineImageClient"]


class SandboxEngineImageClient(ClientBase):
    """Manages the container images that sandbox engines run. Every signed-in user may read images;
    only administrators may create, change or delete them.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_sandbox_engine_image(
        self,
        parent: str,
        sandbox_engine_image: SandboxEngineImage,
        sandbox_engine_image_id: str = "",
    ) -> SandboxEngineImage:
        """Creates a sandbox engine image. Fails with ALREADY_EXISTS when the id is taken.

        Args:
            parent: The workspace to create the image in, `workspaces/{workspace}`.
            sandbox_engine_image: The image to create.
            sandbox_engine_image_id: The id of the new image, the last segment of its
                name: 1-63 lowercase letters, digits and hyphens, starting with a letter and
                ending with a letter or digit. When empty, the server generates one.

        Returns:
            The created image.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "sandboxEngineImage": None if sandbox_engine_image is None else sandbox_engine_image_to_api(sandbox_engine_image),
            "sandboxEngineImageId": sandbox_engine_image_id,
        })
        response = self._connection.call("enginemanager.v1.SandboxEngineImageService.CreateSandboxEngineImage", request)
        return sandbox_engine_image_from_api(response.get("sandboxEngineImage") or {})

    def get_sandbox_engine_image(
        self,
        name: str,
    ) -> SandboxEngineImage:
        """Returns one sandbox engine image.

        Args:
            name: The image's name,
                `workspaces/{workspace}/sandboxEngineImages/{sandbox_engine_image}`.

        Returns:
            The image.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.SandboxEngineImageService.GetSandboxEngineImage", request)
        return sandbox_engine_image_from_api(response.get("sandboxEngineImage") or {})

    def list_sandbox_engine_images(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> SandboxEngineImagesPage:
        """Lists the sandbox engine images of a workspace.

        Args:
            parent: The workspace to list images of, `workspaces/{workspace}`.
            page_size: The most images to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent, filter and order.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `enabled = true AND display_name =
                "Python*"`.

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
        response = self._connection.call("enginemanager.v1.SandboxEngineImageService.ListSandboxEngineImages", request)
        return sandbox_engine_images_page_from_api(response)

    def list_all_sandbox_engine_images(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[SandboxEngineImage]:
        """Returns every result of :meth:`list_sandbox_engine_images`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list images of, `workspaces/{workspace}`.
            page_size: The most images to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `enabled = true AND display_name =
                "Python*"`.

        Returns:
            All the SandboxEngineImage objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[SandboxEngineImage] = []
        page_token = ""
        while True:
            page = self.list_sandbox_engine_images(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.sandbox_engine_images)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_sandbox_engine_image(
        self,
        sandbox_engine_image: SandboxEngineImage,
        update_mask: str | list[str] = "*",
    ) -> SandboxEngineImage:
        """Changes the fields of a sandbox engine image named in `update_mask`.

        Args:
            sandbox_engine_image: The image with its new values. Its `name` says which
                image to update.
            update_mask: The fields to change, as exact snake_case paths, or `*` for
                every field that can change: `display_name`, `image`, `enabled`,
                `image_pull_policy`, `image_pull_secrets`. Give the paths as a
                comma-separated string or a list; the default ``"*"`` changes every field
                that can change.

        Returns:
            The image after the update.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "sandboxEngineImage": None if sandbox_engine_image is None else sandbox_engine_image_to_api(sandbox_engine_image),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.SandboxEngineImageService.UpdateSandboxEngineImage", request)
        return sandbox_engine_image_from_api(response.get("sandboxEngineImage") or {})

    def delete_sandbox_engine_image(
        self,
        name: str,
    ) -> None:
        """Deletes a sandbox engine image. Sandbox engines that use it keep running.

        Args:
            name: The image's name,
                `workspaces/{workspace}/sandboxEngineImages/{sandbox_engine_image}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.SandboxEngineImageService.DeleteSandboxEngineImage", request)

    def delete_all_sandbox_engine_images(self, parent: str) -> None:
        """Deletes every SandboxEngineImage of a workspace, one by one, as listed by
        :meth:`list_all_sandbox_engine_images`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_sandbox_engine_images(parent):
            self.delete_sandbox_engine_image(item.name)

    def apply_sandbox_engine_image_configs(
        self,
        configs: Iterable[SandboxEngineImage | object],
        parent: str = "workspaces/global",
    ) -> list[SandboxEngineImage]:
        """Makes the SandboxEngineImage objects of a workspace exactly the given ones: deletes
        every one there (:meth:`delete_all_sandbox_engine_images`), then creates each
        configuration in order.

        Args:
            configs: What to create: SandboxEngineImage objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``sandbox_engine_image_id`` and
                ``to_sandbox_engine_image()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every SandboxEngineImage of the workspace afterwards, as
            :meth:`list_all_sandbox_engine_images` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "sandbox_engine_image", SandboxEngineImage) for config in configs]
        self.delete_all_sandbox_engine_images(parent)
        for item, item_id in prepared:
            self.create_sandbox_engine_image(parent, item, item_id)
        return self.list_all_sandbox_engine_images(parent)
    # END GENERATED METHODS
