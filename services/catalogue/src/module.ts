// The catalogue as a ServiceModule: profiles, versions, images, templates and secrets, in its own
// schema `catalogue`, replicating catalogue changes through its outbox.
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { loadSecretKey } from "@aiem/kit/config";
import type { Database } from "@aiem/kit/db";
import type { OutboxRelay } from "@aiem/kit/events";
import type { Logger } from "@aiem/kit/logger";
import type { Principal } from "@aiem/kit/identity";
import {
  createServiceCore,
  createStartOnce,
  openServiceStore,
  type ServiceCoreState,
  type ServiceDeps,
  type ServiceModule,
  type ServiceStore,
} from "@aiem/kit/server";
import { SecretService } from "@aiem/proto/enginemanager/v1/secret_service_pb.js";
import { SecretVersionService } from "@aiem/proto/enginemanager/v1/secret_version_service_pb.js";
import { registerCatalogueServices } from "./kind-handlers.js";
import type { CatalogueSettings } from "./config.js";
import { registerInternalSecretResolver } from "./internal-secret-resolver.js";
import { ALL_KINDS } from "./kinds.js";
import { catalogueMigrations } from "./migrations.js";
import { createSecretCipher, type SecretCipher } from "./secret-cipher.js";
import type { ResolvedSecretValue, SecretReveal } from "./secret-reveal.js";
import { createSecretServices, registerSecretServices } from "./secrets.js";
import { seedDemo } from "./seed.js";
import { republishAll } from "./store.js";

export const CATALOGUE_SCHEMA = "catalogue";

export interface CatalogueModuleDeps extends ServiceDeps {
  readonly catalogueConfig: CatalogueSettings;
  /** Outbox poll interval in ms (default 250); tests use less. */
  readonly outboxPollInterval?: number;
  /** Milliseconds a write waits for its events to be published before it answers anyway (default 5 000). */
  readonly publishWait?: number;
}

const PUBLISH_WAIT = 5_000;

/**
 * Publishes what the write just committed before the write answers: the engine and sandbox
 * services read the catalogue from copies that follow its stream, and catch up with the stream's
 * last sequence before they call a reference missing, so the write must be in the stream by the
 * time the client hears of it. Bounded: with the bus away the write still answers (its events
 * wait in the outbox, and the relay keeps trying).
 */
async function publishWritten(relay: OutboxRelay, waitMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timed out">((resolve) => {
    timer = setTimeout(() => resolve("timed out"), waitMs);
  });
  try {
    if ((await Promise.race([relay.publishCommitted(), timedOut])) === "timed out") {
      relay.wake();
      logger.warn("a catalogue write answers before its events are published", { waitedMs: waitMs });
    }
  } catch (err) {
    relay.wake();
    logger.warn("a catalogue write answers before its events are published", {
      error: err instanceof Error ? err.message : String(err),
    });
  } finally {
    clearTimeout(timer);
  }
}

export interface CatalogueModule extends ServiceModule {
  /**
   * INTERNAL, never exposed through the public API: the plaintext of a secret version
   * (`workspaces/w/secrets/s/versions/3` or `.../versions/latest`) for `principal`, who must own
   * the secret (its creator, with ACCESS on secretVersions in the secret's workspace) or be an
   * administrator. `reveal` says where the value goes; it is recorded as an audit event before
   * the value is returned. For the sandbox service in the same process; do not log the value.
   */
  resolveSecretValue(
    principal: Principal,
    secretVersionName: string,
    reveal: SecretReveal,
  ): Promise<ResolvedSecretValue>;
  /** The database once started (for hosts' health checks and tests). */
  readonly database: Database | undefined;
  /** Publishes every pending outbox event now; for tests and orderly shutdowns. */
  flushEvents(): Promise<number>;
}

export const CATALOGUE_SERVICES: readonly DescService[] = [
  ...ALL_KINDS.map((d) => d.service),
  SecretService,
  SecretVersionService,
];

export function createCatalogueModule(deps: CatalogueModuleDeps): CatalogueModule {
  const logger = deps.logger.child({ service: "catalogue" });
  const state: ServiceCoreState = {};
  const context = createServiceCore({ label: "catalogue", policy: deps.policy, logger, state });
  let cipher: SecretCipher | undefined;
  let internalKey: Uint8Array | undefined;
  const secrets = createSecretServices({
    context,
    cipher: () => {
      if (!cipher) throw new Error("the catalogue is not started");
      return cipher;
    },
  });
  let store: ServiceStore | undefined;
  let ready = false;

  async function start(): Promise<void> {
    const keys = await loadCatalogueKeys(deps);
    cipher = createSecretCipher(keys.secretsKey);
    internalKey = keys.internalKey;
    store = await openCatalogueStore(deps, logger);
    const opened = store;
    state.tokens = opened.tokens;
    state.afterWrite = () => publishWritten(opened.relay, deps.publishWait ?? PUBLISH_WAIT, logger);
    state.database = opened.database;
    ready = true;
    logger.info("catalogue started", { schema: opened.database.schema });
  }
  const once = createStartOnce(start);

  return {
    name: "catalogue",
    services: CATALOGUE_SERVICES,
    register(router: ConnectRouter) {
      registerCatalogueServices(router, context);
      registerSecretServices(router, context, secrets);
      registerInternalSecretResolver(router, {
        internalKey: () => {
          if (!internalKey) throw new Error("the catalogue is not started");
          return internalKey;
        },
        resolveSecretValue: (principal, name, reveal) => secrets.resolveSecretValue(principal, name, reveal),
        guard: { logger, label: "catalogue" },
      });
    },
    start: once.start,
    async stop() {
      ready = false;
      state.database = undefined;
      state.afterWrite = undefined;
      const closing = store;
      store = undefined;
      once.reset();
      await closing?.close();
    },
    isReady: () => ready,
    resolveSecretValue: (principal, name, reveal) => secrets.resolveSecretValue(principal, name, reveal),
    get database() {
      return state.database;
    },
    async flushEvents() {
      return store ? store.relay.flush() : 0;
    },
  };
}

/** The secrets key (values at rest) and the internal key (the secret resolver's callers). */
async function loadCatalogueKeys(
  deps: CatalogueModuleDeps,
): Promise<{ secretsKey: Uint8Array; internalKey: Uint8Array }> {
  const { config, catalogueConfig } = deps;
  const secretsKey = await loadSecretKey({
    variable: "AIEM_SECRETS_KEY",
    value: catalogueConfig.secretsKey,
    dataDir: config.dataDir,
    name: "secrets",
  });
  const internalKey = await loadSecretKey({
    variable: "AIEM_INTERNAL_KEY",
    value: catalogueConfig.internalKey,
    dataDir: config.dataDir,
    name: "internal",
  });
  return { secretsKey, internalKey };
}

/**
 * The catalogue's schema, migrated, with its outbox relay; on the in-process bus every resource is
 * republished (the bus starts empty), and the demo catalogue is made when asked for.
 */
function openCatalogueStore(deps: CatalogueModuleDeps, logger: Logger): Promise<ServiceStore> {
  const { catalogueConfig } = deps;
  return openServiceStore({
    deps,
    schema: CATALOGUE_SCHEMA,
    migrations: catalogueMigrations,
    pageTokenKey: catalogueConfig.pageTokenKey,
    logger,
    outboxPollInterval: deps.outboxPollInterval,
    async prepare(db) {
      if (deps.bus.kind === "memory") {
        const replayed = await db.db.transaction().execute((trx) => republishAll(trx, new Date()));
        if (replayed > 0) logger.info("republished the catalogue onto the in-process bus", { resources: replayed });
      }
      if (catalogueConfig.seedDemo) {
        const seeded = await db.db.transaction().execute((trx) => seedDemo(trx, new Date()));
        if (seeded)
          logger.info("created the demo catalogue in workspaces/global (AIEM_SEED_DEMO=false turns this off)");
      }
    },
  });
}
