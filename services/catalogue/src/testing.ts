// Test support (not part of the service): a started catalogue module on a throw-away schema and
// event bus (PGlite and the in-process bus, or PostgreSQL and NATS when DATABASE_URL / NATS_URL
// are set), Connect clients in memory behind the real auth interceptor, and tokens for an
// administrator, a member, a viewer and a stranger of workspace `team-a` (bob, a second member,
// has no fixed client: asUser("bob")).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type Client,
  type ConnectRouter,
  type Interceptor,
} from "@connectrpc/connect";
import { parsePolicy, type Policy } from "@aiem/kit/authz";
import { readCommonEnv } from "@aiem/kit/config";
import type { Database } from "@aiem/kit/db";
import { createTestEventBus, type TestEventBus } from "@aiem/kit/events/testing";
import { createAuthenticator, loadOrCreateSigningKey, mintEmbeddedToken, type Principal } from "@aiem/kit/identity";
import { silentLogger, type Logger } from "@aiem/kit/logger";
import { createAuthInterceptor } from "@aiem/kit/server";
import { createTestDatabase, type RestJson, TEST_POLICY } from "@aiem/kit/testing";
import { DAIEngineProfileService } from "@aiem/proto/enginemanager/v1/dai_engine_profile_service_pb.js";
import { DAIEngineVersionService } from "@aiem/proto/enginemanager/v1/dai_engine_version_service_pb.js";
import { H2OEngineProfileService } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_service_pb.js";
import { H2OEngineVersionService } from "@aiem/proto/enginemanager/v1/h2o_engine_version_service_pb.js";
import { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import { NotebookEngineProfileService } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_service_pb.js";
import { SandboxEngineImageService } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_service_pb.js";
import { SandboxEngineTemplateService } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_service_pb.js";
import { SecretService } from "@aiem/proto/enginemanager/v1/secret_service_pb.js";
import { SecretVersionService } from "@aiem/proto/enginemanager/v1/secret_version_service_pb.js";
import { afterAll, beforeAll } from "vitest";
import type { KindDescriptor } from "./kinds.js";
import { createCatalogueModule, type CatalogueModule } from "./module.js";

export { TEST_POLICY, TEST_WORKSPACE } from "@aiem/kit/testing";

/** The callers of the permission tests. */
export type Who = "admin" | "member" | "viewer" | "stranger" | "anonymous";
export const EVERYONE: readonly Who[] = ["admin", "member", "viewer", "stranger", "anonymous"];

const USERS: Record<Exclude<Who, "anonymous">, { user: string; displayName: string }> = {
  admin: { user: "root", displayName: "Root Admin" },
  member: { user: "alice", displayName: "Alice Member" },
  viewer: { user: "carol", displayName: "Carol Viewer" },
  stranger: { user: "dave", displayName: "Dave Stranger" },
};

const SERVICES = {
  daiProfiles: DAIEngineProfileService,
  h2oProfiles: H2OEngineProfileService,
  notebookProfiles: NotebookEngineProfileService,
  daiVersions: DAIEngineVersionService,
  h2oVersions: H2OEngineVersionService,
  notebookImages: NotebookEngineImageService,
  sandboxImages: SandboxEngineImageService,
  templates: SandboxEngineTemplateService,
  secrets: SecretService,
  secretVersions: SecretVersionService,
} as const;

export type Clients = { [K in keyof typeof SERVICES]: Client<(typeof SERVICES)[K]> };

export interface TokenOptions {
  readonly admin?: boolean;
  readonly roles?: readonly string[];
  readonly displayName?: string;
}

export interface CatalogueHarness {
  readonly module: CatalogueModule;
  readonly bus: TestEventBus;
  readonly database: Database;
  readonly dataDir: string;
  readonly policy: Policy;
  /** Routes the module registers, for hosts under test (the edge). */
  readonly routes: (router: ConnectRouter) => void;
  readonly interceptor: Interceptor;
  /** Clients that call as one of the fixed users, or without a token. */
  as(who: Who): Clients;
  /** Clients with a freshly minted token for any user (roles for ListAssigned). */
  asUser(user: string, options?: TokenOptions): Promise<Clients>;
  token(who: Exclude<Who, "anonymous">): string;
  principal(who: Exclude<Who, "anonymous">, roles?: readonly string[]): Principal;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly seedDemo?: boolean;
  /** Reuse a database (kept open on close), to restart a module on the same data. */
  readonly database?: Database;
  readonly bus?: TestEventBus;
  readonly dataDir?: string;
  readonly secretsKey?: string;
  readonly logger?: Logger;
}

export async function createCatalogueHarness(suite: string, options: HarnessOptions = {}): Promise<CatalogueHarness> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), "aiem-catalogue-")));
  const database = options.database ?? (await createTestDatabase(`cat_${suite}`));
  // A shared database outlives this module: the module's stop() must not close it.
  const handed: Database = options.database ? { ...options.database, destroy: async () => {} } : database;
  const bus = options.bus ?? (await createTestEventBus(`cat_${suite}`));
  const policy = parsePolicy(TEST_POLICY, "test-policy.yaml");
  const config = readCommonEnv({ AIEM_DATA_DIR: dataDir });
  const authenticator = createAuthenticator({ dataDir, admins: policy.admins });
  const module = createCatalogueModule({
    config,
    bus,
    policy,
    authenticator,
    logger: options.logger ?? silentLogger,
    openDatabase: async () => handed,
    outboxPollInterval: 50,
    catalogueConfig: { pageTokenKey: undefined, secretsKey: options.secretsKey, seedDemo: options.seedDemo ?? false },
  });
  await module.start();
  const key = await loadOrCreateSigningKey(dataDir);
  const interceptor = createAuthInterceptor(authenticator);
  const routes = (router: ConnectRouter) => module.register(router);
  const tokens = Object.fromEntries(
    await Promise.all(
      Object.entries(USERS).map(
        async ([who, u]) => [who, await mintEmbeddedToken(key, { user: u.user, displayName: u.displayName })] as const,
      ),
    ),
  ) as Record<Exclude<Who, "anonymous">, string>;

  const clientsFor = (token: string | undefined): Clients => {
    const auth: Interceptor = (next) => (req) => {
      if (token) req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    };
    const transport = createRouterTransport(routes, {
      router: { interceptors: [interceptor] },
      transport: { interceptors: [auth] },
    });
    return Object.fromEntries(
      Object.entries(SERVICES).map(([k, service]) => [k, createClient(service as DescService, transport)]),
    ) as unknown as Clients;
  };
  const fixed = new Map<Who, Clients>();

  return {
    module,
    bus,
    database,
    dataDir,
    policy,
    routes,
    interceptor,
    as(who) {
      let c = fixed.get(who);
      if (!c) {
        c = clientsFor(who === "anonymous" ? undefined : tokens[who]);
        fixed.set(who, c);
      }
      return c;
    },
    async asUser(user, o = {}) {
      return clientsFor(
        await mintEmbeddedToken(key, { user, displayName: o.displayName, admin: o.admin, roles: o.roles }),
      );
    },
    token: (who) => tokens[who],
    principal: (who, roles = []) => ({
      name: `users/${USERS[who].user}`,
      subject: USERS[who].user,
      displayName: USERS[who].displayName,
      roles,
      admin: policy.admins.has(`users/${USERS[who].user}`),
    }),
    async close() {
      // stop() closes (and, for a test database, drops) the schema the module was given.
      await module.stop();
      if (!options.bus) await bus.destroy();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A harness started before the calling file's (or describe block's) tests and closed after them;
 * the returned function hands it to the tests.
 */
export function useCatalogueHarness(suite: string, options?: HarnessOptions): () => CatalogueHarness {
  let harness: CatalogueHarness | undefined;
  beforeAll(async () => {
    harness = await createCatalogueHarness(suite, options);
  });
  afterAll(async () => {
    await harness?.close();
  });
  return () => {
    if (!harness) throw new Error(`the ${suite} harness is not started (use it inside a test)`);
    return harness;
  };
}

const GiB = 1024n ** 3n;

/** The smallest valid body of a kind, for tests about something other than its fields. */
export function minimalBody(d: KindDescriptor): Record<string, unknown> {
  switch (d.family) {
    case "profile":
      return { displayName: "P", enabled: true };
    case "version":
      return { image: "ghcr.io/acme/x:1" };
    case "image":
      return { image: "ghcr.io/acme/x:1", displayName: "I" };
    case "template":
      return { memoryBytesLimit: GiB, maxIdleDuration: { seconds: 60n } };
  }
}

/** The ConnectError a call fails with (fails the test when it succeeds). */
export async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

/** Asserts code and that the message names `field` (as `field:` at the start of a violation). */
export async function expectInvalid(call: Promise<unknown>, field: string): Promise<ConnectError> {
  const err = await failure(call);
  if (err.code !== Code.InvalidArgument) {
    throw new Error(`expected INVALID_ARGUMENT naming ${field}, got ${Code[err.code]}: ${err.rawMessage}`);
  }
  const named = err.rawMessage.split("; ").some((part) => part.startsWith(`${field}: `));
  if (!named) throw new Error(`expected the message to name ${field}: ${err.rawMessage}`);
  return err;
}

export async function expectCode(call: Promise<unknown>, code: Code, text?: string): Promise<ConnectError> {
  const err = await failure(call);
  if (err.code !== code) throw new Error(`expected ${Code[code]}, got ${Code[err.code]}: ${err.rawMessage}`);
  if (text !== undefined && !err.rawMessage.includes(text))
    throw new Error(`expected the message to contain ${JSON.stringify(text)}: ${err.rawMessage}`);
  return err;
}

const CLIENT_OF_KIND: Record<string, keyof Clients> = {
  daiEngineProfiles: "daiProfiles",
  h2oEngineProfiles: "h2oProfiles",
  notebookEngineProfiles: "notebookProfiles",
  daiEngineVersions: "daiVersions",
  h2oEngineVersions: "h2oVersions",
  notebookEngineImages: "notebookImages",
  sandboxEngineImages: "sandboxImages",
  sandboxEngineTemplates: "templates",
};

/** One kind's calls with plain objects, so tests can loop over kinds. */
export interface KindApi {
  create(workspace: string, id: string, body?: Record<string, unknown>): Promise<RestJson>;
  get(name: string): Promise<RestJson>;
  list(workspace: string, req?: Record<string, unknown>): Promise<{ items: RestJson[]; nextPageToken: string }>;
  update(resource: Record<string, unknown>, paths?: string[]): Promise<RestJson>;
  delete(name: string): Promise<void>;
  copy(name: string, workspace: string, id: string): Promise<RestJson>;
  listAssigned(workspace: string, req?: Record<string, unknown>): Promise<{ items: RestJson[]; nextPageToken: string }>;
  assignAliases(name: string, aliases: string[]): Promise<RestJson[]>;
}

export function kindApi(clients: Clients, d: KindDescriptor): KindApi {
  const c = clients[CLIENT_OF_KIND[d.kind]!] as unknown as Record<string, (req: unknown) => Promise<RestJson>>;
  const s = d.singular;
  return {
    create: async (workspace, id, body = {}) =>
      (await c[`create${s}`]!({ parent: `workspaces/${workspace}`, [d.resourceLocal]: body, [d.idLocal]: id }))[
        d.resourceLocal
      ],
    get: async (name) => (await c[`get${s}`]!({ name }))[d.resourceLocal],
    list: async (workspace, req = {}) => {
      const res = await c[`list${s}s`]!({ parent: `workspaces/${workspace}`, ...req });
      return { items: res[d.pluralLocal], nextPageToken: res.nextPageToken };
    },
    update: async (resource, paths) =>
      (
        await c[`update${s}`]!({ [d.resourceLocal]: resource, updateMask: paths === undefined ? undefined : { paths } })
      )[d.resourceLocal],
    delete: async (name) => {
      await c[`delete${s}`]!({ name });
    },
    copy: async (name, workspace, id) =>
      (await c[`copy${s}`]!({ name, parent: `workspaces/${workspace}`, [d.idLocal]: id }))[d.resourceLocal],
    listAssigned: async (workspace, req = {}) => {
      const res = await c[`listAssigned${s}s`]!({ parent: `workspaces/${workspace}`, ...req });
      return { items: res[d.pluralLocal], nextPageToken: res.nextPageToken };
    },
    assignAliases: async (name, aliases) => (await c[`assign${s}Aliases`]!({ name, aliases }))[d.pluralLocal],
  };
}
