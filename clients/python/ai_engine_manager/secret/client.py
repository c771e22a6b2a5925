"""The client for secrets and their versions, which processes and sandbox files can read.

A secret's value is never returned; it reaches a sandbox engine as a process environment variable
or through :meth:`~ai_engine_manager.secure_store.client.H2OSecureStoreClient.reveal_secret_to_file`.

Example:
    >>> secrets = clients.secret_client
    >>> secret = secrets.create_secret(parent="workspaces/default", secret=Secret(display_name="DB"), secret_id="db")
    >>> secrets.add_secret_version(parent=secret.name, secret_version=SecretVersion(value=b"s3cr3t")).name
    'workspaces/default/secrets/db/versions/1'
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.secret.mapper import secret_from_api
from ai_engine_manager.secret.mapper import secret_to_api
from ai_engine_manager.secret.mapper import secret_version_from_api
from ai_engine_manager.secret.mapper import secret_version_to_api
from ai_engine_manager.secret.mapper import secret_versions_page_from_api
from ai_engine_manager.secret.mapper import secrets_page_from_api
from ai_engine_manager.secret.page import SecretVersionsPage
from ai_engine_manager.secret.page import SecretsPage
from ai_engine_manager.secret.secret import Secret
from ai_engine_manager.secret.version import SecretVersion
# END GENERATED IMPORTS

__all__ = ["SecretClient"]


class SecretClient(ClientBase):
    """Manages the secrets of a workspace. Members of a workspace may create, read, list and delete
    its secrets; administrators may do so in every workspace. Secrets cannot be changed after
    create; their values are set by adding secret versions with `SecretVersionService`.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def create_secret(
        self,
        parent: str,
        secret: Secret,
        secret_id: str,
    ) -> Secret:
        """Creates a secret without any value. Fails with ALREADY_EXISTS when the id is taken.
        Add its first value with `SecretVersionService.AddSecretVersion`.

        Args:
            parent: The workspace to create the secret in, `workspaces/{workspace}`.
            secret: The secret to create.
            secret_id: The id of the new secret, the last segment of its name: 1-63
                lowercase letters, digits and hyphens, starting with a letter and ending
                with a letter or digit.

        Returns:
            The created secret.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "secret": None if secret is None else secret_to_api(secret),
            "secretId": secret_id,
        })
        response = self._connection.call("enginemanager.v1.SecretService.CreateSecret", request)
        return secret_from_api(response.get("secret") or {})

    def get_secret(
        self,
        name: str,
    ) -> Secret:
        """Returns one secret. Its values are not included.

        Args:
            name: The secret's name, `workspaces/{workspace}/secrets/{secret}`.

        Returns:
            The secret.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.SecretService.GetSecret", request)
        return secret_from_api(response.get("secret") or {})

    def list_secrets(
        self,
        parent: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        order_by: str = "",
        filter: str = "",
    ) -> SecretsPage:
        """Lists the secrets of a workspace.

        Args:
            parent: The workspace to list secrets of, `workspaces/{workspace}`.
            page_size: The most secrets to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent, filter and order.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `display_name = "Database*"`.

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
        response = self._connection.call("enginemanager.v1.SecretService.ListSecrets", request)
        return secrets_page_from_api(response)

    def list_all_secrets(
        self,
        parent: str,
        *,
        page_size: int = 0,
        order_by: str = "",
        filter: str = "",
    ) -> list[Secret]:
        """Returns every result of :meth:`list_secrets`, following ``next_page_token`` from
        page to page.

        Args:
            parent: The workspace to list secrets of, `workspaces/{workspace}`.
            page_size: The most secrets to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            order_by: The sort order, a comma-separated list of fields each optionally
                followed by ` desc`, for example `display_name, create_time desc`. Default
                `create_time desc`.
            filter: An AIP-160 filter, for example `display_name = "Database*"`.

        Returns:
            All the Secret objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[Secret] = []
        page_token = ""
        while True:
            page = self.list_secrets(parent, page_size=page_size, order_by=order_by, filter=filter, page_token=page_token)
            found.extend(page.secrets)
            page_token = page.next_page_token
            if not page_token:
                return found

    def delete_secret(
        self,
        name: str,
    ) -> None:
        """Deletes a secret and all its versions, for good. Processes that already received a
        value keep it; later attempts to reveal any of its versions fail with NOT_FOUND.

        Args:
            name: The secret's name, `workspaces/{workspace}/secrets/{secret}`.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        self._connection.call("enginemanager.v1.SecretService.DeleteSecret", request)

    def add_secret_version(
        self,
        parent: str,
        secret_version: SecretVersion,
    ) -> SecretVersion:
        """Adds a new value to a secret. The new version gets the next id and becomes `latest`;
        older versions stay usable. The response does not include the value. Fails with
        NOT_FOUND when the secret does not exist and with INVALID_ARGUMENT when the value is
        empty or above 64 KiB.

        Args:
            parent: The secret to add the version to,
                `workspaces/{workspace}/secrets/{secret}`.
            secret_version: The version to add, with its `value`. The server assigns its
                name.

        Returns:
            The added version, with its assigned name and without its value.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "secretVersion": None if secret_version is None else secret_version_to_api(secret_version),
        })
        response = self._connection.call("enginemanager.v1.SecretVersionService.AddSecretVersion", request)
        return secret_version_from_api(response.get("secretVersion") or {})

    def get_secret_version(
        self,
        name: str,
    ) -> SecretVersion:
        """Returns one secret version, without its value. The id `latest` names the newest
        version; the returned version carries its real id.

        Args:
            name: The version's name,
                `workspaces/{workspace}/secrets/{secret}/versions/{version}`, where the
                version may be `latest`.

        Returns:
            The version, without its value.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.v1.SecretVersionService.GetSecretVersion", request)
        return secret_version_from_api(response.get("secretVersion") or {})

    def list_secret_versions(
        self,
        parent: str,
        *,
        page_size: int = 0,
        page_token: str = "",
    ) -> SecretVersionsPage:
        """Lists the versions of a secret, newest first, without their values.

        Args:
            parent: The secret to list versions of,
                `workspaces/{workspace}/secrets/{secret}`.
            page_size: The most versions to return. 0 means 50; values above 1000 are
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
        response = self._connection.call("enginemanager.v1.SecretVersionService.ListSecretVersions", request)
        return secret_versions_page_from_api(response)

    def list_all_secret_versions(
        self,
        parent: str,
        *,
        page_size: int = 0,
    ) -> list[SecretVersion]:
        """Returns every result of :meth:`list_secret_versions`, following ``next_page_token``
        from page to page.

        Args:
            parent: The secret to list versions of,
                `workspaces/{workspace}/secrets/{secret}`.
            page_size: The most versions to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.

        Returns:
            All the SecretVersion objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[SecretVersion] = []
        page_token = ""
        while True:
            page = self.list_secret_versions(parent, page_size=page_size, page_token=page_token)
            found.extend(page.secret_versions)
            page_token = page.next_page_token
            if not page_token:
                return found
    # END GENERATED METHODS
