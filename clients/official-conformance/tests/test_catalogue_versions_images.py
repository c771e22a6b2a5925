"""DAI and H2O engine versions, notebook and sandbox engine images, and the DAI license.

Every method of ``DAIEngineVersionClient``, ``H2OEngineVersionClient``,
``NotebookEngineImageClient``, ``SandboxEngineImageClient`` and ``DAILicenseClient``. Each test
works in a workspace of its own, because ``apply_*`` and ``delete_all_*`` empty the workspace
they are given.
"""

from __future__ import annotations

import time
import unittest
from typing import Any

from . import _conformance as oc

from h2o_engine_manager.clients.base.image_pull_policy import ImagePullPolicy  # noqa: E402
from h2o_engine_manager.clients.dai_engine_version.dai_engine_version_config import DAIEngineVersionConfig  # noqa: E402
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion  # noqa: E402
from h2o_engine_manager.clients.h2o_engine_version.h2o_engine_version_config import H2OEngineVersionConfig  # noqa: E402
from h2o_engine_manager.clients.h2o_engine_version.version import H2OEngineVersion  # noqa: E402
from h2o_engine_manager.clients.notebook_engine_image.image import NotebookEngineImage  # noqa: E402
from h2o_engine_manager.clients.notebook_engine_image.image_config import NotebookEngineImageConfig  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_image.image import SandboxEngineImage  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_image.image_config import SandboxEngineImageConfig  # noqa: E402


class CatalogueContract:
    """Create, get, list, update, delete, delete-all and apply, the same for the four kinds."""

    noun = ""  # dai_engine_version, ...
    collection = ""  # daiEngineVersions, ...
    ids = ("a", "b", "c")
    resource_class: type = object
    config_class: type = object

    def fields(self, n: int) -> dict[str, Any]:
        raise NotImplementedError

    def changed(self) -> dict[str, Any]:
        raise NotImplementedError

    def call(self, clients: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(getattr(clients, f"{self.noun}_client"), method.format(noun=self.noun))(*args, **kwargs)

    def create(self, clients: Any, parent: str, n: int, resource_id: str) -> Any:
        return self.call(clients, "create_{noun}", parent=parent,
                         **{self.noun: self.resource_class(**self.fields(n)), f"{self.noun}_id": resource_id})

    def items(self, page: Any) -> list[Any]:
        return getattr(page, f"{self.noun}s")

    def assertResource(self: Any, resource: Any, name: str, expected: dict[str, Any], creator: str = oc.ADMIN) -> None:
        self.assertEqual(resource.name, name)
        for field, value in expected.items():
            self.assertEqual(getattr(resource, field), value, field)
        self.assertIsNotNone(resource.create_time)
        self.assertEqual(resource.creator, f"users/{creator}")

    def setUp(self: Any) -> None:
        self.admin = oc.admin()
        self.member = oc.member()
        self.workspace = f"workspaces/{oc.unique('oc-' + self.collection.lower())}"

    def name(self, resource_id: str) -> str:
        return f"{self.workspace}/{self.collection}/{resource_id}"

    def test_create_get_update_delete_round_trip(self: Any) -> None:
        created = self.create(self.admin, self.workspace, 0, self.ids[0])
        self.assertResource(created, self.name(self.ids[0]), self.fields(0))
        got = self.call(self.member, "get_{noun}", name=self.name(self.ids[0]))
        self.assertResource(got, self.name(self.ids[0]), self.fields(0))

        for field, value in self.changed().items():
            setattr(got, field, value)
        got.creator = "users/whatever"
        self.assertApiError(403, getattr(getattr(self.member, f"{self.noun}_client"), f"update_{self.noun}"), got)
        before = time.time()
        updated = self.call(self.admin, "update_{noun}", got)
        after = time.time()
        self.assertResource(updated, self.name(self.ids[0]), dict(self.fields(0), **self.changed()))
        # The server keeps its audit fields: the creator and create time stay, the update is stamped.
        self.assertEqual(updated.create_time, created.create_time)
        self.assertTrue(before - 1 <= updated.update_time.timestamp() <= after + 1)
        self.assertEqual(updated.updater, f"users/{oc.ADMIN}")
        self.assertEqual(updated.updater_display_name, updated.creator_display_name)
        # With a mask only the named field changes.
        updated.image = "registry.example.com/masked:1"
        updated.image_pull_secrets = ["ignored"]
        masked = self.call(self.admin, "update_{noun}", updated, update_mask="image")
        self.assertResource(masked, self.name(self.ids[0]),
                            {**self.fields(0), **self.changed(), "image": "registry.example.com/masked:1"})

        self.assertIsNone(self.call(self.admin, "delete_{noun}", name=self.name(self.ids[0])))
        self.assertApiError(404, getattr(getattr(self.member, f"{self.noun}_client"), f"get_{self.noun}"), name=self.name(self.ids[0]))

    def test_lists_page(self: Any) -> None:
        for n, resource_id in enumerate(self.ids):
            self.create(self.admin, self.workspace, n, resource_id)
        # Newest first: versions by number, images by creation; both are the reverse of the ids here.
        expected = [self.name(i) for i in reversed(self.ids)]
        first = self.call(self.member, "list_{noun}s", parent=self.workspace, page_size=2)
        self.assertEqual([r.name for r in self.items(first)], expected[:2])
        self.assertNotEqual(first.next_page_token, "")
        second = self.call(self.member, "list_{noun}s", parent=self.workspace, page_size=2, page_token=first.next_page_token)
        self.assertEqual(second.next_page_token, "")
        self.assertEqual([r.name for r in self.items(first) + self.items(second)], expected)
        self.assertEqual([r.name for r in self.call(self.member, "list_all_{noun}s", parent=self.workspace)], expected)
        self.assertIsNone(self.call(self.admin, "delete_all_{noun}s", parent=self.workspace))
        self.assertEqual(self.call(self.member, "list_all_{noun}s", parent=self.workspace), [])

    def test_apply_configs_replaces_the_workspace(self: Any) -> None:
        self.create(self.admin, self.workspace, 0, self.ids[0])
        configs = [self.config_class(**{f"{self.noun}_id": self.ids[n]}, **self.fields(n)) for n in (1, 2)]
        applied = self.call(self.admin, "apply_{noun}_configs", configs=configs, parent=self.workspace)
        # The answer is the workspace's list, newest first.
        self.assertEqual([r.name for r in applied], [self.name(self.ids[n]) for n in (2, 1)])
        for resource in applied:
            n = self.ids.index(resource.name.rsplit("/", 1)[1])
            self.assertResource(resource, self.name(self.ids[n]), self.fields(n))
        self.call(self.admin, "delete_all_{noun}s", parent=self.workspace)

    def test_errors(self: Any) -> None:
        client = getattr(self.admin, f"{self.noun}_client")
        create = getattr(client, f"create_{self.noun}")
        resource_arg, id_arg = self.noun, f"{self.noun}_id"
        create(parent=self.workspace, **{resource_arg: self.resource_class(**self.fields(0)), id_arg: self.ids[0]})
        self.assertApiError(409, create, parent=self.workspace,
                            **{resource_arg: self.resource_class(**self.fields(1)), id_arg: self.ids[0]})
        bad = dict(self.fields(1), image_pull_secrets=["Not A Kubernetes Name"])
        error = self.assertApiError(400, create, parent=self.workspace, **{resource_arg: self.resource_class(**bad), id_arg: self.ids[1]})
        self.assertIn("image_pull_secrets", str(error).replace("imagePullSecrets", "image_pull_secrets"))
        self.assertApiError(404, getattr(client, f"get_{self.noun}"), name=self.name("9.9.9" if "version" in self.noun else "missing"))
        self.assertApiError(404, getattr(client, f"delete_{self.noun}"), name=self.name("9.9.9" if "version" in self.noun else "missing"))
        member = getattr(self.member, f"{self.noun}_client")
        self.assertApiError(403, getattr(member, f"create_{self.noun}"), parent=self.workspace,
                            **{resource_arg: self.resource_class(**self.fields(1)), id_arg: self.ids[1]})
        self.assertApiError(403, getattr(member, f"delete_{self.noun}"), name=self.name(self.ids[0]))
        self.call(self.admin, "delete_all_{noun}s", parent=self.workspace)


class VersionContract(CatalogueContract):
    ids = ("1.10.0", "1.11.0", "2.0.0")

    def fields(self, n: int) -> dict[str, Any]:
        return dict(
            image=f"registry.example.com/{self.noun}:{self.ids[n]}",
            deprecated=n == 0,
            aliases=[f"alias-{n}"],
            image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_ALWAYS,
            image_pull_secrets=[f"pull-secret-{n}"],
        )

    def changed(self) -> dict[str, Any]:
        return dict(deprecated=False, image="registry.example.com/changed:1",
                    image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_NEVER, image_pull_secrets=["other"])

    def test_short_ids_default_pull_policy_and_no_updater_until_updated(self: Any) -> None:
        # Version ids of one or two segments, as the official fixtures use; no pull policy given.
        for resource_id in ("1", "12", "1.10"):
            created = self.call(self.admin, "create_{noun}", parent=self.workspace,
                                **{self.noun: self.resource_class(image="registry.example.com/short:1"),
                                   f"{self.noun}_id": resource_id})
            self.assertEqual(created.name, self.name(resource_id))
            self.assertEqual(created.image_pull_policy, ImagePullPolicy.IMAGE_PULL_POLICY_IF_NOT_PRESENT)
            self.assertIsNone(created.update_time)
            self.assertEqual((created.updater, created.updater_display_name), ("", ""))
        self.assertEqual(self.call(self.member, "get_{noun}", name=self.name("12")).name, self.name("12"))
        # The aliases come back sorted, without repeats.
        versions = self.call(self.admin, "assign_{noun}_aliases", name=self.name("12"), aliases=["zeta", "latest", "zeta", "alpha"])
        self.assertEqual({v.name: v.aliases for v in versions}[self.name("12")], ["alpha", "latest", "zeta"])
        self.call(self.admin, "delete_all_{noun}s", parent=self.workspace)

    def test_assign_aliases_moves_them_and_names_resolve(self: Any) -> None:
        for n, resource_id in enumerate(self.ids):
            self.create(self.admin, self.workspace, n, resource_id)
        versions = self.call(self.admin, "assign_{noun}_aliases", name=self.name(self.ids[2]), aliases=["latest", "alias-0"])
        by_name = {v.name: v.aliases for v in versions}
        # Every version of the workspace comes back, so the one that lost an alias is seen too.
        self.assertEqual(by_name, {self.name(self.ids[0]): [], self.name(self.ids[1]): ["alias-1"],
                                   self.name(self.ids[2]): ["alias-0", "latest"]})
        # An alias names its version.
        by_alias = self.call(self.member, "get_{noun}", name=self.name("latest"))
        self.assertEqual(by_alias.name, self.name(self.ids[2]))
        self.assertEqual(self.call(self.admin, "assign_{noun}_aliases", name=self.name(self.ids[2]))[-1].aliases, [])
        self.assertApiError(404, self.call, self.member, "get_{noun}", name=self.name("latest"))
        # An alias must be a lower-case resource id.
        self.assertApiError(400, getattr(getattr(self.admin, f"{self.noun}_client"), f"assign_{self.noun}_aliases"),
                            name=self.name(self.ids[1]), aliases=["Not Valid"])
        self.assertApiError(403, getattr(getattr(self.member, f"{self.noun}_client"), f"assign_{self.noun}_aliases"),
                            name=self.name(self.ids[1]), aliases=["mine"])

        first = self.call(self.member, "get_first_{noun}", workspace=self.workspace)
        self.assertEqual(first.name, self.items(self.call(self.member, "list_{noun}s", parent=self.workspace))[0].name)
        self.assertIsNone(self.call(self.member, "get_first_{noun}", workspace=f"workspaces/{oc.unique('empty')}"))
        self.call(self.admin, "delete_all_{noun}s", parent=self.workspace)


    # Ids of the official walk-through: three versions, then three applied ones whose text order
    # is not their number order.
    walk_ids = ("1.11.1", "1.11.2", "1.11.3")
    applied_ids = ("1.11.4", "1.11.4.1", "1.11.10")

    def test_newest_version_first_through_a_life_cycle(self: Any) -> None:
        for resource_id, alias in zip(self.walk_ids, ("foo", "bar", "latest")):
            self.call(self.admin, "create_{noun}", parent=self.workspace, **{
                self.noun: self.resource_class(image=f"img-{resource_id}", aliases=[alias]),
                f"{self.noun}_id": resource_id})
        latest = self.call(self.member, "get_{noun}", name=self.name("latest"))
        self.assertEqual(latest.name, self.name(self.walk_ids[2]))
        defaults = dict(deprecated=False, aliases=["latest"], image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_IF_NOT_PRESENT,
                        image_pull_secrets=[], update_time=None, updater="", updater_display_name="")
        for field, value in defaults.items():
            self.assertEqual(getattr(latest, field), value, field)
        self.assertNotEqual(latest.creator_display_name, "")

        newest_first = [self.name(i) for i in reversed(self.walk_ids)]
        self.assertEqual([v.name for v in self.call(self.member, "list_all_{noun}s", parent=self.workspace)], newest_first)
        first = self.call(self.member, "list_{noun}s", parent=self.workspace, page_size=1)
        self.assertEqual([v.name for v in self.items(first)], newest_first[:1])
        # The page token keeps its place when a version of the next page is deleted meanwhile.
        self.call(self.admin, "delete_{noun}", name=newest_first[1])
        rest = self.call(self.member, "list_{noun}s", parent=self.workspace, page_size=2, page_token=first.next_page_token)
        self.assertEqual(([v.name for v in self.items(rest)], rest.next_page_token), (newest_first[2:], ""))

        oldest = self.call(self.admin, "get_{noun}", name=newest_first[2])
        oldest.deprecated = True
        oldest.image = "updated-img"
        oldest.image_pull_policy = ImagePullPolicy.IMAGE_PULL_POLICY_NEVER
        oldest.image_pull_secrets = ["secret1", "secret2"]
        updated = self.call(self.admin, "update_{noun}", oldest)
        # An update leaves the aliases alone.
        self.assertEqual((updated.deprecated, updated.image, updated.aliases), (True, "updated-img", ["foo"]))
        self.assertEqual(updated.image_pull_secrets, ["secret1", "secret2"])
        self.assertNotEqual(updated.updater_display_name, "")

        # Every version of the workspace comes back, newest first, aliases sorted; "foo" moved.
        every = self.call(self.admin, "assign_{noun}_aliases", name=newest_first[0], aliases=["latest", "foo", "bam"])
        self.assertEqual([(v.name, v.aliases) for v in every],
                         [(newest_first[0], ["bam", "foo", "latest"]), (newest_first[2], [])])

        configs = [self.config_class(**{f"{self.noun}_id": i}, image=f"img-{i}", aliases=[a])
                   for i, a in zip(self.applied_ids, ("foo", "bam", "baz"))]
        self.call(self.admin, "apply_{noun}_configs", configs=configs, parent=self.workspace)
        self.assertEqual([v.name for v in self.call(self.member, "list_all_{noun}s", parent=self.workspace)],
                         [self.name(i) for i in reversed(self.applied_ids)])
        self.call(self.admin, "delete_all_{noun}s", parent=self.workspace)


class DAIEngineVersionTest(VersionContract, oc.ConformanceCase):
    noun = "dai_engine_version"
    collection = "daiEngineVersions"
    resource_class = DAIEngineVersion
    config_class = DAIEngineVersionConfig


class H2OEngineVersionTest(VersionContract, oc.ConformanceCase):
    noun = "h2o_engine_version"
    collection = "h2oEngineVersions"
    ids = ("3.44.0", "3.46.0", "3.46.0.1")
    walk_ids = ("3.36.1.5", "3.38.0.4", "3.40.0.4")
    applied_ids = ("3.1.11.4", "3.1.11.4.1", "3.1.11.10")
    resource_class = H2OEngineVersion
    config_class = H2OEngineVersionConfig


class ImageContract(CatalogueContract):
    ids = ("alpha", "beta", "gamma")

    def fields(self, n: int) -> dict[str, Any]:
        return dict(
            image=f"registry.example.com/{self.noun}:{n}",
            display_name=f"Image {n}",
            enabled=n != 1,
            image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_IF_NOT_PRESENT,
            image_pull_secrets=[f"pull-secret-{n}"],
        )

    def changed(self) -> dict[str, Any]:
        return dict(display_name="Changed", enabled=False, image="registry.example.com/changed:2",
                    image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_ALWAYS, image_pull_secrets=[])


    def test_default_pull_policy_and_no_updater_until_updated(self: Any) -> None:
        before = time.time()
        created = self.call(self.admin, "create_{noun}", parent=self.workspace,
                            **{self.noun: self.resource_class(image="registry.example.com/plain:1"), f"{self.noun}_id": "plain"})
        after = time.time()
        self.assertEqual(created.image_pull_policy, ImagePullPolicy.IMAGE_PULL_POLICY_IF_NOT_PRESENT)
        self.assertIsNone(created.update_time)
        self.assertEqual((created.updater, created.updater_display_name), ("", ""))
        self.assertTrue(before - 1 <= created.create_time.timestamp() <= after + 1)
        self.assertNotEqual(created.creator_display_name, "")
        # Updating with the client's default mask changes every field it sends.
        created.display_name = "Renamed"
        self.assertEqual(self.call(self.admin, "update_{noun}", created).display_name, "Renamed")
        self.call(self.admin, "delete_all_{noun}s", parent=self.workspace)


class NotebookEngineImageTest(ImageContract, oc.ConformanceCase):
    noun = "notebook_engine_image"
    collection = "notebookEngineImages"
    resource_class = NotebookEngineImage
    config_class = NotebookEngineImageConfig


class SandboxEngineImageTest(ImageContract, oc.ConformanceCase):
    noun = "sandbox_engine_image"
    collection = "sandboxEngineImages"
    resource_class = SandboxEngineImage
    config_class = SandboxEngineImageConfig


class DAILicenseTest(oc.ConformanceCase):
    def test_no_license_metadata_for_stand_in_engines(self) -> None:
        # Our Driverless AI engines need no license: the answer is "no metadata", which the
        # official client turns into None (docs/adr/0058).
        self.assertIsNone(oc.member().dai_license_client.get_dai_license_metadata())
        self.assertIsNone(oc.admin().dai_license_client.get_dai_license_metadata())


if __name__ == "__main__":
    unittest.main()
