import type { Logger } from "@aiem/kit/logger";
import type { Host } from "./create-host.js";

/**
 * Starts the host, then on SIGTERM or SIGINT stops it gracefully: no new connections,
 * in-flight requests finish, modules stop. A second signal exits at once.
 */
export async function runUntilSignal(
  host: Host,
  logger: Logger,
  onStarted?: () => void,
  /** After the host stopped, before the process ends (exports the last spans). */
  afterStop?: () => Promise<void>,
): Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn("second signal; exiting now", { signal });
      process.exit(1);
    }
    logger.info("stopping", { signal });
    stopping = host
      .stop()
      .then(() => afterStop?.())
      .then(
        () => logger.info("stopped"),
        (err: unknown) => {
          logger.error("stop failed", { err });
          process.exitCode = 1;
        },
      );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  try {
    await host.start();
  } catch (err) {
    // A half-started host (a taken port, a database that will not migrate) must not keep the
    // process alive through its modules' timers.
    await host.stop().catch(() => {});
    await afterStop?.().catch(() => {});
    throw err;
  }
  // A signal during the start has stopped what the start did: not ready, and nothing to wait for.
  if (stopping) return;
  onStarted?.();
}
