"""The catalogue clients' official helpers and positional parameters, against the real server.

``delete_all_*``, ``apply_*_configs`` (deletes every resource of the workspace, then creates the
given ones) and ``get_first_*`` as the official client has them, and the standard methods called
positionally in the official order: ``list_*(parent, page_size, page_token)``,
``update_*(resource, update_mask)``, ``create_*(parent, resource, id)``,
``assign_*_aliases(name, aliases)``. Every test works in a workspace of its own. (The signatures
themselves are compared by ``tests/official_surface.py``.)
"""

from __future__ import annotations

import inspect
import unittest

from tests import support
from tests.support import requires, unique
from ai_engine_manager.dai_engine_profile.profile import DAIEngineProfile
from ai_engine_manager.dai_engine_version.version import DAIEngineVersion
from ai_engine_manager.h2o_engine_profile.profile import H2OEngineProfile
from ai_engine_manager.h2o_engine_version.version import H2OEngineVersion
from ai_engine_manager.notebook_engine_image.image import NotebookEngineImage
from ai_engine_manager.notebook_engine_profile.profile import NotebookEngineProfile
from ai_engine_manager.sandbox_engine_image.image import SandboxEngineImage
from ai_engine_manager.sandbox_engine_template.template import SandboxEngineTemplate


class _Config:
    """The shape of the official client's ``*Config`` classes: ``<resource>_id`` and ``to_<resource>()``."""

    def __init__(self, resource: str, resource_id: str, item: object) -> None:
        setattr(self, f"{resource}_id", resource_id)
        setattr(self, f"to_{resource}", lambda: item)


class HelpersTestCase(unittest.TestCase):
    admin = None
    member = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.admin = support.clients("py-admin", admin=True)
        cls.member = support.clients("alice")

    def setUp(self) -> None:
        self.workspace = "workspaces/" + unique("pyh")

    NAMES = ("old", "older", "by-name", "bare", "by-config", "only")
    VERSIONS = ("1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.3.0", "2.0.0")

    def check_helpers(self, resource: str, make, ops: dict, label: str = "display_name",  # type: ignore[no-untyped-def]
                      ids: tuple[str, ...] = NAMES) -> None:
        """Runs create/list/update positionally, then apply (twice) and delete_all. ``make(text)``
        builds a resource whose ``label`` field holds ``text``; ``ops`` holds the client's
        methods (``create``, ``list``, ``list_all``, ``update``, ``apply``, ``delete_all``) and
        ``items``, the name of a page's list."""
        old_id, older_id, name_id, bare_id, config_id, only_id = ids

        # Positional, in the official order.
        old = ops["create"](self.workspace, make("Old"), old_id)
        ops["create"](self.workspace, make("Older"), older_id)
        first = ops["list"](self.workspace, 1)
        self.assertEqual(len(getattr(first, ops["items"])), 1)
        self.assertTrue(first.next_page_token)
        second = ops["list"](self.workspace, 1, first.next_page_token)
        self.assertEqual(len(getattr(second, ops["items"])), 1)
        self.assertEqual(second.next_page_token, "")
        collection = old.name.split("/")[2]
        setattr(old, label, getattr(make("Renamed"), label))
        self.assertEqual(getattr(ops["update"](old, label), label), getattr(make("Renamed"), label))

        # apply: everything there is deleted, the configs are created in order.
        named = make("By name")
        named.name = f"{self.workspace}/{collection}/{name_id}"
        bare = make("Bare id")
        bare.name = bare_id
        applied = ops["apply"]([named, bare, _Config(resource, config_id, make("By config"))], self.workspace)
        self.assertEqual(
            sorted((i.name.rsplit("/", 1)[-1], getattr(i, label)) for i in applied),
            sorted([(name_id, getattr(make("By name"), label)), (bare_id, getattr(make("Bare id"), label)),
                    (config_id, getattr(make("By config"), label))]),
        )
        self.assertEqual(sorted(i.name for i in ops["list_all"](self.workspace)), sorted(i.name for i in applied))
        again = ops["apply"]([_Config(resource, only_id, make("Only"))], self.workspace)
        self.assertEqual([i.name for i in again], [f"{self.workspace}/{collection}/{only_id}"])

        with self.assertRaises(TypeError):
            ops["apply"]([object()], self.workspace)
        self.assertEqual(len(ops["list_all"](self.workspace)), 1, "a bad config is refused before anything is deleted")

        self.assertIsNone(ops["delete_all"](self.workspace))
        self.assertEqual(ops["list_all"](self.workspace), [])
        self.assertIsNone(ops["delete_all"](self.workspace))


@requires("dai_engine_profile")
class DAIEngineProfileHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.dai_engine_profile_client
        self.check_helpers("dai_engine_profile", lambda text: DAIEngineProfile(display_name=text, enabled=True), {
            "create": lambda *a: c.create_dai_engine_profile(*a),
            "list": lambda *a: c.list_dai_engine_profiles(*a),
            "list_all": lambda *a: c.list_all_dai_engine_profiles(*a),
            "update": lambda *a: c.update_dai_engine_profile(*a),
            "apply": lambda *a: c.apply_dai_engine_profile_configs(*a),
            "delete_all": lambda *a: c.delete_all_dai_engine_profiles(*a),
            "items": "dai_engine_profiles",
        })

    def test_get_first_reads_the_first_assigned(self) -> None:
        profiles = self.admin.dai_engine_profile_client
        self.assertIsNone(self.member.dai_engine_profile_client.get_first_dai_engine_profile(self.workspace))
        profiles.apply_dai_engine_profile_configs([
            DAIEngineProfile(name="second", display_name="Second", enabled=True, priority=2),
            DAIEngineProfile(name="first", display_name="First", enabled=True, priority=1),
            DAIEngineProfile(name="off", display_name="Disabled", enabled=False, priority=0),
        ], self.workspace)
        first = self.member.dai_engine_profile_client.get_first_dai_engine_profile(self.workspace)
        self.assertEqual(first.name, f"{self.workspace}/daiEngineProfiles/first")  # type: ignore[union-attr]
        assigned = self.member.dai_engine_profile_client.list_assigned_dai_engine_profiles(self.workspace, 1)
        self.assertEqual([p.name for p in assigned.dai_engine_profiles], [first.name])  # type: ignore[union-attr]

    def test_apply_defaults_to_global(self) -> None:
        parent = inspect.signature(type(self.admin.dai_engine_profile_client).apply_dai_engine_profile_configs).parameters["parent"]
        self.assertEqual(parent.default, "workspaces/global")


@requires("h2o_engine_profile")
class H2OEngineProfileHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.h2o_engine_profile_client
        self.check_helpers("h2o_engine_profile", lambda text: H2OEngineProfile(display_name=text, enabled=True), {
            "create": lambda *a: c.create_h2o_engine_profile(*a),
            "list": lambda *a: c.list_h2o_engine_profiles(*a),
            "list_all": lambda *a: c.list_all_h2o_engine_profiles(*a),
            "update": lambda *a: c.update_h2o_engine_profile(*a),
            "apply": lambda *a: c.apply_h2o_engine_profile_configs(*a),
            "delete_all": lambda *a: c.delete_all_h2o_engine_profiles(*a),
            "items": "h2o_engine_profiles",
        })

    def test_get_first(self) -> None:
        profiles = self.admin.h2o_engine_profile_client
        self.assertIsNone(profiles.get_first_h2o_engine_profile(self.workspace))
        profiles.apply_h2o_engine_profile_configs([H2OEngineProfile(name="only", enabled=True)], self.workspace)
        self.assertEqual(profiles.get_first_h2o_engine_profile(self.workspace).name,  # type: ignore[union-attr]
                         f"{self.workspace}/h2oEngineProfiles/only")


@requires("notebook_engine_profile")
class NotebookEngineProfileHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.notebook_engine_profile_client
        self.check_helpers("notebook_engine_profile", lambda text: NotebookEngineProfile(display_name=text, enabled=True), {
            "create": lambda *a: c.create_notebook_engine_profile(*a),
            "list": lambda *a: c.list_notebook_engine_profiles(*a),
            "list_all": lambda *a: c.list_all_notebook_engine_profiles(*a),
            "update": lambda *a: c.update_notebook_engine_profile(*a),
            "apply": lambda *a: c.apply_notebook_engine_profile_configs(*a),
            "delete_all": lambda *a: c.delete_all_notebook_engine_profiles(*a),
            "items": "notebook_engine_profiles",
        })


def _image_of(text: str) -> str:
    return text.replace(" ", "-").lower()


@requires("dai_engine_version")
class DAIEngineVersionHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.dai_engine_version_client
        self.check_helpers("dai_engine_version", lambda text: DAIEngineVersion(image=f"h2oai/dai:{_image_of(text)}"), {
            "create": lambda *a: c.create_dai_engine_version(*a),
            "list": lambda *a: c.list_dai_engine_versions(*a),
            "list_all": lambda *a: c.list_all_dai_engine_versions(*a),
            "update": lambda *a: c.update_dai_engine_version(*a),
            "apply": lambda *a: c.apply_dai_engine_version_configs(*a),
            "delete_all": lambda *a: c.delete_all_dai_engine_versions(*a),
            "items": "dai_engine_versions",
        }, label="image", ids=self.VERSIONS)

    def test_get_first_and_positional_aliases(self) -> None:
        versions = self.admin.dai_engine_version_client
        self.assertIsNone(versions.get_first_dai_engine_version(self.workspace))
        applied = versions.apply_dai_engine_version_configs([DAIEngineVersion(name="1.11.0", image="h2oai/dai:1.11.0")], self.workspace)
        after = versions.assign_dai_engine_version_aliases(applied[0].name, ["latest"])
        self.assertEqual([v.aliases for v in after], [["latest"]])
        self.assertEqual(versions.get_first_dai_engine_version(self.workspace).name, applied[0].name)  # type: ignore[union-attr]


@requires("h2o_engine_version")
class H2OEngineVersionHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.h2o_engine_version_client
        self.check_helpers("h2o_engine_version", lambda text: H2OEngineVersion(image=f"h2oai/h2o:{_image_of(text)}"), {
            "create": lambda *a: c.create_h2o_engine_version(*a),
            "list": lambda *a: c.list_h2o_engine_versions(*a),
            "list_all": lambda *a: c.list_all_h2o_engine_versions(*a),
            "update": lambda *a: c.update_h2o_engine_version(*a),
            "apply": lambda *a: c.apply_h2o_engine_version_configs(*a),
            "delete_all": lambda *a: c.delete_all_h2o_engine_versions(*a),
            "items": "h2o_engine_versions",
        }, label="image", ids=self.VERSIONS)

    def test_get_first_and_positional_aliases(self) -> None:
        versions = self.admin.h2o_engine_version_client
        self.assertIsNone(versions.get_first_h2o_engine_version(self.workspace))
        applied = versions.apply_h2o_engine_version_configs([H2OEngineVersion(name="3.46.0", image="h2oai/h2o:3.46.0")], self.workspace)
        self.assertEqual([v.aliases for v in versions.assign_h2o_engine_version_aliases(applied[0].name, ["latest"])], [["latest"]])
        self.assertEqual(versions.get_first_h2o_engine_version(self.workspace).name, applied[0].name)  # type: ignore[union-attr]


@requires("notebook_engine_image")
class NotebookEngineImageHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.notebook_engine_image_client
        self.check_helpers("notebook_engine_image",
                           lambda text: NotebookEngineImage(display_name=text, image="quay.io/jupyter/base-notebook", enabled=True), {
            "create": lambda *a: c.create_notebook_engine_image(*a),
            "list": lambda *a: c.list_notebook_engine_images(*a),
            "list_all": lambda *a: c.list_all_notebook_engine_images(*a),
            "update": lambda *a: c.update_notebook_engine_image(*a),
            "apply": lambda *a: c.apply_notebook_engine_image_configs(*a),
            "delete_all": lambda *a: c.delete_all_notebook_engine_images(*a),
            "items": "notebook_engine_images",
        })


@requires("sandbox_engine_image")
class SandboxEngineImageHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.sandbox_engine_image_client
        self.check_helpers("sandbox_engine_image",
                           lambda text: SandboxEngineImage(display_name=text, image="docker.io/library/python:3.12-slim", enabled=True), {
            "create": lambda *a: c.create_sandbox_engine_image(*a),
            "list": lambda *a: c.list_sandbox_engine_images(*a),
            "list_all": lambda *a: c.list_all_sandbox_engine_images(*a),
            "update": lambda *a: c.update_sandbox_engine_image(*a),
            "apply": lambda *a: c.apply_sandbox_engine_image_configs(*a),
            "delete_all": lambda *a: c.delete_all_sandbox_engine_images(*a),
            "items": "sandbox_engine_images",
        })


@requires("sandbox_engine_template")
class SandboxEngineTemplateHelpersTest(HelpersTestCase):
    def test_helpers(self) -> None:
        c = self.admin.sandbox_engine_template_client
        self.check_helpers("sandbox_engine_template", lambda text: SandboxEngineTemplate(
            display_name=text, milli_cpu_limit=500, memory_bytes_limit="512Mi", max_idle_duration="30m", enabled=True), {
            "create": lambda *a: c.create_sandbox_engine_template(*a),
            "list": lambda *a: c.list_sandbox_engine_templates(*a),
            "list_all": lambda *a: c.list_all_sandbox_engine_templates(*a),
            "update": lambda *a: c.update_sandbox_engine_template(*a),
            "apply": lambda *a: c.apply_sandbox_engine_template_configs(*a),
            "delete_all": lambda *a: c.delete_all_sandbox_engine_templates(*a),
            "items": "sandbox_engine_templates",
        })


if __name__ == "__main__":
    unittest.main()
