"""The client for the filesystem of a sandbox engine: read, write, list, move and remove files.

Paths are absolute. Every call is for the creator of the sandbox engine only.

Example:
    >>> files = clients.filesystem_client
    >>> files.write_file(name=sandbox.name, path="/workspace/a.txt", content=b"hi", create_parent_directories=True)
    >>> files.read_file(name=sandbox.name, path="/workspace/a.txt")
    b'hi'
"""

from __future__ import annotations

import io
import os
import urllib.parse
from typing import BinaryIO, Union

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.filesystem.file_info import FileInfo
from ai_engine_manager.filesystem.mapper import file_info_from_api
# END GENERATED IMPORTS

__all__ = ["FilesystemClient"]

# What upload_file reads and download_file writes: a file by its path, or an open binary file.
PathOrFile = Union[str, "os.PathLike[str]", BinaryIO]


class FilesystemClient(ClientBase):
    """Reads and changes files inside a sandbox engine. Every call is for the creator of the
    sandbox engine only; other callers are refused with PERMISSION_DENIED. The sandbox engine
    must be in `STATE_RUNNING`, otherwise calls fail with FAILED_PRECONDITION.

    Paths must be absolute, starting with `/`; a relative path fails with INVALID_ARGUMENT.
    Paths are resolved inside the sandbox engine's own root, so neither `..` nor a symbolic link
    can reach a file outside the sandbox. The system directories (`/usr`, `/bin`, `/sbin`,
    `/lib*`, `/etc`) are read-only; changing them fails with PERMISSION_DENIED. A path that does
    not exist where an existing entry is needed fails with NOT_FOUND.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_directory(
        self,
        name: str,
        path: str,
        create_parent_directories: bool = False,
    ) -> FileInfo:
        """Creates a directory with mode `0755`. Fails with ALREADY_EXISTS when anything exists
        at the path, and with FAILED_PRECONDITION when the parent directory is missing and
        `create_parent_directories` is false.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the directory to create.
            create_parent_directories: Whether to create missing parent directories too,
                each with mode `0755`. Default false.

        Returns:
            The created directory.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
            "createParentDirectories": create_parent_directories,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.CreateDirectory", request)
        return file_info_from_api(response.get("fileInfo") or {})

    def make_directory(
        self,
        name: str,
        path: str,
        create_parent_directories: bool = False,
    ) -> FileInfo:
        """Makes sure a directory exists at the path: creates it with mode `0755`, or succeeds
        without change when a directory is already there. Fails with ALREADY_EXISTS when
        something other than a directory is at the path, and with FAILED_PRECONDITION when
        the parent directory is missing and `create_parent_directories` is false.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the directory.
            create_parent_directories: Whether to create missing parent directories too,
                each with mode `0755`. Default false.

        Returns:
            The directory, created or already present.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
            "createParentDirectories": create_parent_directories,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.MakeDirectory", request)
        return file_info_from_api(response.get("fileInfo") or {})

    def list_directory(
        self,
        name: str,
        path: str,
    ) -> list[FileInfo]:
        """Lists the entries of a directory, sorted by name, without descending into
        subdirectories. Symbolic links are reported as links, not followed. Fails with
        NOT_FOUND when the directory does not exist and with FAILED_PRECONDITION when the
        path is not a directory.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the directory to list.

        Returns:
            The directory's entries, sorted by name. `.` and `..` are not included.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.ListDirectory", request)
        return [file_info_from_api(item) for item in response.get("files") or []]

    def move(
        self,
        name: str,
        source_path: str,
        destination_path: str,
        overwrite: bool = False,
        create_parent_directories: bool = False,
    ) -> FileInfo:
        """Moves or renames a file, directory or symbolic link. Fails with NOT_FOUND when the
        source does not exist, with ALREADY_EXISTS when the destination exists and
        `overwrite` is not true, and with FAILED_PRECONDITION when the destination's parent
        directory is missing and `create_parent_directories` is false, or when the
        destination is a non-empty directory.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            source_path: The absolute path of what to move.
            destination_path: The absolute path to move it to, including its new name.
            overwrite: Whether to replace what exists at the destination. Unset (or
                `null` in JSON) means false.
            create_parent_directories: Whether to create missing parent directories of
                the destination, each with mode `0755`. Default false.

        Returns:
            What was moved, at its new path.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "sourcePath": source_path,
            "destinationPath": destination_path,
            "overwrite": overwrite,
            "createParentDirectories": create_parent_directories,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.Move", request)
        return file_info_from_api(response.get("fileInfo") or {})

    def read_file(
        self,
        name: str,
        path: str,
    ) -> bytes:
        """Returns the whole content of a file and information about it. Symbolic links are
        followed. Fails with NOT_FOUND when the file does not exist and with
        FAILED_PRECONDITION when the path is a directory. Over REST, `GET
        .../filesystem:download?path=` returns a file of any size as the raw response body
        instead of base64 JSON.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the file to read.

        Returns:
            The file's content.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.ReadFile", request)
        return _c.bytes_from_api(response.get("content"))

    def remove(
        self,
        name: str,
        path: str,
        recursive: bool = False,
    ) -> None:
        """Removes a file, symbolic link or directory. A symbolic link is removed, not what it
        points to. Fails with NOT_FOUND when nothing exists at the path and with
        FAILED_PRECONDITION when the path is a non-empty directory and `recursive` is false.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of what to remove.
            recursive: Whether to remove a non-empty directory with everything in it.
                Default false.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
            "recursive": recursive,
        })
        self._connection.call("enginemanager.sandbox.v1.FilesystemService.Remove", request)

    def stat_file(
        self,
        name: str,
        path: str,
    ) -> FileInfo:
        """Returns information about a file, directory or symbolic link. A symbolic link is
        described itself, not followed. Fails with NOT_FOUND when nothing exists at the
        path.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the entry.

        Returns:
            The information about the entry.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.StatFile", request)
        return file_info_from_api(response.get("fileInfo") or {})

    def write_file(
        self,
        name: str,
        path: str,
        content: bytes | str = b"",
        create_parent_directories: bool = False,
        overwrite: bool | None = None,
        *,
        mode: str = "",
    ) -> FileInfo:
        """Writes a whole file, replacing an existing one unless `overwrite` is false. A new
        file gets `mode`, by default `0644`; a replaced file keeps its mode unless `mode` is
        given. Fails with ALREADY_EXISTS when the file exists and `overwrite` is false, with
        FAILED_PRECONDITION when the parent directory is missing and
        `create_parent_directories` is false, or when the path is a directory, and with
        INVALID_ARGUMENT when `mode` is not an octal permission string. The request is
        bounded by the server's request-body limit (4 MiB by default); over REST, `PUT
        .../filesystem:upload?path=` takes a file of any size as the raw request body.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the file to write.
            content: The file's whole new content. May be empty.
            create_parent_directories: Whether to create missing parent directories,
                each with mode `0755`. Default false.
            overwrite: Whether to replace the file when it exists. Unset (or `null` in
                JSON) means true; false makes the call fail with ALREADY_EXISTS when the
                file exists, so that it only ever creates.
            mode: The permission bits of the file as an octal string, for example
                `0644`, `0755` or `0600` (at most `07777`). Unset means `0644` for a new
                file and keeps the mode of a replaced file.

        Returns:
            The written file.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "path": path,
            "content": _c.bytes_to_api(content),
            "createParentDirectories": create_parent_directories,
            "overwrite": overwrite,
            "mode": mode,
        })
        response = self._connection.call("enginemanager.sandbox.v1.FilesystemService.WriteFile", request)
        return file_info_from_api(response.get("fileInfo") or {})
    # END GENERATED METHODS

    def upload_file(
        self,
        name: str,
        path: str,
        source: PathOrFile | bytes,
        create_parent_directories: bool = False,
        overwrite: bool | None = None,
        *,
        mode: str = "",
    ) -> FileInfo:
        """Writes a file of any size from a local file, streaming it as the raw body of
        ``PUT /v1/{name}/filesystem:upload``: nothing is read into memory whole, and the
        request-body limit of JSON calls does not apply. Otherwise as :meth:`write_file`: the
        same rules for `overwrite`, `mode` and `create_parent_directories`, and the same errors.
        The file appears in the sandbox only once all of it arrived.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the file to write in the sandbox.
            source: A local file's path, an open binary file (read from its position to
                its end), or bytes.
            create_parent_directories: Whether to create missing parent directories.
            overwrite: Whether to replace an existing file; unset means true.
            mode: Octal permission bits such as `0755`; unset means `0644` for a new file
                and keeps the mode of a replaced one.

        Returns:
            The written file.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        # Spelled out: the query encoder leaves False out, and overwrite=false must be sent.
        query = {"path": path, "createParentDirectories": "true" if create_parent_directories else None, "mode": mode or None}
        if overwrite is not None:
            query["overwrite"] = "true" if overwrite else "false"
        route = f"/v1/{urllib.parse.quote(name, safe='/')}/filesystem:upload"
        if isinstance(source, (bytes, bytearray, memoryview)):
            response = self._connection.upload(route, query, io.BytesIO(bytes(source)))
        elif isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as f:
                response = self._connection.upload(route, query, f)
        else:
            response = self._connection.upload(route, query, source)
        return file_info_from_api(response.get("fileInfo") or {})

    def download_file(
        self,
        name: str,
        path: str,
        destination: PathOrFile,
    ) -> int:
        """Reads a file of any size into a local file, streaming the raw body of
        ``GET /v1/{name}/filesystem:download``: nothing is held in memory whole. A local path
        is written under a temporary name beside it and renamed when the whole file arrived,
        so it never holds a partial download. Fails as :meth:`read_file` does.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            path: The absolute path of the file to read in the sandbox.
            destination: A local path to write, or an open binary file to write to.

        Returns:
            The number of bytes written.

        Raises:
            CustomApiException: when the server rejects the call.
            ApiConnectionException: when the download breaks off.
        """
        route = f"/v1/{urllib.parse.quote(name, safe='/')}/filesystem:download"
        if not isinstance(destination, (str, os.PathLike)):
            return self._connection.download(route, {"path": path}, destination)
        partial = f"{os.fspath(destination)}.part"
        try:
            with open(partial, "wb") as f:
                written = self._connection.download(route, {"path": path}, f)
            os.replace(partial, destination)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        return written
