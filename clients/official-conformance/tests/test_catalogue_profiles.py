"""DAI, H2O and notebook engine profiles through the official client's profile clients.

Every method of ``DAIEngineProfileClient``, ``H2OEngineProfileClient`` and
``NotebookEngineProfileClient``: an administrator writes, a member reads. Each kind works in a
workspace of its own (``apply_*`` and ``delete_all_*`` empty the workspace they are given), so
the demo catalogue in ``workspaces/global`` that other modules create engines from stays as it is.
"""

from __future__ import annotations

import subprocess
import time
import unittest
from typing import Any

from . import _conformance as oc

import h2o_engine_manager  # noqa: E402

from h2o_engine_manager.clients.constraint.profile_constraint_duration import ProfileConstraintDuration  # noqa: E402
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import ProfileConstraintNumeric  # noqa: E402
from h2o_engine_manager.clients.convert.duration_convertor import duration_to_seconds  # noqa: E402
from h2o_engine_manager.clients.dai_engine_profile.config_editability import ConfigEditability  # noqa: E402
from h2o_engine_manager.clients.dai_engine_profile.dai_engine_profile import DAIEngineProfile  # noqa: E402
from h2o_engine_manager.clients.dai_engine_profile.dai_engine_profile_config import DAIEngineProfileConfig  # noqa: E402
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile import H2OEngineProfile  # noqa: E402
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile_config import H2OEngineProfileConfig  # noqa: E402
from h2o_engine_manager.clients.notebook_engine_profile.config import NotebookEngineProfileConfig  # noqa: E402
from h2o_engine_manager.clients.notebook_engine_profile.profile import NotebookEngineProfile  # noqa: E402

ROLE = "oc-special-role"

_role_logins: dict[tuple[str, bool, tuple[str, ...]], Any] = {}


def login_with_roles(user: str, roles: tuple[str, ...], admin: bool = False) -> Any:
    """The official ``login_custom`` as a user whose token carries identity-provider ``roles``.

    The real service's tests sign in as ``test-user`` (no role), ``test-admin`` (the OIDC role
    ``admin``, not an administrator of the engine manager) and ``test-super-admin`` (an
    administrator with the role ``super_admin``); these are the same people here.
    """
    key = (user, admin, roles)
    if key not in _role_logins:
        args = ["node", str(oc.REPO_ROOT / "services" / "kit" / "bin" / "token.mjs"), "--user", user, "--refresh"]
        args += ["--admin"] if admin else []
        for role in roles:
            args += ["--role", role]
        result = subprocess.run(args, cwd=oc.REPO_ROOT, env=oc.server().env, capture_output=True, text=True,
                                timeout=60, check=True)
        _role_logins[key] = h2o_engine_manager.login_custom(
            endpoint=oc.server().url, refresh_token=result.stdout.strip(), issuer_url=oc.issuer_url(),
            client_id=oc.PLATFORM_CLIENT_ID)
    return _role_logins[key]


def role_admin() -> Any:
    """The official tests' "admin": holds the OIDC role ``admin``, administers nothing."""
    return login_with_roles("oc-role-admin", ("admin",))


def super_admin() -> Any:
    """The official tests' "super admin": an administrator holding the role ``super_admin``."""
    return login_with_roles("oc-super-admin", ("super_admin",), admin=True)


def numeric(minimum: str, default: str, maximum: str | None = None, cumulative: str | None = None) -> ProfileConstraintNumeric:
    return ProfileConstraintNumeric(minimum=minimum, default=default, maximum=maximum, cumulative_maximum=cumulative)


def duration(minimum: str, default: str, maximum: str | None = None) -> ProfileConstraintDuration:
    return ProfileConstraintDuration(minimum=minimum, default=default, maximum=maximum)


def common_constraints() -> dict[str, Any]:
    return dict(
        cpu_constraint=numeric("1", "2", "8", "16"),
        gpu_constraint=numeric("0", "0", "2"),
        memory_bytes_constraint=numeric("1Gi", "8Gi", "64Gi"),
        max_idle_duration_constraint=duration("1m", "1h", "8h"),
        max_running_duration_constraint=duration("1h", "4h", "2d"),
    )


def dai_fields(display_name: str) -> dict[str, Any]:
    return dict(
        common_constraints(),
        storage_bytes_constraint=numeric("1Gi", "64Gi", "1Ti"),
        config_editability=ConfigEditability.CONFIG_EDITABILITY_BASE_CONFIG_ONLY,
        display_name=display_name,
        priority=7,
        enabled=True,
        assigned_oidc_roles_enabled=False,
        assigned_oidc_roles=[],
        max_running_engines=3,
        max_non_interaction_duration="2h",
        max_unused_duration="1d",
        configuration_override={"max_runtime_minutes": "60"},
        base_configuration={"disk_limit_gb": "10"},
        yaml_pod_template_spec="spec:\n  priorityClassName: oc\n",
        yaml_gpu_tolerations="- key: gpu\n  operator: Exists\n",
        triton_enabled=True,
        gpu_resource_name="nvidia.com/gpu",
        data_directory_storage_class="fast",
    )


def h2o_fields(display_name: str) -> dict[str, Any]:
    return dict(
        common_constraints(),
        node_count_constraint=numeric("1", "2", "4"),
        display_name=display_name,
        priority=5,
        enabled=True,
        assigned_oidc_roles_enabled=False,
        assigned_oidc_roles=[],
        max_running_engines=2,
        yaml_pod_template_spec="spec:\n  priorityClassName: oc\n",
        yaml_gpu_tolerations="- key: gpu\n  operator: Exists\n",
        gpu_resource_name="nvidia.com/gpu",
        java_classpath="/opt/extra.jar",
        java_options="-Xss4m",
        h2o_options="-nthreads 2",
    )


def notebook_fields(display_name: str) -> dict[str, Any]:
    return dict(
        common_constraints(),
        storage_bytes_constraint=numeric("1Gi", "10Gi", "100Gi"),
        display_name=display_name,
        priority=3,
        enabled=True,
        assigned_oidc_roles_enabled=False,
        assigned_oidc_roles=[],
        max_running_engines=1,
        yaml_pod_template_spec="spec:\n  priorityClassName: oc\n",
        yaml_gpu_tolerations="- key: gpu\n  operator: Exists\n",
        storage_class_name="standard",
        gpu_resource_name="nvidia.com/gpu",
        sync_git_repository_enabled=True,
        git_repository="https://github.com/h2oai/examples.git",
        git_ref="main",
        git_directory_name="examples",
    )


def small_constraints() -> dict[str, Any]:
    """Only the constraints, as the official tests create most profiles."""
    return dict(
        cpu_constraint=ProfileConstraintNumeric(minimum="1", default="1"),
        gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0", maximum="10", cumulative_maximum="100"),
        memory_bytes_constraint=ProfileConstraintNumeric(minimum="100", default="100"),
        max_idle_duration_constraint=ProfileConstraintDuration(minimum="100s", default="200s"),
        max_running_duration_constraint=ProfileConstraintDuration(minimum="100s", default="200s", maximum="400s"),
    )


class ProfileContract:
    """The same contract for each kind; subclasses name the kind, its classes and its fields."""

    kind = ""  # dai, h2o, notebook
    resource_class: type = object
    config_class: type = object
    has_get_first = True

    def fields(self, display_name: str) -> dict[str, Any]:
        raise NotImplementedError

    def minimal(self) -> dict[str, Any]:
        """The fields of a profile made of its constraints alone."""
        raise NotImplementedError

    def minimal_defaults(self) -> dict[str, Any]:
        """What such a profile reads beyond the common defaults, as the real service answers."""
        return {}

    def updated_fields(self) -> dict[str, Any]:
        """Kind-specific fields the official update tests change."""
        return {}

    def bare(self, **overrides: Any) -> Any:
        return self.resource_class(**dict(self.minimal(), **overrides))

    # -- the kind's methods, by the official names ------------------------------------------------

    def client(self, clients: Any) -> Any:
        return getattr(clients, f"{self.kind}_engine_profile_client")

    def call(self, clients: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.client(clients), method.format(kind=self.kind))(*args, **kwargs)

    def create(self, clients: Any, parent: str, profile: Any, profile_id: str) -> Any:
        return self.call(clients, "create_{kind}_engine_profile", parent=parent, **{
            f"{self.kind}_engine_profile": profile, f"{self.kind}_engine_profile_id": profile_id})

    def make(self, display_name: str, **overrides: Any) -> Any:
        return self.resource_class(**dict(self.fields(display_name), **overrides))

    def make_config(self, profile_id: str, display_name: str) -> Any:
        return self.config_class(**{f"{self.kind}_engine_profile_id": profile_id}, **self.fields(display_name))

    def assertProfile(self: Any, profile: Any, name: str, expected: dict[str, Any]) -> None:
        self.assertEqual(profile.name, name)
        for field, value in expected.items():
            # The official DAI profile passes these two through as the wire has them ("<n>s").
            if field in ("max_non_interaction_duration", "max_unused_duration") and value is not None:
                value = duration_to_seconds(value)
            self.assertEqual(getattr(profile, field), value, field)
        self.assertIsNotNone(profile.create_time)
        self.assertEqual(profile.creator, f"users/{oc.ADMIN}")

    # -- tests --------------------------------------------------------------------------------

    def setUp(self: Any) -> None:
        self.admin = oc.admin()
        self.member = oc.member()
        self.workspace = f"workspaces/{oc.unique('oc-' + self.kind + 'prof')}"

    def test_create_get_update_and_delete_round_trip(self: Any) -> None:
        profile_id = oc.unique("p")
        name = f"{self.workspace}/{self.kind}EngineProfiles/{profile_id}"
        expected = self.fields("Conformance profile")
        created = self.create(self.admin, self.workspace, self.make("Conformance profile"), profile_id)
        self.assertProfile(created, name, expected)
        # Not updated yet: no update time, no updater.
        self.assertIsNone(created.update_time)
        self.assertEqual((created.updater, created.updater_display_name), ("", ""))
        got = self.call(self.member, "get_{kind}_engine_profile", name=name)
        self.assertProfile(got, name, expected)

        got.display_name = "Renamed"
        got.priority = 9
        got.max_running_engines = 5
        got.cpu_constraint = numeric("2", "4", "12")
        got.assigned_oidc_roles_enabled = True
        got.assigned_oidc_roles = [ROLE]
        updated = self.call(self.admin, "update_{kind}_engine_profile", got)
        changed = dict(expected, display_name="Renamed", priority=9, max_running_engines=5,
                       cpu_constraint=numeric("2", "4", "12"), assigned_oidc_roles_enabled=True, assigned_oidc_roles=[ROLE])
        self.assertProfile(updated, name, changed)
        self.assertIsNotNone(updated.update_time)
        self.assertEqual(updated.updater, f"users/{oc.ADMIN}")

        # Only the masked field changes.
        updated.display_name = "Masked"
        updated.priority = 1
        masked = self.call(self.admin, "update_{kind}_engine_profile", updated, update_mask="display_name")
        self.assertProfile(masked, name, dict(changed, display_name="Masked"))
        self.assertProfile(self.call(self.admin, "get_{kind}_engine_profile", name=name), name, dict(changed, display_name="Masked"))
        # Now restricted to a role the member does not hold: hidden from them, as if missing.
        self.assertApiError(404, getattr(self.client(self.member), f"get_{self.kind}_engine_profile"), name=name)

        self.assertIsNone(self.call(self.admin, "delete_{kind}_engine_profile", name=name))
        self.assertApiError(404, getattr(self.client(self.member), f"get_{self.kind}_engine_profile"), name=name)

    def test_lists_page_and_list_assigned_follows_roles(self: Any) -> None:
        for n in range(3):
            roles = {"assigned_oidc_roles_enabled": True, "assigned_oidc_roles": [ROLE]} if n == 2 else {}
            self.create(self.admin, self.workspace, self.make(f"P{n}", priority=n, **roles), f"p{n}")
        names = [f"{self.workspace}/{self.kind}EngineProfiles/p{n}" for n in range(3)]

        # Administrators list every profile, by priority (here 0, 1, 2), then name.
        first = self.call(self.admin, "list_{kind}_engine_profiles", parent=self.workspace, page_size=2)
        items = getattr(first, f"{self.kind}_engine_profiles")
        self.assertEqual([p.name for p in items], names[:2])
        self.assertNotEqual(first.next_page_token, "")
        second = self.call(self.admin, "list_{kind}_engine_profiles", parent=self.workspace, page_size=2,
                           page_token=first.next_page_token)
        rest = getattr(second, f"{self.kind}_engine_profiles")
        self.assertEqual(second.next_page_token, "")
        self.assertEqual([p.name for p in items + rest], names)

        every = self.call(self.admin, "list_all_{kind}_engine_profiles", parent=self.workspace)
        self.assertEqual([p.name for p in every], names)
        # Members may not list every profile (they list the ones assigned to them, below).
        self.assertApiError(403, getattr(self.client(self.member), f"list_all_{self.kind}_engine_profiles"),
                            parent=self.workspace)

        # The third profile needs a role the member does not have.
        assigned = self.call(self.member, "list_assigned_{kind}_engine_profiles", parent=self.workspace)
        self.assertEqual(sorted(p.name for p in getattr(assigned, f"{self.kind}_engine_profiles")), names[:2])
        self.assertEqual(assigned.next_page_token, "")
        all_assigned = self.call(self.member, "list_all_assigned_{kind}_engine_profiles", parent=self.workspace)
        self.assertEqual(sorted(p.name for p in all_assigned), names[:2])
        if self.has_get_first:
            # The first assigned profile in the server's order (priority, then name).
            first_assigned = self.call(self.member, "get_first_{kind}_engine_profile", workspace=self.workspace)
            self.assertEqual(first_assigned.name, getattr(assigned, f"{self.kind}_engine_profiles")[0].name)
            self.assertIsNone(self.call(self.member, "get_first_{kind}_engine_profile", workspace=f"workspaces/{oc.unique('empty')}"))

        self.assertIsNone(self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=self.workspace))
        self.assertEqual(self.call(self.admin, "list_all_{kind}_engine_profiles", parent=self.workspace), [])

    def test_gpu_resource_name_defaults_to_nvidia(self: Any) -> None:
        created = self.create(self.admin, self.workspace, self.make("No GPU name", gpu_resource_name=""), oc.unique("p"))
        self.assertEqual(created.gpu_resource_name, "nvidia.com/gpu")
        self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=self.workspace)

    def test_copy_to_another_workspace(self: Any) -> None:
        source = self.create(self.admin, self.workspace, self.make("Source"), "source")
        target = f"workspaces/{oc.unique('oc-copy')}"
        copy = self.call(self.admin, "copy_{kind}_engine_profile", name=source.name, parent=target,
                         **{f"{self.kind}_engine_profile_id": "copied"})
        self.assertProfile(copy, f"{target}/{self.kind}EngineProfiles/copied", self.fields("Source"))
        # A copy is a new profile: created later, never updated.
        self.assertGreater(copy.create_time, source.create_time)
        self.assertIsNone(copy.update_time)
        self.assertEqual((copy.updater, copy.updater_display_name), ("", ""))
        self.assertApiError(403, getattr(self.client(self.member), f"copy_{self.kind}_engine_profile"), name=source.name,
                            parent=target, **{f"{self.kind}_engine_profile_id": "mine"})
        self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=target)

    def test_apply_configs_replaces_the_workspace(self: Any) -> None:
        self.create(self.admin, self.workspace, self.make("Old"), "old")
        configs = [self.make_config("alpha", "Alpha"), self.make_config("beta", "Beta")]
        applied = self.call(self.admin, "apply_{kind}_engine_profile_configs", configs=configs, parent=self.workspace)
        # The answer is the workspace's list: by priority (equal here), then name.
        self.assertEqual([p.name for p in applied],
                         [f"{self.workspace}/{self.kind}EngineProfiles/{i}" for i in ("alpha", "beta")])
        for profile in applied:
            expected = self.fields("Alpha" if profile.name.endswith("alpha") else "Beta")
            self.assertProfile(profile, profile.name, expected)
            self.assertIsNone(profile.update_time)
        # A config of constraints alone verifies roles and lists none, as the client's defaults say.
        bare = self.call(self.admin, "apply_{kind}_engine_profile_configs", parent=self.workspace, configs=[
            self.config_class(**{f"{self.kind}_engine_profile_id": "plain"}, **self.minimal())])
        self.assertEqual([(p.name.rsplit("/", 1)[1], p.assigned_oidc_roles_enabled, p.assigned_oidc_roles) for p in bare],
                         [("plain", True, [])])
        self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=self.workspace)

    def test_a_profile_of_constraints_alone_reads_the_defaults(self: Any) -> None:
        before = time.time()
        created = self.create(self.admin, self.workspace, self.bare(), "bare")
        after = time.time()
        expected = dict(display_name="", priority=0, enabled=True, assigned_oidc_roles_enabled=True,
                        assigned_oidc_roles=[], max_running_engines=None, yaml_pod_template_spec="",
                        yaml_gpu_tolerations="", update_time=None, updater="", updater_display_name="",
                        creator=f"users/{oc.ADMIN}", gpu_resource_name="nvidia.com/gpu", **self.minimal_defaults())
        for field, value in expected.items():
            self.assertEqual(getattr(created, field), value, field)
        self.assertNotEqual(created.creator_display_name, "")
        self.assertTrue(before - 1 <= created.create_time.timestamp() <= after + 1)
        self.assertEqual(self.call(self.admin, "get_{kind}_engine_profile", name=created.name), created)
        self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=self.workspace)

    def test_lists_by_priority_then_name_for_administrators_only(self: Any) -> None:
        roles = {"p1": ["super_admin"], "p2": ["super_admin", "admin"], "p3": None}
        for priority, profile_id in ((3, "p1"), (2, "p2"), (1, "p3"), (1, "p0")):
            restricted = roles.get(profile_id)
            self.create(self.admin, self.workspace, self.bare(
                priority=priority, assigned_oidc_roles_enabled=restricted is not None,
                assigned_oidc_roles=restricted or []), profile_id)
        order = [f"{self.workspace}/{self.kind}EngineProfiles/{i}" for i in ("p0", "p3", "p2", "p1")]
        self.assertEqual([p.name for p in self.call(self.admin, "list_all_{kind}_engine_profiles", parent=self.workspace)],
                         order)
        names, token = [], ""
        for _ in order:
            page = self.call(self.admin, "list_{kind}_engine_profiles", parent=self.workspace, page_size=1, page_token=token)
            names += [p.name for p in getattr(page, f"{self.kind}_engine_profiles")]
            token = page.next_page_token
        self.assertEqual((names, token), (order, ""))
        # Anyone but an administrator is refused the whole list, a holder of a profile's role too.
        for who in (self.member, role_admin()):
            self.assertApiError(403, getattr(self.client(who), f"list_all_{self.kind}_engine_profiles"), parent=self.workspace)
            self.assertApiError(403, getattr(self.client(who), f"list_{self.kind}_engine_profiles"), parent=self.workspace)
        # What each may use: every profile for the super admin (who holds super_admin), the ones
        # open or asking for "admin" for the role holder, the open ones for a user.
        self.assertEqual([p.name for p in self.call(super_admin(), "list_all_assigned_{kind}_engine_profiles",
                                                    parent=self.workspace)], order)
        self.assertEqual([p.name for p in self.call(role_admin(), "list_all_assigned_{kind}_engine_profiles",
                                                    parent=self.workspace)], order[:3])
        self.assertEqual([p.name for p in self.call(self.member, "list_all_assigned_{kind}_engine_profiles",
                                                    parent=self.workspace)], order[:2])
        names, token = [], ""
        for _ in order:
            page = self.call(super_admin(), "list_assigned_{kind}_engine_profiles", parent=self.workspace, page_size=1,
                             page_token=token)
            names += [p.name for p in getattr(page, f"{self.kind}_engine_profiles")]
            token = page.next_page_token
        self.assertEqual((names, token), (order, ""))
        self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=self.workspace)

    def test_a_role_holder_reads_a_restricted_profile_but_writes_nothing(self: Any) -> None:
        profile_id = "restricted"
        name = f"{self.workspace}/{self.kind}EngineProfiles/{profile_id}"
        created = self.create(self.admin, self.workspace, self.bare(
            assigned_oidc_roles_enabled=True, assigned_oidc_roles=["admin"], priority=1), profile_id)
        by_admin = self.call(super_admin(), "get_{kind}_engine_profile", name=name)
        self.assertEqual(self.call(role_admin(), "get_{kind}_engine_profile", name=name), by_admin)
        # A user without the role is told it does not exist.
        self.assertApiError(404, getattr(self.client(self.member), f"get_{self.kind}_engine_profile"), name=name)

        created.priority = 2
        created.creator = "users/whatever"
        created.gpu_resource_name = "amd.com/gpu"
        created.cpu_constraint = numeric("2", "3", "4", "5")
        for field, value in self.updated_fields().items():
            setattr(created, field, value)
        for who in (self.member, role_admin()):
            client = self.client(who)
            self.assertApiError(403, getattr(client, f"update_{self.kind}_engine_profile"), created)
            self.assertApiError(403, getattr(client, f"delete_{self.kind}_engine_profile"), name=name)
            self.assertApiError(403, getattr(client, f"copy_{self.kind}_engine_profile"), name=name,
                                parent=self.workspace, **{f"{self.kind}_engine_profile_id": "copy"})
            self.assertApiError(403, getattr(client, f"apply_{self.kind}_engine_profile_configs"),
                                configs=[self.make_config("applied", "Applied")], parent=self.workspace)
        before = time.time()
        updated = self.call(self.admin, "update_{kind}_engine_profile", created)
        after = time.time()
        self.assertEqual((updated.priority, updated.gpu_resource_name), (2, "amd.com/gpu"))
        self.assertEqual(updated.cpu_constraint, numeric("2", "3", "4", "5"))
        # What was sent changed; what was left unset stays unset.
        for field, value in dict(self.minimal_defaults(), max_running_engines=None, **self.updated_fields()).items():
            self.assertEqual(getattr(updated, field), value, field)
        # The server keeps its audit fields: the creator stays, the updater is whoever updated.
        self.assertEqual(updated.create_time, by_admin.create_time)
        self.assertTrue(before - 1 <= updated.update_time.timestamp() <= after + 1)
        self.assertEqual((updated.creator, updated.updater), (f"users/{oc.ADMIN}", f"users/{oc.ADMIN}"))
        self.assertEqual(updated.updater_display_name, updated.creator_display_name)
        self.assertEqual(self.call(self.admin, "delete_{kind}_engine_profile", name=name), None)
        self.assertApiError(404, getattr(self.client(self.admin), f"get_{self.kind}_engine_profile"), name=name)

    def test_errors(self: Any) -> None:
        check = self.assertApiError
        client = self.client(self.admin)
        create = getattr(client, f"create_{self.kind}_engine_profile")
        id_arg, profile_arg = f"{self.kind}_engine_profile_id", f"{self.kind}_engine_profile"
        create(parent=self.workspace, **{profile_arg: self.make("Once"), id_arg: "once"})
        # already exists
        check(409, create, parent=self.workspace, **{profile_arg: self.make("Twice"), id_arg: "once"})
        # invalid argument: the default is above the maximum
        error = check(400, create, parent=self.workspace,
                      **{profile_arg: self.make("Bad", cpu_constraint=numeric("1", "9", "8")), id_arg: "bad"})
        self.assertIn("cpu", str(error))
        # not found
        check(404, getattr(client, f"get_{self.kind}_engine_profile"), name=f"{self.workspace}/{self.kind}EngineProfiles/missing")
        check(404, getattr(client, f"delete_{self.kind}_engine_profile"), name=f"{self.workspace}/{self.kind}EngineProfiles/missing")
        # permission denied: members read the catalogue, only administrators write it
        member = self.client(self.member)
        check(403, getattr(member, f"create_{self.kind}_engine_profile"), parent=self.workspace,
              **{profile_arg: self.make("Member"), id_arg: "member"})
        check(403, getattr(member, f"delete_{self.kind}_engine_profile"), name=f"{self.workspace}/{self.kind}EngineProfiles/once")
        self.call(self.admin, "delete_all_{kind}_engine_profiles", parent=self.workspace)


class DAIEngineProfileTest(ProfileContract, oc.ConformanceCase):
    kind = "dai"
    resource_class = DAIEngineProfile
    config_class = DAIEngineProfileConfig

    def fields(self, display_name: str) -> dict[str, Any]:
        return dai_fields(display_name)

    def minimal(self) -> dict[str, Any]:
        return dict(small_constraints(), storage_bytes_constraint=ProfileConstraintNumeric(minimum="100", default="100"),
                    config_editability=ConfigEditability.CONFIG_EDITABILITY_FULL)

    def minimal_defaults(self) -> dict[str, Any]:
        return dict(max_non_interaction_duration=None, max_unused_duration=None, configuration_override={},
                    base_configuration={}, triton_enabled=False, data_directory_storage_class="")

    def updated_fields(self) -> dict[str, Any]:
        return dict(data_directory_storage_class="ddsc")


class H2OEngineProfileTest(ProfileContract, oc.ConformanceCase):
    kind = "h2o"
    resource_class = H2OEngineProfile
    config_class = H2OEngineProfileConfig

    def fields(self, display_name: str) -> dict[str, Any]:
        return h2o_fields(display_name)

    def minimal(self) -> dict[str, Any]:
        return dict(small_constraints(), node_count_constraint=ProfileConstraintNumeric(minimum="1", default="1"))

    def updated_fields(self) -> dict[str, Any]:
        return dict(node_count_constraint=numeric("2", "3", "4", "5"))


class NotebookEngineProfileTest(ProfileContract, oc.ConformanceCase):
    kind = "notebook"
    resource_class = NotebookEngineProfile
    config_class = NotebookEngineProfileConfig
    has_get_first = False

    def fields(self, display_name: str) -> dict[str, Any]:
        return notebook_fields(display_name)

    def minimal(self) -> dict[str, Any]:
        return dict(small_constraints(), storage_bytes_constraint=ProfileConstraintNumeric(minimum="100", default="100"))

    def minimal_defaults(self) -> dict[str, Any]:
        return dict(storage_class_name="")

    def updated_fields(self) -> dict[str, Any]:
        return dict(storage_class_name="sc2")



if __name__ == "__main__":
    unittest.main()
