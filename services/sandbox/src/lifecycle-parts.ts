// What the parts of one lifecycle (its reconcile passes, its sweep, the handler of agents that
// end on their own) share.
import type { Logger } from "@aiem/kit/logger";
import type { AgentStarts } from "./agent-starts.js";
import type { ChangeHub } from "./change-hub.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
import type { SandboxActivity } from "./sandbox-activity.js";
import type { ServiceContext } from "./service-context.js";

export interface LifecycleParts {
  readonly context: ServiceContext;
  readonly runtime: LocalSandboxRuntime;
  readonly logger: Logger;
  readonly hub: ChangeHub;
  readonly placement: string;
  readonly starts: AgentStarts;
  readonly activity: SandboxActivity;
  /** Sandboxes whose agent just ended on its own, until that is recorded: not to be restarted. */
  readonly failing: Set<string>;
}
