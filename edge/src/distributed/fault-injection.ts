// The faults, one at a time with workload between them: replicas SIGKILLed and started again,
// NATS restarted, PostgreSQL crashed (immediate shutdown) and restarted, the edge SIGKILLed.
import type { Cluster, Replica } from "./cluster.js";
import type { PrivateServer } from "./private-servers.js";

export interface FaultPlan {
  readonly cluster: Cluster;
  readonly pg: PrivateServer;
  readonly nats: PrivateServer;
  /** Every service replica killed in turn (true), or one replica of each part (false). */
  readonly everyReplica: boolean;
  readonly rounds: number;
  /** Workload between two faults (ms). */
  readonly gapMs: number;
  readonly log: (line: string) => void;
}

export interface InjectedFaults {
  readonly faults: string[];
  /** Sandbox replica name -> when it was last killed (its agents' outputs may be lost since). */
  readonly killedSandboxReplicaAt: Map<string, number>;
}

/** Injects the faults of `plan`, recording each in `injected` as it happens. */
export async function injectFaults(plan: FaultPlan, injected: InjectedFaults): Promise<void> {
  const { cluster, log } = plan;
  const pause = () => new Promise((r) => setTimeout(r, plan.gapMs));
  const replicaFaults: Replica[] = plan.everyReplica
    ? [...cluster.replicas]
    : ["catalogue-0", "engine-1", "sandbox-0"].map((n) => cluster.replicas.find((r) => r.name === n)!);
  await pause();
  for (let round = 0; round < plan.rounds; round++) {
    for (const replica of replicaFaults) {
      log(`fault: SIGKILL ${replica.name}`);
      await cluster.stop(replica, "SIGKILL");
      if (replica.part === "sandbox") injected.killedSandboxReplicaAt.set(replica.name, Date.now());
      injected.faults.push(`SIGKILL ${replica.name}`);
      await pause();
      await cluster.start(replica);
      await pause();
    }
    log("fault: restart NATS");
    await plan.nats.restart();
    injected.faults.push("restart NATS");
    await pause();
    log("fault: crash and restart PostgreSQL");
    await plan.pg.restart();
    injected.faults.push("restart PostgreSQL");
    await pause();
    log("fault: SIGKILL the edge");
    await cluster.stop(cluster.edge, "SIGKILL");
    injected.faults.push("SIGKILL edge");
    await cluster.start(cluster.edge);
    await pause();
  }
}
