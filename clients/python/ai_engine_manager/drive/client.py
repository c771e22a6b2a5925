"""The client for copying files between a sandbox engine and a workspace's drive.

Example:
    >>> clients.sandbox_clients.h2o_drive_client.upload_file(
    ...     name=sandbox.name, workspace="workspaces/default",
    ...     local_path="/workspace/model.bin", remote_path="results/model.bin")
    1048576
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.filesystem.file_info import FileInfo
from ai_engine_manager.filesystem.mapper import file_info_from_api
# END GENERATED IMPORTS

__all__ = ["H2ODriveClient"]


class H2ODriveClient(ClientBase):
    """Copies files between a sandbox engine and a workspace's drive, the file store every
    workspace has. Every call is for the creator of the sandbox engine only; other callers are
    refused with PERMISSION_DENIED. Downloading needs read permission and uploading write
    permission on the workspace whose drive is used. The sandbox engine must be in
    `STATE_RUNNING`, otherwise calls fail with FAILED_PRECONDITION.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def download_file(
        self,
        name: str,
        remote_path: str,
        local_path: str,
        workspace: str = "",
        create_parent_directories: bool = False,
        overwrite: bool | None = None,
    ) -> FileInfo:
        """Copies a file from a workspace's drive into the sandbox engine, replacing a local
        file at the same path unless `overwrite` is false. A new file gets mode `0644`.
        Fails with NOT_FOUND when the drive file does not exist, with ALREADY_EXISTS when
        the local file exists and `overwrite` is false, and with FAILED_PRECONDITION when
        the local parent directory is missing and `create_parent_directories` is false.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            remote_path: The path of the file in the drive, relative to the drive's
                root, for example `datasets/train.csv`. It cannot lead outside the drive
                (INVALID_ARGUMENT).
            local_path: The absolute path in the sandbox engine to write the file to.
            workspace: The workspace whose drive to read, `workspaces/{workspace}`.
                Empty means the sandbox engine's own workspace.
            create_parent_directories: Whether to create missing parent directories of
                `local_path`, each with mode `0755`. Default false.
            overwrite: Whether to replace the local file when it exists. Unset (or
                `null` in JSON) means true.

        Returns:
            The file written in the sandbox engine.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "workspace": workspace,
            "remotePath": remote_path,
            "localPath": local_path,
            "createParentDirectories": create_parent_directories,
            "overwrite": overwrite,
        })
        response = self._connection.call("enginemanager.sandbox.v1.DriveService.DownloadFile", request)
        return file_info_from_api(response.get("fileInfo") or {})

    def upload_file(
        self,
        name: str,
        local_path: str,
        remote_path: str,
        workspace: str = "",
    ) -> int:
        """Copies a file from the sandbox engine to a workspace's drive, replacing a drive file
        at the same path. Fails with NOT_FOUND when the local file does not exist and with
        FAILED_PRECONDITION when the local path is not a regular file.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            local_path: The absolute path of the file in the sandbox engine to upload.
            remote_path: The path to write in the drive, relative to the drive's root,
                for example `results/model.bin`. It cannot lead outside the drive
                (INVALID_ARGUMENT).
            workspace: The workspace whose drive to write, `workspaces/{workspace}`.
                Empty means the sandbox engine's own workspace.

        Returns:
            The number of bytes written to the drive.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "workspace": workspace,
            "localPath": local_path,
            "remotePath": remote_path,
        })
        response = self._connection.call("enginemanager.sandbox.v1.DriveService.UploadFile", request)
        return _c.integer(response.get("bytesUploaded"))
    # END GENERATED METHODS
