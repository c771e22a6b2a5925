"""The catalogue clients against the real server: profiles, versions, images, templates, secrets.

Every test works in a workspace of its own, so lists hold exactly what the test created; the demo
catalogue in ``workspaces/global`` is only read.
"""

from __future__ import annotations

import datetime
import unittest

from tests import support
from tests.support import requires, unique
from ai_engine_manager.base.image_pull_policy import ImagePullPolicy
from ai_engine_manager.constraint.profile_constraint_duration import ProfileConstraintDuration
from ai_engine_manager.constraint.profile_constraint_numeric import ProfileConstraintNumeric
from ai_engine_manager.dai_engine_profile.config_editability import ConfigEditability
from ai_engine_manager.dai_engine_profile.profile import DAIEngineProfile
from ai_engine_manager.dai_engine_version.version import DAIEngineVersion
from ai_engine_manager.exception import CustomApiException
from ai_engine_manager.h2o_engine_profile.profile import H2OEngineProfile
from ai_engine_manager.h2o_engine_version.version import H2OEngineVersion
from ai_engine_manager.notebook_engine_image.image import NotebookEngineImage
from ai_engine_manager.notebook_engine_profile.profile import NotebookEngineProfile
from ai_engine_manager.sandbox_engine_image.image import SandboxEngineImage
from ai_engine_manager.sandbox_engine_template.template import SandboxEngineTemplate
from ai_engine_manager.secret.secret import Secret
from ai_engine_manager.secret.version import SecretVersion


class CatalogueTestCase(unittest.TestCase):
    admin = None
    member = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.admin = support.clients("py-admin", admin=True)
        cls.member = support.clients("alice")

    def setUp(self) -> None:
        self.workspace = "workspaces/" + unique("py")

    def assertApiError(self, code_name: str, status: int):  # noqa: N802
        test = self

        class Expect:
            def __enter__(self) -> "Expect":
                return self

            def __exit__(self, kind, error, tb) -> bool:
                test.assertIsNotNone(error, f"expected {code_name}")
                test.assertIsInstance(error, CustomApiException)
                test.assertEqual((error.code_name, error.status), (code_name, status), str(error))
                test.assertIn(f"{status} (", str(error))
                self.error = error
                return True

        return Expect()


@requires("dai_engine_profile")
class DAIEngineProfileClientTest(CatalogueTestCase):
    def test_profile_lifecycle(self) -> None:
        profiles = self.admin.dai_engine_profile_client
        created = profiles.create_dai_engine_profile(
            parent=self.workspace,
            dai_engine_profile=DAIEngineProfile(
                display_name="Large",
                priority=5,
                enabled=True,
                cpu_constraint=ProfileConstraintNumeric(min=1, default=2, max=8, cumulative_max=16),
                memory_bytes_constraint=ProfileConstraintNumeric(min="1Gi", default="16Gi", max="64Gi"),
                storage_bytes_constraint=ProfileConstraintNumeric(min=1024**3, default="32Gi"),
                max_idle_duration_constraint=ProfileConstraintDuration(min="0s", default="2h", max="1d"),
                max_running_duration_constraint=ProfileConstraintDuration(min="5m", default="8h"),
                max_unused_duration="90m",
                configuration_override={"enable_tensorflow": "false"},
                config_editability=ConfigEditability.CONFIG_EDITABILITY_BASE_CONFIG_ONLY,
            ),
            dai_engine_profile_id="large",
        )
        self.assertEqual(created.name, f"{self.workspace}/daiEngineProfiles/large")
        self.assertEqual(created.cpu_constraint, ProfileConstraintNumeric(min=1, default=2, max=8, cumulative_max=16))
        self.assertEqual(created.memory_bytes_constraint, ProfileConstraintNumeric(min="1Gi", default="16Gi", max="64Gi"))
        self.assertEqual(created.storage_bytes_constraint.min, "1Gi")
        self.assertEqual(created.max_idle_duration_constraint, ProfileConstraintDuration(min="0s", default="2h", max="1d"))
        self.assertEqual(created.max_unused_duration, "90m")
        self.assertEqual(created.config_editability, ConfigEditability.CONFIG_EDITABILITY_BASE_CONFIG_ONLY)
        self.assertEqual(created.creator, "users/py-admin")
        self.assertIsInstance(created.create_time, datetime.datetime)
        self.assertIsNotNone(created.create_time.tzinfo)

        fetched = profiles.get_dai_engine_profile(name=created.name)
        self.assertEqual(fetched, created)

        fetched.display_name = "Larger"
        fetched.priority = 1
        updated = profiles.update_dai_engine_profile(fetched, update_mask="display_name,priority")
        self.assertEqual((updated.display_name, updated.priority), ("Larger", 1))
        self.assertEqual(updated.memory_bytes_constraint, created.memory_bytes_constraint)

        updated.max_running_engines = 3
        everything = profiles.update_dai_engine_profile(updated)
        self.assertEqual(everything.max_running_engines, 3)

        copy = profiles.copy_dai_engine_profile(name=created.name, parent=self.workspace, dai_engine_profile_id="copy")
        self.assertEqual(copy.display_name, "Larger")
        self.assertEqual(copy.memory_bytes_constraint, created.memory_bytes_constraint)

        page = profiles.list_dai_engine_profiles(parent=self.workspace, page_size=1, order_by="name")
        self.assertEqual([p.name for p in page.dai_engine_profiles], [copy.name])
        self.assertTrue(page.next_page_token)
        second = profiles.list_dai_engine_profiles(parent=self.workspace, page_size=1, order_by="name", page_token=page.next_page_token)
        self.assertEqual([p.name for p in second.dai_engine_profiles], [created.name])
        self.assertEqual(second.next_page_token, "")
        everyone = profiles.list_all_dai_engine_profiles(parent=self.workspace, page_size=1, filter='display_name = "Larger"')
        self.assertEqual(sorted(p.name for p in everyone), sorted([created.name, copy.name]))

        # Both have priority 1 now, so the name decides: "copy" before "large".
        assigned = self.member.dai_engine_profile_client.list_assigned_dai_engine_profiles(parent=self.workspace)
        self.assertEqual([p.name for p in assigned.dai_engine_profiles], [copy.name, created.name])
        all_assigned = self.member.dai_engine_profile_client.list_all_assigned_dai_engine_profiles(parent=self.workspace, page_size=1)
        self.assertEqual([p.name for p in all_assigned], [copy.name, created.name])

        self.assertIsNone(profiles.delete_dai_engine_profile(name=copy.name))
        with self.assertApiError("NOT_FOUND", 404):
            profiles.get_dai_engine_profile(name=copy.name)

    def test_members_may_read_but_not_write(self) -> None:
        members = self.member.dai_engine_profile_client
        demo = members.get_dai_engine_profile(name="workspaces/global/daiEngineProfiles/default")
        self.assertTrue(demo.enabled)
        with self.assertApiError("PERMISSION_DENIED", 403):
            members.create_dai_engine_profile(parent=self.workspace, dai_engine_profile=DAIEngineProfile(), dai_engine_profile_id="x")

    def test_invalid_constraint_is_rejected(self) -> None:
        with self.assertApiError("INVALID_ARGUMENT", 400) as expect:
            self.admin.dai_engine_profile_client.create_dai_engine_profile(
                parent=self.workspace,
                dai_engine_profile=DAIEngineProfile(cpu_constraint=ProfileConstraintNumeric(min=4, default=1)),
                dai_engine_profile_id="bad",
            )
        self.assertTrue(expect.error.message)

    def test_malformed_names_fail_before_sending(self) -> None:
        with self.assertRaisesRegex(ValueError, "workspaces/\\*"):
            self.admin.dai_engine_profile_client.list_dai_engine_profiles(parent="global")


@requires("h2o_engine_profile")
class H2OEngineProfileClientTest(CatalogueTestCase):
    def test_profile_lifecycle(self) -> None:
        profiles = self.admin.h2o_engine_profile_client
        created = profiles.create_h2o_engine_profile(
            parent=self.workspace,
            h2o_engine_profile=H2OEngineProfile(
                display_name="Cluster",
                enabled=True,
                node_count_constraint=ProfileConstraintNumeric(min=1, default=2, max=4),
                memory_bytes_constraint=ProfileConstraintNumeric(min="2Gi", default="8Gi"),
                java_options="-Xss4m",
            ),
            h2o_engine_profile_id="cluster",
        )
        self.assertEqual(created.node_count_constraint, ProfileConstraintNumeric(min=1, default=2, max=4))
        self.assertEqual(created.memory_bytes_constraint.default, "8Gi")
        self.assertEqual(profiles.get_h2o_engine_profile(name=created.name), created)
        created.java_options = "-Xss8m"
        self.assertEqual(profiles.update_h2o_engine_profile(created, update_mask=["java_options"]).java_options, "-Xss8m")
        copy = profiles.copy_h2o_engine_profile(name=created.name, parent=self.workspace, h2o_engine_profile_id="cluster-2")
        self.assertEqual(copy.java_options, "-Xss8m")
        page = profiles.list_h2o_engine_profiles(parent=self.workspace)
        self.assertEqual(len(page.h2o_engine_profiles), 2)
        self.assertEqual(len(profiles.list_all_h2o_engine_profiles(parent=self.workspace, page_size=1)), 2)
        members = self.member.h2o_engine_profile_client
        self.assertEqual(len(members.list_assigned_h2o_engine_profiles(parent=self.workspace).h2o_engine_profiles), 2)
        self.assertEqual(len(members.list_all_assigned_h2o_engine_profiles(parent=self.workspace, page_size=1)), 2)
        profiles.delete_h2o_engine_profile(name=copy.name)
        self.assertEqual([p.name for p in profiles.list_all_h2o_engine_profiles(parent=self.workspace)], [created.name])


@requires("notebook_engine_profile")
class NotebookEngineProfileClientTest(CatalogueTestCase):
    def test_profile_lifecycle(self) -> None:
        profiles = self.admin.notebook_engine_profile_client
        created = profiles.create_notebook_engine_profile(
            parent=self.workspace,
            notebook_engine_profile=NotebookEngineProfile(
                display_name="Notebooks",
                enabled=True,
                storage_bytes_constraint=ProfileConstraintNumeric(min="1Gi", default="10Gi", max="1Ti"),
                sync_git_repository_enabled=True,
                git_repository="https://example.com/repo.git",
            ),
            notebook_engine_profile_id="notebooks",
        )
        self.assertEqual(created.storage_bytes_constraint.max, "1Ti")
        self.assertEqual((created.git_ref, created.git_directory_name), ("HEAD", "Example"))
        self.assertEqual(profiles.get_notebook_engine_profile(name=created.name), created)
        created.priority = 7
        self.assertEqual(profiles.update_notebook_engine_profile(created, update_mask="priority").priority, 7)
        copy = profiles.copy_notebook_engine_profile(name=created.name, parent=self.workspace, notebook_engine_profile_id="nb-2")
        self.assertEqual(copy.git_repository, "https://example.com/repo.git")
        self.assertEqual(len(profiles.list_notebook_engine_profiles(parent=self.workspace).notebook_engine_profiles), 2)
        self.assertEqual(len(profiles.list_all_notebook_engine_profiles(parent=self.workspace, page_size=1)), 2)
        members = self.member.notebook_engine_profile_client
        self.assertEqual(len(members.list_assigned_notebook_engine_profiles(parent=self.workspace).notebook_engine_profiles), 2)
        self.assertEqual(len(members.list_all_assigned_notebook_engine_profiles(parent=self.workspace)), 2)
        profiles.delete_notebook_engine_profile(name=copy.name)
        with self.assertApiError("NOT_FOUND", 404):
            profiles.delete_notebook_engine_profile(name=copy.name)


@requires("dai_engine_version")
class DAIEngineVersionClientTest(CatalogueTestCase):
    def test_version_lifecycle_and_aliases(self) -> None:
        versions = self.admin.dai_engine_version_client
        old = versions.create_dai_engine_version(
            parent=self.workspace,
            dai_engine_version=DAIEngineVersion(image="h2oai/dai:1.10.6", image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_ALWAYS),
            dai_engine_version_id="1.10.6",
        )
        new = versions.create_dai_engine_version(
            parent=self.workspace,
            dai_engine_version=DAIEngineVersion(image="h2oai/dai:1.11.0", image_pull_secrets=["regcred"]),
            dai_engine_version_id="1.11.0",
        )
        self.assertEqual(old.image_pull_policy, ImagePullPolicy.IMAGE_PULL_POLICY_ALWAYS)
        self.assertEqual(new.image_pull_secrets, ["regcred"])

        after = versions.assign_dai_engine_version_aliases(name=old.name, aliases=["latest", "stable"])
        self.assertEqual({v.name: v.aliases for v in after}, {old.name: ["latest", "stable"], new.name: []})
        after = versions.assign_dai_engine_version_aliases(name=new.name, aliases=["latest"])
        self.assertEqual({v.name: sorted(v.aliases) for v in after}, {old.name: ["stable"], new.name: ["latest"]})
        self.assertEqual(versions.get_dai_engine_version(name=f"{self.workspace}/daiEngineVersions/latest").name, new.name)

        old.deprecated = True
        self.assertTrue(versions.update_dai_engine_version(old, update_mask="deprecated").deprecated)
        self.assertEqual(len(versions.list_dai_engine_versions(parent=self.workspace).dai_engine_versions), 2)
        deprecated = versions.list_all_dai_engine_versions(parent=self.workspace, filter="deprecated = true")
        self.assertEqual([v.name for v in deprecated], [old.name])
        versions.delete_dai_engine_version(name=old.name)
        self.assertEqual([v.name for v in versions.list_all_dai_engine_versions(parent=self.workspace, page_size=1)], [new.name])

    def test_demo_catalogue_has_latest(self) -> None:
        latest = self.member.dai_engine_version_client.get_dai_engine_version(name="workspaces/global/daiEngineVersions/latest")
        self.assertIn("latest", latest.aliases)


@requires("h2o_engine_version")
class H2OEngineVersionClientTest(CatalogueTestCase):
    def test_version_lifecycle_and_aliases(self) -> None:
        versions = self.admin.h2o_engine_version_client
        created = versions.create_h2o_engine_version(
            parent=self.workspace, h2o_engine_version=H2OEngineVersion(image="h2oai/h2o:3.46.0"), h2o_engine_version_id="3.46.0"
        )
        assigned = versions.assign_h2o_engine_version_aliases(name=created.name, aliases=["latest"])
        self.assertEqual([v.aliases for v in assigned], [["latest"]])
        created = versions.get_h2o_engine_version(name=created.name)
        created.image = "h2oai/h2o:3.46.0.1"
        self.assertEqual(versions.update_h2o_engine_version(created, update_mask="image").image, "h2oai/h2o:3.46.0.1")
        self.assertEqual(len(versions.list_h2o_engine_versions(parent=self.workspace).h2o_engine_versions), 1)
        self.assertEqual(versions.list_all_h2o_engine_versions(parent=self.workspace)[0].aliases, ["latest"])
        cleared = versions.assign_h2o_engine_version_aliases(name=created.name, aliases=[])
        self.assertEqual(cleared[0].aliases, [])
        versions.delete_h2o_engine_version(name=created.name)
        self.assertEqual(versions.list_all_h2o_engine_versions(parent=self.workspace), [])


@requires("notebook_engine_image")
class NotebookEngineImageClientTest(CatalogueTestCase):
    def test_image_lifecycle(self) -> None:
        images = self.admin.notebook_engine_image_client
        created = images.create_notebook_engine_image(
            parent=self.workspace,
            notebook_engine_image=NotebookEngineImage(display_name="Jupyter", image="quay.io/jupyter/base-notebook", enabled=True),
            notebook_engine_image_id="jupyter",
        )
        self.assertEqual(images.get_notebook_engine_image(name=created.name), created)
        created.enabled = False
        self.assertFalse(images.update_notebook_engine_image(created, update_mask="enabled").enabled)
        self.assertEqual(len(images.list_notebook_engine_images(parent=self.workspace).notebook_engine_images), 1)
        self.assertEqual([i.name for i in images.list_all_notebook_engine_images(parent=self.workspace)], [created.name])
        images.delete_notebook_engine_image(name=created.name)
        self.assertEqual(images.list_all_notebook_engine_images(parent=self.workspace), [])


@requires("sandbox_engine_image")
class SandboxEngineImageClientTest(CatalogueTestCase):
    def test_image_lifecycle(self) -> None:
        images = self.admin.sandbox_engine_image_client
        created = images.create_sandbox_engine_image(
            parent=self.workspace,
            sandbox_engine_image=SandboxEngineImage(display_name="Python", image="docker.io/library/python:3.12-slim", enabled=True),
            sandbox_engine_image_id="python",
        )
        self.assertEqual(images.get_sandbox_engine_image(name=created.name).image, "docker.io/library/python:3.12-slim")
        created.display_name = "Python 3.12"
        self.assertEqual(images.update_sandbox_engine_image(created, update_mask="display_name").display_name, "Python 3.12")
        self.assertEqual(len(images.list_sandbox_engine_images(parent=self.workspace).sandbox_engine_images), 1)
        self.assertEqual(len(images.list_all_sandbox_engine_images(parent=self.workspace)), 1)
        images.delete_sandbox_engine_image(name=created.name)
        with self.assertApiError("NOT_FOUND", 404):
            images.get_sandbox_engine_image(name=created.name)


@requires("sandbox_engine_template")
class SandboxEngineTemplateClientTest(CatalogueTestCase):
    def test_template_lifecycle(self) -> None:
        templates = self.admin.sandbox_engine_template_client
        created = templates.create_sandbox_engine_template(
            parent=self.workspace,
            sandbox_engine_template=SandboxEngineTemplate(
                display_name="Tiny",
                milli_cpu_limit=500,
                memory_bytes_limit="512Mi",
                storage_bytes=5 * 1000**3,
                environmental_variables={"LANG": "C.UTF-8"},
                max_idle_duration="30m",
                enabled=True,
            ),
            sandbox_engine_template_id="tiny",
        )
        self.assertEqual((created.memory_bytes_limit, created.storage_bytes, created.max_idle_duration), ("512Mi", "5G", "30m"))
        self.assertEqual(created.environmental_variables, {"LANG": "C.UTF-8"})
        self.assertEqual(templates.get_sandbox_engine_template(name=created.name), created)
        created.max_idle_duration = 7200
        self.assertEqual(templates.update_sandbox_engine_template(created, update_mask="max_idle_duration").max_idle_duration, "2h")
        self.assertEqual(len(templates.list_sandbox_engine_templates(parent=self.workspace).sandbox_engine_templates), 1)
        self.assertEqual(len(templates.list_all_sandbox_engine_templates(parent=self.workspace)), 1)
        templates.delete_sandbox_engine_template(name=created.name)
        self.assertEqual(templates.list_all_sandbox_engine_templates(parent=self.workspace), [])


@requires("secret")
class SecretClientTest(CatalogueTestCase):
    def test_secret_and_versions(self) -> None:
        secrets = self.member.secret_client
        secret = secrets.create_secret(
            parent=self.workspace, secret=Secret(display_name="Database", annotations={"team": "a"}), secret_id="db"
        )
        self.assertEqual(secret.name, f"{self.workspace}/secrets/db")
        self.assertEqual(secrets.get_secret(name=secret.name).annotations, {"team": "a"})
        first = secrets.add_secret_version(parent=secret.name, secret_version=SecretVersion(value=b"one"))
        second = secrets.add_secret_version(parent=secret.name, secret_version=SecretVersion(value="two"))
        self.assertEqual((first.name, second.name), (f"{secret.name}/versions/1", f"{secret.name}/versions/2"))
        self.assertEqual(second.value, b"", "values are never returned")
        self.assertEqual(secrets.get_secret_version(name=f"{secret.name}/versions/latest").name, second.name)
        self.assertEqual(len(secrets.list_secret_versions(parent=secret.name).secret_versions), 2)
        self.assertEqual(len(secrets.list_all_secret_versions(parent=secret.name, page_size=1)), 2)
        self.assertEqual([s.name for s in secrets.list_secrets(parent=self.workspace).secrets], [secret.name])
        self.assertEqual([s.name for s in secrets.list_all_secrets(parent=self.workspace)], [secret.name])
        secrets.delete_secret(name=secret.name)
        self.assertEqual(secrets.list_all_secrets(parent=self.workspace), [])


if __name__ == "__main__":
    unittest.main()
