"""Sandbox engine templates through ``SandboxEngineTemplateClient``.

Every method of the client: an administrator writes, a member reads, each test in a workspace of
its own (``apply_*`` and ``delete_all_*`` empty the workspace they are given).
"""

from __future__ import annotations

import unittest
from typing import Any

from . import _conformance as oc

from h2o_engine_manager.clients.sandbox_engine_template.template import SandboxEngineTemplate  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_template.template_config import SandboxEngineTemplateConfig  # noqa: E402


def fields(n: int) -> dict[str, Any]:
    return dict(
        display_name=f"Template {n}",
        milli_cpu_request=500,
        milli_cpu_limit=1000 * (n + 1),
        gpu_resource="nvidia.com/gpu",
        gpu=0,
        memory_bytes_request="1Gi",
        memory_bytes_limit=f"{2 * (n + 1)}Gi",
        storage_bytes="10Gi",
        environmental_variables={"MODE": f"m{n}"},
        yaml_pod_template_spec="spec:\n  priorityClassName: oc\n",
        enabled=n != 1,
        max_idle_duration="1h",
        max_running_duration="8h",
    )


class SandboxEngineTemplateTest(oc.ConformanceCase):
    def setUp(self) -> None:
        self.admin = oc.admin().sandbox_engine_template_client
        self.member = oc.member().sandbox_engine_template_client
        self.workspace = f"workspaces/{oc.unique('oc-sbtmpl')}"
        self.addCleanup(self.admin.delete_all_sandbox_engine_templates, parent=self.workspace)

    def name(self, template_id: str) -> str:
        return f"{self.workspace}/sandboxEngineTemplates/{template_id}"

    def create(self, n: int, template_id: str, **overrides: Any) -> SandboxEngineTemplate:
        return self.admin.create_sandbox_engine_template(
            parent=self.workspace, sandbox_engine_template=SandboxEngineTemplate(**dict(fields(n), **overrides)),
            sandbox_engine_template_id=template_id)

    def assertTemplate(self, template: SandboxEngineTemplate, name: str, expected: dict[str, Any]) -> None:
        self.assertEqual(template.name, name)
        for field, value in expected.items():
            self.assertEqual(getattr(template, field), value, field)
        self.assertIsNotNone(template.create_time)
        self.assertEqual(template.creator, f"users/{oc.ADMIN}")

    def test_create_get_update_delete_round_trip(self) -> None:
        created = self.create(0, "small")
        self.assertTemplate(created, self.name("small"), fields(0))
        got = self.member.get_sandbox_engine_template(name=self.name("small"))
        self.assertTemplate(got, self.name("small"), fields(0))

        got.display_name = "Bigger"
        got.milli_cpu_limit = 4000
        got.memory_bytes_limit = "8Gi"
        got.max_idle_duration = "30m"
        got.max_running_duration = "2d"
        got.environmental_variables = {"MODE": "big", "EXTRA": "1"}
        changed = dict(fields(0), display_name="Bigger", milli_cpu_limit=4000, memory_bytes_limit="8Gi", max_idle_duration="30m",
                       max_running_duration="2d", environmental_variables={"MODE": "big", "EXTRA": "1"})
        updated = self.admin.update_sandbox_engine_template(sandbox_engine_template=got)
        self.assertTemplate(updated, self.name("small"), changed)
        self.assertEqual(updated.updater, f"users/{oc.ADMIN}")
        updated.display_name = "Masked"
        updated.gpu = 1
        masked = self.admin.update_sandbox_engine_template(sandbox_engine_template=updated, update_mask="display_name")
        self.assertTemplate(masked, self.name("small"), dict(changed, display_name="Masked"))

        self.assertIsNone(self.admin.delete_sandbox_engine_template(name=self.name("small")))
        self.assertApiError(404, self.member.get_sandbox_engine_template, name=self.name("small"))

    def test_requests_default_to_limits(self) -> None:
        created = self.create(0, "defaults", milli_cpu_request=0, memory_bytes_request="0")
        self.assertEqual((created.milli_cpu_request, created.memory_bytes_request), (1000, "2Gi"))

    def test_lists_page(self) -> None:
        for n, template_id in enumerate(("a", "b", "c")):
            self.create(n, template_id)
        expected = [self.name(i) for i in ("a", "b", "c")]
        first = self.member.list_sandbox_engine_templates(parent=self.workspace, page_size=2)
        self.assertEqual(len(first.sandbox_engine_templates), 2)
        self.assertNotEqual(first.next_page_token, "")
        second = self.member.list_sandbox_engine_templates(parent=self.workspace, page_size=2, page_token=first.next_page_token)
        self.assertEqual(second.next_page_token, "")
        self.assertEqual(sorted(t.name for t in first.sandbox_engine_templates + second.sandbox_engine_templates), expected)
        self.assertEqual(sorted(t.name for t in self.member.list_all_sandbox_engine_templates(parent=self.workspace)), expected)
        self.assertIsNone(self.admin.delete_all_sandbox_engine_templates(parent=self.workspace))
        self.assertEqual(self.member.list_all_sandbox_engine_templates(parent=self.workspace), [])

    def test_apply_configs_replaces_the_workspace(self) -> None:
        self.create(0, "old")
        configs = [SandboxEngineTemplateConfig(sandbox_engine_template_id=i, **fields(n)) for n, i in ((1, "one"), (2, "two"))]
        applied = self.admin.apply_sandbox_engine_template_configs(configs=configs, parent=self.workspace)
        self.assertEqual(sorted(t.name for t in applied), [self.name("one"), self.name("two")])
        for template in applied:
            self.assertTemplate(template, template.name, fields(1 if template.name.endswith("one") else 2))

    def test_errors(self) -> None:
        self.create(0, "taken")
        self.assertApiError(409, self.create, 1, "taken")
        error = self.assertApiError(400, self.create, 1, "bad", milli_cpu_request=4000, milli_cpu_limit=1000)
        self.assertIn("milli_cpu", str(error))
        self.assertApiError(404, self.admin.get_sandbox_engine_template, name=self.name("missing"))
        self.assertApiError(404, self.admin.delete_sandbox_engine_template, name=self.name("missing"))
        self.assertApiError(403, self.member.create_sandbox_engine_template, parent=self.workspace,
                            sandbox_engine_template=SandboxEngineTemplate(**fields(1)), sandbox_engine_template_id="mine")
        self.assertApiError(403, self.member.delete_sandbox_engine_template, name=self.name("taken"))


if __name__ == "__main__":
    unittest.main()
