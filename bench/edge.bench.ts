// Edge overhead benchmark (issue 4): a GET of one resource through REST at the edge against the
// same call through Connect straight to the service, 32 concurrent keep-alive clients, plus a bare
// node:http server answering a fixed JSON body as the ceiling.
//
//   npx tsx bench/edge.bench.ts [--seconds 5] [--rounds 3] [--concurrency 32]
//
// The servers run in a child process so the load generator does not share their event loop.
// Rounds alternate between the targets so drift (CPU frequency, GC, noisy neighbours) hits
// all of them alike. Goal: edge p50 <= 1.25 x direct p50 and edge rps >= 0.75 x direct rps.
import { fork } from "node:child_process";
import { Agent, createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ImagePullPolicy } from "@aiem/proto/enginemanager/v1/image_pull_policy_pb.js";
import {
  NotebookEngineImageSchema,
  type NotebookEngineImage,
} from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import {
  GetNotebookEngineImageResponseSchema,
  NotebookEngineImageService,
} from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import { createEdgeHandler, createEdgeServer, createInProcessServices, loadImageRegistry } from "../edge/src/index.js";

const NAME = "workspaces/global/notebookEngineImages/jupyter-lab-4";

// A small in-memory catalogue: the service side of the call, the same in every target.
function routes(router: ConnectRouter): void {
  const images = new Map<string, NotebookEngineImage>();
  const now = timestampFromDate(new Date("2026-11-21T06:00:00Z"));
  for (const id of ["jupyter-lab-4", "rstudio-2024", "vscode-1"]) {
    const name = `workspaces/global/notebookEngineImages/${id}`;
    images.set(
      name,
      create(NotebookEngineImageSchema, {
        name,
        displayName: `Image ${id}`,
        image: `registry.example.com/notebooks/${id}:1.0.0`,
        enabled: true,
        imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT,
        imagePullSecrets: ["regcred"],
        createTime: now,
        updateTime: now,
        creator: "users/admin",
        updater: "users/admin",
        creatorDisplayName: "Admin",
        updaterDisplayName: "Admin",
      }),
    );
  }
  router.service(NotebookEngineImageService, {
    getNotebookEngineImage(req) {
      const image = images.get(req.name);
      if (!image) throw new ConnectError(`${req.name} not found`, Code.NotFound);
      return create(GetNotebookEngineImageResponseSchema, { notebookEngineImage: image });
    },
  });
}

interface Ports {
  bare: number;
  direct: number;
  edge: number;
  edgeSerialising: number;
}

async function serve(): Promise<void> {
  const listen = (server: ReturnType<typeof createServer>) =>
    new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );

  const fixed = JSON.stringify({
    notebookEngineImage: { name: NAME, displayName: "Image jupyter-lab-4", enabled: true },
  });
  const bare = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(fixed) });
    res.end(fixed);
  });
  bare.keepAliveTimeout = 65_000;

  const direct = createServer(connectNodeAdapter({ routes }));
  direct.keepAliveTimeout = 65_000;

  const registry = loadImageRegistry();
  const edge = createEdgeServer(createEdgeHandler({ registry, ...createInProcessServices(routes, registry) }));
  const { port: edgePort } = await edge.listen(0, "127.0.0.1");
  // For information: the same edge reaching the service through a transport that encodes to
  // binary and back, as a hop to a remote service would (minus the network).
  const service = registry.getService(NotebookEngineImageService.typeName)!;
  const serialising = createEdgeServer(
    createEdgeHandler({ registry, services: [{ service, transport: createRouterTransport(routes) }] }),
  );
  const { port: serialisingPort } = await serialising.listen(0, "127.0.0.1");

  const ports: Ports = {
    bare: await listen(bare),
    direct: await listen(direct),
    edge: edgePort,
    edgeSerialising: serialisingPort,
  };
  process.send?.(ports);
}

interface Target {
  readonly label: string;
  readonly method: string;
  readonly port: number;
  readonly path: string;
  readonly body?: string;
  readonly headers: IncomingHttpHeaders;
}

interface Samples {
  latenciesUs: number[];
  requests: number;
  errors: number;
  seconds: number;
}

async function drive(
  target: Target,
  agent: Agent,
  concurrency: number,
  seconds: number,
  record: boolean,
  into: Samples,
) {
  const deadline = performance.now() + seconds * 1000;
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(
        {
          host: "127.0.0.1",
          port: target.port,
          method: target.method,
          path: target.path,
          agent,
          headers: target.headers,
        },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => {
            if (record) {
              if (res.statusCode === 200) {
                into.latenciesUs.push((performance.now() - started) * 1000);
                into.requests++;
              } else into.errors++;
            }
            resolve();
          });
        },
      );
      req.on("error", () => {
        if (record) into.errors++;
        resolve();
      });
      req.end(target.body);
    });
  const worker = async () => {
    while (performance.now() < deadline) await once();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (record) into.seconds += (performance.now() - t0) / 1000;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "5" },
      rounds: { type: "string", default: "3" },
      concurrency: { type: "string", default: "32" },
      warmup: { type: "string", default: "2" },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const concurrency = Number(values.concurrency);
  const warmup = Number(values.warmup);

  const child = fork(fileURLToPath(import.meta.url), ["--serve"], { execArgv: process.execArgv, stdio: "inherit" });
  const ports = await new Promise<Ports>((resolve, reject) => {
    child.once("message", (m) => resolve(m as Ports));
    child.once("exit", (code) => reject(new Error(`server process exited with ${code}`)));
  });

  try {
    const json = { "content-type": "application/json" };
    const connectBody = JSON.stringify({ name: NAME });
    const targets: Target[] = [
      { label: "bare node:http (ceiling)", method: "GET", port: ports.bare, path: "/", headers: {} },
      {
        label: "Connect straight to service",
        method: "POST",
        port: ports.direct,
        path: "/enginemanager.v1.NotebookEngineImageService/GetNotebookEngineImage",
        body: connectBody,
        headers: { ...json, "content-length": String(Buffer.byteLength(connectBody)) },
      },
      { label: "REST through the edge", method: "GET", port: ports.edge, path: `/v1/${NAME}`, headers: {} },
      {
        label: "Connect through the edge",
        method: "POST",
        port: ports.edge,
        path: "/enginemanager.v1.NotebookEngineImageService/GetNotebookEngineImage",
        body: connectBody,
        headers: { ...json, "content-length": String(Buffer.byteLength(connectBody)) },
      },
      {
        label: "REST, edge, router transport",
        method: "GET",
        port: ports.edgeSerialising,
        path: `/v1/${NAME}`,
        headers: {},
      },
    ];

    // Check every target answers what we expect before measuring anything.
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    for (const t of targets) {
      const probe: Samples = { latenciesUs: [], requests: 0, errors: 0, seconds: 0 };
      await drive(t, agent, 1, 0.05, true, probe);
      if (probe.errors > 0 || probe.requests === 0) throw new Error(`${t.label} does not answer 200`);
    }

    const results = new Map<string, Samples>(
      targets.map((t) => [t.label, { latenciesUs: [], requests: 0, errors: 0, seconds: 0 }]),
    );
    for (const t of targets) await drive(t, agent, concurrency, warmup, false, results.get(t.label)!);
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) await drive(t, agent, concurrency, seconds, true, results.get(t.label)!);
    }
    agent.destroy();

    const summary = targets.map((t) => {
      const s = results.get(t.label)!;
      const sorted = s.latenciesUs.sort((a, b) => a - b);
      return {
        label: t.label,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        rps: s.requests / s.seconds,
        errors: s.errors,
      };
    });
    console.log(
      `\nedge benchmark: ${concurrency} concurrent keep-alive clients, ${rounds} x ${seconds}s per target (after ${warmup}s warm-up)\n`,
    );
    console.log("target                          p50 (ms)   p99 (ms)        rps   errors");
    for (const r of summary) {
      console.log(
        `${r.label.padEnd(30)} ${(r.p50 / 1000).toFixed(3).padStart(9)} ${(r.p99 / 1000).toFixed(3).padStart(10)} ${r.rps.toFixed(0).padStart(10)} ${String(r.errors).padStart(8)}`,
      );
    }
    const [bare, direct, edge] = summary as [(typeof summary)[0], (typeof summary)[0], (typeof summary)[0]];
    // The goal is about the first three rows; the others are for information.
    const p50Ratio = edge.p50 / direct.p50;
    const rpsRatio = edge.rps / direct.rps;
    console.log(
      `\nedge vs direct: p50 x${p50Ratio.toFixed(3)} (goal <= 1.25), throughput x${rpsRatio.toFixed(3)} (goal >= 0.75)`,
    );
    console.log(
      `edge vs ceiling: throughput x${(edge.rps / bare.rps).toFixed(3)}; direct vs ceiling: x${(direct.rps / bare.rps).toFixed(3)}`,
    );
    const pass = p50Ratio <= 1.25 && rpsRatio >= 0.75;
    console.log(pass ? "PASS" : "FAIL");
    process.exitCode = pass ? 0 : 1;
  } finally {
    child.kill();
  }
}

if (process.argv.includes("--serve")) {
  await serve();
} else {
  await main();
}
