"""Sandbox engine images and templates as the official integration tests use them.

What those tests assert beyond the round trips of ``test_sandbox_templates`` and
``test_catalogue_versions_images``: lists answer the newest first (also what ``apply_*``
returns), pages of one follow that order, the error bodies' wording ("not found",
"already exists"), members are refused every write (403), a created resource has no updater
until its first update, and a masked update changes only the masked field while the
update time and updater follow. Each test writes in a workspace of its own.
"""

from __future__ import annotations

import json
import time
import unittest
from typing import Any

from . import _conformance as oc

from h2o_engine_manager.clients.base.image_pull_policy import ImagePullPolicy  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_image.image import SandboxEngineImage  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_image.image_config import SandboxEngineImageConfig  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_template.template import SandboxEngineTemplate  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_template.template_config import SandboxEngineTemplateConfig  # noqa: E402

ALWAYS = ImagePullPolicy.IMAGE_PULL_POLICY_ALWAYS
NEVER = ImagePullPolicy.IMAGE_PULL_POLICY_NEVER
IF_NOT_PRESENT = ImagePullPolicy.IMAGE_PULL_POLICY_IF_NOT_PRESENT


def message(error: Any) -> str:
    return json.loads(error.body)["message"]


class Common(oc.ConformanceCase):
    def assertCreatedBy(self, created: Any, before: float) -> None:
        """Made by the administrator just now; nobody updated it yet."""
        self.assertLessEqual(before, created.create_time.timestamp())
        self.assertLessEqual(created.create_time.timestamp(), time.time())
        self.assertIsNone(created.update_time)
        self.assertEqual((created.creator, created.updater, created.updater_display_name), (f"users/{oc.ADMIN}", "", ""))
        self.assertNotEqual(created.creator_display_name, "")

    def assertUpdatedBy(self, updated: Any, created: Any, before: float) -> None:
        """Updated by its creator just now; the creation is unchanged."""
        self.assertEqual(updated.create_time, created.create_time)
        self.assertIsNotNone(updated.update_time)
        self.assertNotEqual(updated.update_time, updated.create_time)
        self.assertLessEqual(before, updated.update_time.timestamp())
        self.assertLessEqual(updated.update_time.timestamp(), time.time())
        self.assertEqual((updated.creator, updated.updater), (created.creator, created.creator))
        self.assertEqual((updated.creator_display_name, updated.updater_display_name),
                         (created.creator_display_name, created.creator_display_name))


class SandboxEngineImageBehaviourTest(Common):
    def setUp(self) -> None:
        self.admin = oc.admin().sandbox_engine_image_client
        self.member = oc.member().sandbox_engine_image_client
        self.workspace = f"workspaces/{oc.unique('oc-sbimg')}"
        self.addCleanup(self.admin.delete_all_sandbox_engine_images, parent=self.workspace)

    def name(self, image_id: str) -> str:
        return f"{self.workspace}/sandboxEngineImages/{image_id}"

    def create(self, image_id: str, **fields: Any) -> SandboxEngineImage:
        return self.admin.create_sandbox_engine_image(parent=self.workspace, sandbox_engine_image=SandboxEngineImage(**fields),
                                                      sandbox_engine_image_id=image_id)

    def test_create_refuses_members_and_repeats(self) -> None:
        fields = dict(image="my-image", display_name="display my image", enabled=True, image_pull_policy=ALWAYS,
                      image_pull_secrets=["secret1", "secret2"])
        self.assertApiError(403, self.member.create_sandbox_engine_image, parent=self.workspace,
                            sandbox_engine_image=SandboxEngineImage(**fields), sandbox_engine_image_id="i1")
        before = time.time()
        created = self.create("i1", **fields)
        self.assertEqual((created.name, created.display_name, created.enabled, created.image_pull_policy, created.image_pull_secrets),
                         (self.name("i1"), "display my image", True, ALWAYS, ["secret1", "secret2"]))
        self.assertCreatedBy(created, before)
        error = self.assertApiError(409, self.create, "i1", **fields)
        self.assertIn("already exists", message(error))

    def test_get_and_delete_say_not_found(self) -> None:
        self.create("i1", image="my-image", image_pull_policy=IF_NOT_PRESENT, image_pull_secrets=["secret1", "secret2"])
        error = self.assertApiError(404, self.member.get_sandbox_engine_image, name=self.name("not-found"))
        self.assertIn("not found", message(error))
        got = self.member.get_sandbox_engine_image(name=self.name("i1"))
        self.assertEqual((got.image_pull_policy, got.image_pull_secrets), (IF_NOT_PRESENT, ["secret1", "secret2"]))
        self.assertApiError(403, self.member.delete_sandbox_engine_image, name=self.name("i1"))
        self.assertIsNone(self.admin.delete_sandbox_engine_image(name=self.name("i1")))
        error = self.assertApiError(404, self.admin.get_sandbox_engine_image, name=self.name("i1"))
        self.assertIn("not found", message(error))

    def test_lists_newest_first_in_pages(self) -> None:
        for image_id, policy in (("img1", ALWAYS), ("img2", NEVER), ("img3", IF_NOT_PRESENT)):
            self.create(image_id, image=f"my-{image_id}", image_pull_policy=policy)
        newest_first = [self.name(i) for i in ("img3", "img2", "img1")]
        self.assertEqual([i.name for i in self.member.list_all_sandbox_engine_images(parent=self.workspace)], newest_first)
        token, seen = "", []
        for expected in newest_first:
            page = self.admin.list_sandbox_engine_images(parent=self.workspace, page_size=1, page_token=token)
            self.assertEqual([i.name for i in page.sandbox_engine_images], [expected])
            token = page.next_page_token
            seen.append(token)
        self.assertNotIn("", seen[:-1])
        self.assertEqual(seen[-1], "")

    def test_apply_answers_newest_first_with_defaults(self) -> None:
        self.create("img1", image="my-image-1", display_name="display my image", image_pull_policy=ALWAYS)
        configs = [SandboxEngineImageConfig(sandbox_engine_image_id=f"i{n}", image=f"my-image-{n}", image_pull_policy=IF_NOT_PRESENT)
                   for n in (1, 2, 3)]
        applied = self.admin.apply_sandbox_engine_image_configs(configs=configs, parent=self.workspace)
        self.assertEqual([i.name for i in applied], [self.name("i3"), self.name("i2"), self.name("i1")])
        self.assertEqual([(i.image, i.image_pull_policy, i.enabled, i.display_name) for i in applied],
                         [(f"my-image-{n}", IF_NOT_PRESENT, True, "") for n in (3, 2, 1)])

    def test_masked_then_full_update(self) -> None:
        created = self.create("i1", image="my-image", display_name="display original", enabled=True, image_pull_policy=ALWAYS,
                              image_pull_secrets=["secret1", "secret2"])
        change = dict(image="my-image-2", display_name="this should not be updated", enabled=False, image_pull_policy=NEVER,
                      image_pull_secrets=["secret3"])
        self.assertApiError(403, self.member.update_sandbox_engine_image,
                            sandbox_engine_image=SandboxEngineImage(name=created.name, **change))
        before = time.time()
        masked = self.admin.update_sandbox_engine_image(sandbox_engine_image=SandboxEngineImage(name=created.name, **change),
                                                        update_mask="image")
        self.assertEqual((masked.image, masked.display_name, masked.enabled, masked.image_pull_policy, masked.image_pull_secrets),
                         ("my-image-2", "display original", True, ALWAYS, ["secret1", "secret2"]))
        self.assertUpdatedBy(masked, created, before)
        full = dict(image="my-image-3", display_name="display updated", enabled=False, image_pull_policy=IF_NOT_PRESENT,
                    image_pull_secrets=["secret3", "secret4"])
        before = time.time()
        updated = self.admin.update_sandbox_engine_image(sandbox_engine_image=SandboxEngineImage(name=created.name, **full))
        self.assertEqual((updated.image, updated.display_name, updated.enabled, updated.image_pull_policy, updated.image_pull_secrets),
                         tuple(full.values()))
        self.assertUpdatedBy(updated, created, before)


def T(**fields: Any) -> SandboxEngineTemplate:
    """A template; 1.10.2 of the client requires the running limit the official tests leave out."""
    return SandboxEngineTemplate(**dict(dict(max_running_duration="8h"), **fields))


def template_fields(n: int) -> dict[str, Any]:
    return dict(memory_bytes_limit=f"{2 ** n}Gi", max_idle_duration=f"{n}h", display_name=f"template {n}",
                milli_cpu_request=500 * 2 ** (n - 1), milli_cpu_limit=1000 * 2 ** (n - 1))


class SandboxEngineTemplateBehaviourTest(Common):
    def setUp(self) -> None:
        self.admin = oc.admin().sandbox_engine_template_client
        self.member = oc.member().sandbox_engine_template_client
        self.workspace = f"workspaces/{oc.unique('oc-sbtpl')}"
        self.addCleanup(self.admin.delete_all_sandbox_engine_templates, parent=self.workspace)

    def name(self, template_id: str) -> str:
        return f"{self.workspace}/sandboxEngineTemplates/{template_id}"

    def create(self, template_id: str, **fields: Any) -> SandboxEngineTemplate:
        return self.admin.create_sandbox_engine_template(parent=self.workspace, sandbox_engine_template=T(**fields),
                                                         sandbox_engine_template_id=template_id)

    def test_create_refuses_members_and_repeats(self) -> None:
        fields = dict(memory_bytes_limit="2Gi", max_idle_duration="1h", display_name="display my template", milli_cpu_request=500,
                      milli_cpu_limit=1000, gpu_resource="nvidia.com/gpu", gpu=1, memory_bytes_request="1Gi", storage_bytes="10Gi",
                      environmental_variables={"KEY1": "VALUE1", "KEY2": "VALUE2"}, enabled=True)
        self.assertApiError(403, self.member.create_sandbox_engine_template, parent=self.workspace,
                            sandbox_engine_template=T(**fields), sandbox_engine_template_id="t1")
        before = time.time()
        created = self.create("t1", **fields)
        for field, value in fields.items():
            self.assertEqual(getattr(created, field), value, field)
        self.assertCreatedBy(created, before)
        error = self.assertApiError(409, self.create, "t1", **fields)
        self.assertIn("already exists", message(error))

    def test_get_and_delete_say_not_found(self) -> None:
        self.create("t1", memory_bytes_limit="2Gi", max_idle_duration="1h", milli_cpu_request=500, milli_cpu_limit=1000,
                    memory_bytes_request="1Gi", storage_bytes="10Gi", enabled=True)
        error = self.assertApiError(404, self.member.get_sandbox_engine_template, name=self.name("not-found"))
        self.assertIn("not found", message(error))
        got = self.member.get_sandbox_engine_template(name=self.name("t1"))
        self.assertEqual((got.milli_cpu_request, got.milli_cpu_limit, got.memory_bytes_request, got.memory_bytes_limit,
                          got.storage_bytes, got.max_idle_duration), (500, 1000, "1Gi", "2Gi", "10Gi", "1h"))
        self.assertApiError(403, self.member.delete_sandbox_engine_template, name=self.name("t1"))
        self.admin.delete_sandbox_engine_template(name=self.name("t1"))
        error = self.assertApiError(404, self.admin.get_sandbox_engine_template, name=self.name("t1"))
        self.assertIn("not found", message(error))

    def test_lists_newest_first_in_pages(self) -> None:
        for n in (1, 2, 3):
            self.create(f"tmpl{n}", **template_fields(n))
        newest_first = [self.name(f"tmpl{n}") for n in (3, 2, 1)]
        self.assertEqual([t.name for t in self.member.list_all_sandbox_engine_templates(parent=self.workspace)], newest_first)
        token, seen = "", []
        for expected in newest_first:
            page = self.admin.list_sandbox_engine_templates(parent=self.workspace, page_size=1, page_token=token)
            self.assertEqual([t.name for t in page.sandbox_engine_templates], [expected])
            token = page.next_page_token
            seen.append(token)
        self.assertNotIn("", seen[:-1])
        self.assertEqual(seen[-1], "")

    def test_apply_answers_newest_first(self) -> None:
        self.create("tmpl1", **template_fields(1))
        configs = [SandboxEngineTemplateConfig(sandbox_engine_template_id=f"t{n}", max_running_duration="8h",
                                               **dict(template_fields(n), display_name=f"config {n}"))
                   for n in (1, 2, 3)]
        applied = self.admin.apply_sandbox_engine_template_configs(configs=configs, parent=self.workspace)
        self.assertEqual([t.name for t in applied], [self.name(f"t{n}") for n in (3, 2, 1)])
        self.assertEqual([(t.display_name, t.memory_bytes_limit, t.max_idle_duration, t.milli_cpu_limit, t.enabled) for t in applied],
                         [(f"config {n}", f"{2 ** n}Gi", f"{n}h", 1000 * 2 ** (n - 1), True) for n in (3, 2, 1)])

    def test_masked_then_full_update(self) -> None:
        created = self.create("t1", memory_bytes_limit="2Gi", max_idle_duration="1h", display_name="display original",
                              milli_cpu_request=500, milli_cpu_limit=1000, gpu_resource="nvidia.com/gpu", gpu=1,
                              memory_bytes_request="1Gi", storage_bytes="10Gi", environmental_variables={"KEY1": "VALUE1"}, enabled=True)
        change = dict(memory_bytes_limit="4Gi", max_idle_duration="2h", display_name="display updated", milli_cpu_request=1000,
                      milli_cpu_limit=2000, memory_bytes_request="2Gi", storage_bytes="20Gi", enabled=False)
        self.assertApiError(403, self.member.update_sandbox_engine_template,
                            sandbox_engine_template=T(name=created.name, **change))
        before = time.time()
        masked = self.admin.update_sandbox_engine_template(sandbox_engine_template=T(name=created.name, **change),
                                                           update_mask="display_name")
        self.assertEqual((masked.display_name, masked.milli_cpu_request, masked.milli_cpu_limit, masked.memory_bytes_request,
                          masked.memory_bytes_limit, masked.storage_bytes, masked.max_idle_duration, masked.enabled),
                         ("display updated", 500, 1000, "1Gi", "2Gi", "10Gi", "1h", True))
        self.assertUpdatedBy(masked, created, before)
        full = dict(memory_bytes_limit="8Gi", max_idle_duration="4h", display_name="display fully updated", milli_cpu_request=2000,
                    milli_cpu_limit=4000, gpu_resource="amd.com/gpu", gpu=2, memory_bytes_request="4Gi", storage_bytes="50Gi",
                    environmental_variables={"KEY2": "VALUE2", "KEY3": "VALUE3"}, enabled=False)
        before = time.time()
        updated = self.admin.update_sandbox_engine_template(sandbox_engine_template=T(name=created.name, **full))
        for field, value in full.items():
            self.assertEqual(getattr(updated, field), value, field)
        self.assertUpdatedBy(updated, created, before)


if __name__ == "__main__":
    unittest.main()
