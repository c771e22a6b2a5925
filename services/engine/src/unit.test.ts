// Pieces of the engine service that need no database: H2O sizing (the reference test vectors),
// version ordering, DAI configuration precedence, the state tables, settings, and the local
// runtime on its own (start, probe, stop, exit reasons, adoption by a new runtime instance).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { Code, type ConnectError } from "@aiem/kit/errors";
import { silentLogger } from "@aiem/kit/logger";
import { H2OEngineSizeLimitsSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_size_pb.js";
import { ENGINE_SETTING_DEFAULTS, readEngineEnv } from "./config.js";
import { compressedDatasetSize, rawDatasetSize } from "./h2o-size.js";
import { checkTransition, DAI, ENGINE_KINDS, H2O, isSettled, NOTEBOOK, S } from "./kinds.js";
import { createLocalRuntime, killEngineProcesses, type LocalRuntime } from "./runtime/local-runtime.js";
import type { EngineRunSpec } from "./runtime/runtime.js";
import { compareVersions } from "./semver.js";
import { effectiveConfig, RESERVED_DAI_CONFIG_KEYS, withoutReserved } from "./validation.js";

const limits = (o: { min: bigint; max?: bigint; nodesMin: bigint; nodesMax?: bigint }) =>
  create(H2OEngineSizeLimitsSchema, {
    memoryBytesPerNodeMin: o.min,
    memoryBytesPerNodeMax: o.max,
    nodeCountMin: o.nodesMin,
    nodeCountMax: o.nodesMax,
  });

describe("H2O size calculations", () => {
  it("hold the reference vectors", () => {
    expect(rawDatasetSize(1000n, limits({ min: 100n, nodesMin: 2n }))).toEqual({ memoryBytes: 2500n, nodeCount: 2n });
    expect(rawDatasetSize(1000n, limits({ min: 100n, max: 200n, nodesMin: 1n, nodesMax: 2n }))).toEqual({
      memoryBytes: 200n,
      nodeCount: 2n,
    });
    expect(compressedDatasetSize(100n, 100n, limits({ min: 1n, nodesMin: 2n }))).toEqual({
      memoryBytes: 160_000n,
      nodeCount: 2n,
    });
  });

  it("adds nodes while a node would exceed its maximum, and gives each node at least the minimum", () => {
    expect(rawDatasetSize(1000n, limits({ min: 100n, max: 1000n, nodesMin: 1n }))).toEqual({
      memoryBytes: 1000n,
      nodeCount: 5n,
    });
    expect(rawDatasetSize(1n, limits({ min: 4096n, nodesMin: 3n }))).toEqual({ memoryBytes: 4096n, nodeCount: 3n });
    expect(compressedDatasetSize(10n, 10n, limits({ min: 1n, max: 1000n, nodesMin: 1n, nodesMax: 10n }))).toEqual({
      memoryBytes: 800n,
      nodeCount: 4n,
    });
  });

  it("rejects inconsistent limits and non-positive sizes, naming each field", () => {
    const err = (() => {
      try {
        rawDatasetSize(0n, limits({ min: 0n, max: 5n, nodesMin: 0n, nodesMax: 0n }));
      } catch (e) {
        return e as ConnectError;
      }
      throw new Error("expected a failure");
    })();
    expect(err.code).toBe(Code.InvalidArgument);
    for (const field of ["dataset_size_bytes", "limits.memory_bytes_per_node_min", "limits.node_count_min"])
      expect(err.rawMessage).toContain(`${field}: `);
    expect(() => compressedDatasetSize(1n, -1n, limits({ min: 1n, nodesMin: 1n }))).toThrow(
      /columns_count: must be above 0/,
    );
    expect(() => rawDatasetSize(1n, undefined)).toThrow(/limits: is required/);
    expect(() => rawDatasetSize(1n, limits({ min: 10n, max: 5n, nodesMin: 2n, nodesMax: 1n }))).toThrow(
      /limits.memory_bytes_per_node_max: .*limits.node_count_max: /,
    );
    expect(() => compressedDatasetSize(2n ** 40n, 2n ** 40n, limits({ min: 1n, nodesMin: 1n }))).toThrow(
      /rows_count: is too large/,
    );
  });
});

describe("compareVersions", () => {
  it("orders numeric segments numerically, any number of them, and releases after pre-releases", () => {
    const sorted = [
      "1.9.9",
      "1.10.0-alpha",
      "1.10.0-alpha.2",
      "1.10.0-alpha.10",
      "1.10.0-beta",
      "1.10.0",
      "1.10.0.1",
      "1.10.6",
      "1.11.0",
      "2.0.0",
    ];
    const shuffled = [...sorted].reverse();
    expect(shuffled.sort(compareVersions)).toEqual(sorted);
    expect(compareVersions("1.10.0", "1.10.0.0")).toBe(0);
  });
});

describe("DAI configuration", () => {
  it("applies override > server core > engine > base, dropping reserved keys from every layer", () => {
    const config = effectiveConfig(
      {
        baseConfiguration: { a: "base", b: "base", c: "base", d: "base", port: "1" },
        configurationOverride: { a: "override", ip: "0.0.0.0" },
      },
      { a: "engine", b: "engine", c: "engine", data_directory: "/x" },
      { a: "core", b: "core", authentication_method: "none" },
    );
    expect(config).toEqual({ a: "override", b: "core", c: "engine", d: "base" });
    expect(withoutReserved({ base_url: "x", keep: "y" })).toEqual({ keep: "y" });
    expect(RESERVED_DAI_CONFIG_KEYS.has("data_directory")).toBe(true);
  });
});

describe("states", () => {
  it("lets every call name the current state when it is refused", () => {
    expect(() => checkTransition(DAI, "update", "workspaces/w/daiEngines/e", S.RUNNING)).toThrow(
      /cannot update "workspaces\/w\/daiEngines\/e": engine must be paused or failed \(the Driverless AI engine is STATE_RUNNING\)/,
    );
    expect(() => checkTransition(DAI, "resume", "workspaces/w/daiEngines/e", S.DELETING)).toThrow(
      /cannot resume "workspaces\/w\/daiEngines\/e": the Driverless AI engine is STATE_DELETING; this needs/,
    );
    expect(() => checkTransition(H2O, "terminate", "n", S.TERMINATED)).toThrow(/is STATE_TERMINATED/);
    expect(() => checkTransition(NOTEBOOK, "access", "n", S.PAUSED)).toThrow(
      /is STATE_PAUSED; this needs STATE_RUNNING/,
    );
  });

  it("allows only states of the kind", () => {
    for (const kind of ENGINE_KINDS) {
      for (const states of Object.values(kind.allowed)) for (const s of states) expect(kind.states).toContain(s);
      for (const s of kind.states) expect(kind.stateEnum.values.map((v) => v.name)).toContain(s);
    }
  });

  it("is settled when the observed state is where the intent leads", () => {
    expect(isSettled(S.RUNNING, "RUNNING")).toBe(true);
    expect(isSettled(S.STARTING, "RUNNING")).toBe(false);
    expect(isSettled(S.FAILED, "RUNNING")).toBe(true);
    expect(isSettled(S.PAUSING, "PAUSED")).toBe(false);
    expect(isSettled(S.TERMINATED, "TERMINATED")).toBe(true);
    expect(isSettled(S.DELETING, "DELETED")).toBe(false);
  });
});

describe("readEngineEnv", () => {
  it("reads defaults and the server core config", () => {
    const c = readEngineEnv({ AIEM_DATA_DIR: "/tmp/x" });
    expect(c.reconcileIntervalMs).toBe(ENGINE_SETTING_DEFAULTS.reconcileIntervalMs);
    expect(c.daiCoreConfig).toEqual({});
    expect(c.runtime).toBe("local");
    const d = readEngineEnv({
      AIEM_DAI_CORE_CONFIG: '{"a": "1"}',
      AIEM_PUBLIC_URL: "https://aiem.example.com/",
      AIEM_ENGINE_CHECK_INTERVAL_MS: "500",
    });
    expect(d.daiCoreConfig).toEqual({ a: "1" });
    expect(d.publicUrl).toBe("https://aiem.example.com");
    expect(d.checkIntervalMs).toBe(500);
  });

  it("names the variable of a bad value", () => {
    expect(() => readEngineEnv({ AIEM_DAI_CORE_CONFIG: "[1]" })).toThrow(/AIEM_DAI_CORE_CONFIG: must be a JSON object/);
    expect(() => readEngineEnv({ AIEM_DAI_CORE_CONFIG: '{"a": 1}' })).toThrow(
      /AIEM_DAI_CORE_CONFIG: the value of "a" must be a string/,
    );
    expect(() => readEngineEnv({ AIEM_DAI_CORE_CONFIG: "{" })).toThrow(/AIEM_DAI_CORE_CONFIG: is not valid JSON/);
    expect(() => readEngineEnv({ AIEM_ENGINE_RUNTIME: "docker" })).toThrow(
      /AIEM_ENGINE_RUNTIME: must be "local" or "kubernetes"/,
    );
    const kubernetes = readEngineEnv({ AIEM_ENGINE_RUNTIME: "kubernetes", AIEM_KUBERNETES_NAMESPACE: "engines" });
    expect([kubernetes.runtime, kubernetes.kubernetesNamespace]).toEqual(["kubernetes", "engines"]);
    // AIEM_RUNTIME, the general switch, when the engine's own is not set.
    expect(readEngineEnv({ AIEM_RUNTIME: "kubernetes" }).runtime).toBe("kubernetes");
    expect(readEngineEnv({ AIEM_RUNTIME: "kubernetes", AIEM_ENGINE_RUNTIME: "local" }).runtime).toBe("local");
    expect(() => readEngineEnv({ AIEM_RUNTIME: "docker" })).toThrow(/AIEM_RUNTIME: must be "local" or "kubernetes"/);
  });
});

describe("local runtime", () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const root of roots) {
      await killEngineProcesses(root);
      await rm(root, { recursive: true, force: true });
    }
  });
  const newRuntime = async (root?: string): Promise<LocalRuntime> => {
    const dir = root ?? (await mkdtemp(path.join(tmpdir(), "aiem-rt-")));
    if (!root) roots.push(dir);
    return createLocalRuntime({
      root: dir,
      h2o: { kind: "stand-in" },
      startTimeoutMs: 20_000,
      stopTimeoutMs: 2_000,
      logger: silentLogger,
    });
  };
  const spec = (uid: string): EngineRunSpec => ({
    uid,
    kind: "dai",
    name: `workspaces/w/daiEngines/${uid.slice(0, 8)}`,
    version: "1.11.0",
    image: "x",
    cpu: 1,
    gpu: 0,
    memoryBytes: 1n,
    storageBytes: 1_000_000n,
    nodeCount: 1,
    basePath: `/engines/${uid}/`,
    config: { k: "v" },
    options: {},
  });
  const ready = (rt: LocalRuntime, uid: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("not ready in time")), 15_000);
      const check = async () => {
        if ((await rt.inspect(uid)).phase === "ready") {
          clearTimeout(timer);
          off();
          resolve();
        }
      };
      const off = rt.watch((u) => void (u === uid && check()));
      void check();
    });

  it("starts a stand-in that serves health and config, reports disk use, keeps data over stop, and is adopted by a new instance", async () => {
    const rt = await newRuntime();
    const uid = "11111111-1111-4111-8111-111111111111";
    expect((await rt.inspect(uid)).phase).toBe("absent");
    await rt.start(spec(uid));
    await ready(rt, uid);
    const endpoint = (await rt.endpoint(uid))!;
    const health = await (await fetch(`http://${endpoint.host}:${endpoint.port}/engines/${uid}/api/health`)).json();
    expect(health).toMatchObject({ status: "ok", kind: "dai", version: "1.11.0" });
    expect(await (await fetch(`http://${endpoint.host}:${endpoint.port}/engines/${uid}/api/config`)).json()).toEqual({
      k: "v",
    });
    await writeFile(path.join(rt.engineDir(uid), "data", "blob"), Buffer.alloc(1000));
    const disk = (await rt.diskUsage(uid, 1_000_000n))!;
    expect(disk.totalBytes).toBe(1_000_000n);
    expect(disk.freeBytes < 999_000n && disk.freeBytes > 990_000n).toBe(true);

    // A second instance (the service restarted) adopts the running process without starting another.
    const pid = await rt.pid(uid);
    await rt.close();
    const again = await newRuntime(roots[roots.length - 1]);
    expect((await again.inspect(uid)).phase).toBe("ready");
    await again.start(spec(uid));
    expect(await again.pid(uid)).toBe(pid);
    expect(Buffer.from(await again.logs(uid, 1 << 20)).toString()).toContain("stand-in listening");

    await again.stop(uid);
    expect((await again.inspect(uid)).phase).toBe("stopped");
    expect((await again.inspect(uid)).dataPresent).toBe(true);
    await again.start(spec(uid));
    await ready(again, uid);
    await again.remove(uid);
    expect((await again.inspect(uid)).phase).toBe("absent");
  });

  it("reports why an engine ended: SIGKILL as out of memory, an exit code as an error, an unwatched end as unknown", async () => {
    const rt = await newRuntime();
    const [a, b, c] = [
      "22222222-2222-4222-8222-222222222222",
      "33333333-3333-4333-8333-333333333333",
      "44444444-4444-4444-8444-444444444444",
    ];
    await Promise.all([a, b, c].map((u) => rt.start(spec(u))));
    await Promise.all([a, b, c].map((u) => ready(rt, u)));
    const exited = (uid: string) =>
      new Promise<void>((resolve) => {
        const off = rt.watch(async (u) => {
          if (u === uid && (await rt.inspect(uid)).phase === "exited") {
            off();
            resolve();
          }
        });
      });
    const aDone = exited(a);
    process.kill((await rt.pid(a))!, "SIGKILL");
    await aDone;
    expect(await rt.inspect(a)).toMatchObject({ phase: "exited", exit: { cause: "oom" } });
    const bDone = exited(b);
    const ep = (await rt.endpoint(b))!;
    await fetch(`http://${ep.host}:${ep.port}/engines/${b}/api/crash?code=7`);
    await bDone;
    expect(await rt.inspect(b)).toMatchObject({
      phase: "exited",
      exit: { cause: "error", message: "the engine process exited with code 7" },
    });
    // Ended while nobody watched: a new instance finds the pid file of a dead process.
    const pid = (await rt.pid(c))!;
    await rt.close();
    const other = await newRuntime(roots[roots.length - 1]);
    process.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    expect(await other.inspect(c)).toMatchObject({ phase: "exited", exit: { cause: "unknown" } });
  });
});
