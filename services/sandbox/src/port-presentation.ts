// A port as PortService answers it, with its URLs and its state as its sandbox is now; and, on
// Kubernetes, the sync of its objects (a Service, an HTTPRoute while public) with its row.
import { type Port, Port_State } from "@aiem/proto/enginemanager/sandbox/v1/port_pb.js";
import type { SandboxCall } from "./access.js";
import type { PortDeps } from "./port-handlers.js";
import { portState } from "./port-state.js";
import type { PortUrls } from "./port-urls.js";
import { decodePort, type PortRow } from "./store.js";

export interface PortPresenter {
  /** The port as answered; PENDING on Kubernetes until its objects exist as its row says. */
  present(call: SandboxCall, row: PortRow, justCreated?: boolean): Port;
  /** Makes (or changes) a port's objects in the background; the port reads PENDING until they exist. */
  syncObjects(row: Pick<PortRow, "sandbox_uid" | "port" | "public">): void;
}

export function createPortPresenter(deps: Pick<PortDeps, "urls" | "objects" | "logger">): PortPresenter {
  function syncObjects(row: Pick<PortRow, "sandbox_uid" | "port" | "public">): void {
    const publicUrl = row.public ? deps.urls.public(row.sandbox_uid, row.port) : undefined;
    deps.objects?.ensure(row.sandbox_uid, row.port, publicUrl).catch((error: unknown) =>
      deps.logger?.warn("could not make a port's objects in the cluster", {
        sandbox: row.sandbox_uid,
        port: row.port,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  }

  function present(call: SandboxCall, row: PortRow, justCreated = false): Port {
    const port = presentPort(deps.urls, call, row, justCreated);
    if (deps.objects && port.state === Port_State.READY && !deps.objects.ready(row.sandbox_uid, row.port, row.public)) {
      // Not made yet, or made before a change this replica missed: made now, READY once there.
      syncObjects(row);
      port.state = Port_State.PENDING;
    }
    return port;
  }

  return { present, syncObjects };
}

/** A port as answered: its URLs and its state as its sandbox is now. */
function presentPort(urls: PortUrls, call: SandboxCall, row: PortRow, justCreated = false): Port {
  const port = decodePort(row);
  port.public = row.public;
  port.internalUrl = urls.internal(row.sandbox_uid, row.port);
  port.publicUrl = row.public ? urls.public(row.sandbox_uid, row.port) : "";
  Object.assign(port, portState(call.row, justCreated));
  return port;
}
