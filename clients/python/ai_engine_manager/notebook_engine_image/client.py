"""The client for notebook engine images: the container images notebook engines run.

Example:
    >>> for image in clients.notebook_engine_image_client.list_all_notebook_engine_images(parent="workspaces/global"):
    ...     print(image.name, image.image, image.enabled)
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.notebook_engine_image.image import NotebookEngineImage
from ai_engine_manager.notebook_engine_image.mapper import notebook_engine_image_from_api
from ai_engine_manager.notebook_engine_image.mapper import notebook_engine_image_to_api
from ai_engine_manager.notebook_engine_image.mapper import notebook_engine_images_page_from_api
from ai_engine_manager.notebook_engine_image.page import NotebookEngineImagesPage
from collections.abc import Iterable
# END GENERATED IMPORTS

__all__ = ["NotebookEngineImageClient"]


class NotebookEngineImageClient(ClientBase):
    """Manages the container images that notebook engines run. Every signed-in user may read
    images; only administrators may create, change or delete them.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_notebook_engine_image(
        self,
        parent: str,
        notebook_engine_image: NotebookEngineImage,
        notebook_engine_image_id: str = "",
    ) -> NotebookEngineImage:
        """Creates a notebook engine image. Fails with ALREADY_EXISTS when the id is taken.

        Args:
            parent: The workspace to create the image in, `workspaces/{workspace}`.
            notebook_engine_image: The image to create.
            notebook_engine_image_id: The id of the new image, the last segment of its
                name: 1-63 lowercase letters, digits and hyphens, starting with a letter and
                ending with a letter or digit. When empty, the server generates one.

        Returns:
            The created image.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "notebookEngineImage": None if notebook_engine_image is None else notebook_engine_image_to_api(notebook_engine_image),
            "notebookEngineImageId": notebook_engine_image_id,
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineImageService.CreateNotebookEngineImage", request)
        return notebook_engine_image_from_api(response.get("notebookEngineImage") or {})

    def get_notebook_engine_image(
        self,
        name: str,
    ) -> NotebookEngineImage:
        """Returns one notebook engine image.

        Args:
            name: The image's name,
                `workspaces/{workspace}/notebookEngineImages/{notebook_engine_image}`.

        Returns:
            The image.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineImageService.GetNotebookEngineImage", request)
        return notebook_engine_image_from_api(response.get("notebookEngineImage") or {})

    def list_notebook_engine_images(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        *,
        order_by: str = "",
        filter: str = "",
    ) -> NotebookEngineImagesPage:
        """Lists the notebook engine images of a workspace.

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
                "Jupyter*"`.

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
        response = self._connection.call("enginemanager.v1.NotebookEngineImageService.ListNotebookEngineImages", request)
        return notebook_engine_images_page_from_api(response)

    def list_all_notebook_engine_images(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[NotebookEngineImage]:
        """Returns every result of :meth:`list_notebook_engine_images`, following
        ``next_page_token`` from page to page.

        Args:
            parent: The workspace to list images of, `workspaces/{workspace}`.
            page_size: The most images to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `enabled = true AND display_name =
                "Jupyter*"`.

        Returns:
            All the NotebookEngineImage objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[NotebookEngineImage] = []
        page_token = ""
        while True:
            page = self.list_notebook_engine_images(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.notebook_engine_images)
            page_token = page.next_page_token
            if not page_token:
                return found

    def update_notebook_engine_image(
        self,
        notebook_engine_image: NotebookEngineImage,
        update_mask: str | list[str] = "*",
    ) -> NotebookEngineImage:
        """Changes the fields of a notebook engine image named in `update_mask`.

        Args:
            notebook_engine_image: The image with its new values. Its `name` says which
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
            "notebookEngineImage": None if notebook_engine_image is None else notebook_engine_image_to_api(notebook_engine_image),
            "updateMask": _c.field_mask_to_api(update_mask),
        })
        response = self._connection.call("enginemanager.v1.NotebookEngineImageService.UpdateNotebookEngineImage", request)
        return notebook_engine_image_from_api(response.get("notebookEngineImage") or {})

    def delete_notebook_engine_image(
        self,
        name: str,
    ) -> None:
        """Deletes a notebook engine image. Engines that use it keep running.

        Args:
            name: The image's name,
                `workspaces/{workspace}/notebookEngineImages/{notebook_engine_image}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.NotebookEngineImageService.DeleteNotebookEngineImage", request)

    def delete_all_notebook_engine_images(self, parent: str) -> None:
        """Deletes every NotebookEngineImage of a workspace, one by one, as listed by
        :meth:`list_all_notebook_engine_images`.

        Args:
            parent: The workspace, `workspaces/{workspace}`.

        Raises:
            CustomApiException: when the server rejects a call; the ones deleted before stay
                deleted.
        """
        for item in self.list_all_notebook_engine_images(parent):
            self.delete_notebook_engine_image(item.name)

    def apply_notebook_engine_image_configs(
        self,
        configs: Iterable[NotebookEngineImage | object],
        parent: str = "workspaces/global",
    ) -> list[NotebookEngineImage]:
        """Makes the NotebookEngineImage objects of a workspace exactly the given ones: deletes
        every one there (:meth:`delete_all_notebook_engine_images`), then creates each
        configuration in order.

        Args:
            configs: What to create: NotebookEngineImage objects whose ``name`` gives the id (its last
                segment, or a bare id), or objects with ``notebook_engine_image_id`` and
                ``to_notebook_engine_image()``.
            parent: The workspace, `workspaces/{workspace}`; by default `workspaces/global`.

        Returns:
            Every NotebookEngineImage of the workspace afterwards, as
            :meth:`list_all_notebook_engine_images` returns them.

        Raises:
            CustomApiException: when the server rejects a call; what was deleted or created
                before stays so.
        """
        prepared = [_c.config_to_create(config, "notebook_engine_image", NotebookEngineImage) for config in configs]
        self.delete_all_notebook_engine_images(parent)
        for item, item_id in prepared:
            self.create_notebook_engine_image(parent, item, item_id)
        return self.list_all_notebook_engine_images(parent)
    # END GENERATED METHODS
