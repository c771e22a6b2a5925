// What the `local` runtime is configured with.
import type { Logger } from "@aiem/kit/logger";

export interface LocalRuntimeOptions {
  /** Where engine directories live, usually `<AIEM_DATA_DIR>/engines`. */
  readonly root: string;
  /** The Jupyter Notebook executable for notebook engines; undefined runs the stand-in for them too. */
  readonly jupyterCommand?: string | undefined;
  /** What H2O engines run: real H2O-3 (Java and the server jar, checked at each start) or the stand-in. */
  readonly h2o: H2OServer;
  /** Milliseconds a starting engine is probed for before the probe gives up (the reconciler fails it). */
  readonly startTimeoutMs: number;
  /** Milliseconds between SIGTERM and SIGKILL when stopping. */
  readonly stopTimeoutMs: number;
  readonly logger: Logger;
}

export type H2OServer =
  | {
      readonly kind: "h2o-3" /** The java executable (a path or a name on the PATH). */;
      readonly java: string /** The H2O-3 server jar. */;
      readonly jar: string;
    }
  | { readonly kind: "stand-in" };
