"""The client for placing secrets into a sandbox engine without their values passing the caller.

Example:
    >>> info = clients.sandbox_clients.h2o_secure_store_client.reveal_secret_to_file(
    ...     name=sandbox.name, secret_version="workspaces/default/secrets/db/versions/latest",
    ...     path="/workspace/.db-password")
    >>> info.mode
    '0600'
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.filesystem.file_info import FileInfo
from ai_engine_manager.filesystem.mapper import file_info_from_api
# END GENERATED IMPORTS

__all__ = ["H2OSecureStoreClient"]


class H2OSecureStoreClient(ClientBase):
    """Places secrets from the secure store into a sandbox engine, so that code in the sandbox can
    use them without their values passing through the caller. Every call is for the creator of
    the sandbox engine only; other callers are refused with PERMISSION_DENIED. The sandbox
    engine must be in `STATE_RUNNING`, otherwise calls fail with FAILED_PRECONDITION.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def reveal_secret_to_file(
        self,
        name: str,
        secret_version: str,
        path: str,
    ) -> FileInfo:
        """Writes the value of a secret version to a file in the sandbox engine. The file gets
        mode `0600`; missing parent directories are created with mode `0755`; an existing
        file at the path is replaced. The value is never returned. Fails with NOT_FOUND when
        the secret version does not exist and with PERMISSION_DENIED when the caller may not
        read it.

        Args:
            name: The sandbox engine,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            secret_version: The secret version to reveal,
                `workspaces/{workspace}/secrets/{secret}/versions/{version}`. The version
                may be `latest` for the newest version.
            path: The absolute path in the sandbox engine of the file to write.

        Returns:
            The written file. Its content is not included.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "secretVersion": secret_version,
            "path": path,
        })
        response = self._connection.call("enginemanager.sandbox.v1.SecureStoreService.RevealSecretToFile", request)
        return file_info_from_api(response.get("fileInfo") or {})
    # END GENERATED METHODS
