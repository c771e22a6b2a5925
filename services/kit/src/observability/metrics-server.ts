// `/metrics` on a port of its own: what Prometheus scrapes is not the API's public origin and
// needs no user's token, so it is kept off the API port altogether.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.js";

export interface MetricsServer {
  /** `http://host:port/metrics`, with the port bound (port 0 picks a free one). */
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  metrics: Metrics;
  port: number;
  host: string;
}): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(path === "/metrics" ? 405 : 404, { "content-type": "text/plain" }).end("see /metrics\n");
      return;
    }
    options.metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (err: unknown) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`metrics could not be collected: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  });
  // Scrapers keep connections open; they must not hold a stopping process up.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(
        err.code === "EADDRINUSE"
          ? new MetricsPortInUseError(
              `AIEM_METRICS_PORT ${options.port} on ${options.host} is in use by another process; give each process its own metrics port, or 0 to turn metrics off`,
            )
          : err,
      );
    };
    server.once("error", onError);
    server.listen(options.port, options.host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export class MetricsPortInUseError extends Error {
  override readonly name = "MetricsPortInUseError";
}
