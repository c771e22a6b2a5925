// What one host's start and stop share: what it was given and made up front (HostSetup), and
// what its start opens, for its stop to close (HostState).
import type { FileRegistry } from "@bufbuild/protobuf";
import type { Policy } from "@aiem/kit/authz";
import type { CommonConfig } from "@aiem/kit/config";
import type { EventBus } from "@aiem/kit/events";
import type { Logger } from "@aiem/kit/logger";
import type { Metrics, MetricsServer } from "@aiem/kit/observability";
import type { ServiceModule } from "@aiem/kit/server";
import type { EdgeServer } from "../server/front-door.js";
import type { HostOptions } from "./create-host.js";
import type { HostIdentity } from "./host-identity.js";
import type { PartName } from "./parts.js";
import type { ReplicaPool } from "./replica-pool.js";

export interface HostSetup {
  readonly options: HostOptions;
  readonly config: CommonConfig;
  readonly logger: Logger;
  readonly registry: FileRegistry;
  readonly policy: Policy;
  readonly identity: HostIdentity;
  readonly metrics: Metrics | undefined;
  /** AIEM_PUBLIC_URL, else the host's address; with AIEM_PORT=0 known once listening. */
  publicUrl(): string;
}

export interface HostState {
  readonly modules: ServiceModule[];
  bus: EventBus | undefined;
  server: EdgeServer | undefined;
  metricsServer: MetricsServer | undefined;
  pools: Partial<Record<PartName, ReplicaPool>>;
  /** `http://host:port` once listening; empty before. */
  url: string;
  listeningPort: number | undefined;
  /** Set by a stop; the start leaves out what is left of it. */
  stopRequested: boolean;
}
