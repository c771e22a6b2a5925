import { containerStatus } from "@aiem/kit/testing";
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { engineStatusOf, h2oStatusOf } from "./pod-state.js";

const pod = (status: V1Pod["status"], metadata: V1Pod["metadata"] = { name: "engine-u" }): V1Pod => ({
  metadata,
  status,
});

describe("engine status from its pod", () => {
  it("is absent without pod or claim, stopped with only the claim", () => {
    expect(engineStatusOf(undefined, false)).toEqual({ phase: "absent", dataPresent: false });
    expect(engineStatusOf(undefined, true)).toEqual({ phase: "stopped", dataPresent: true });
  });

  it("is stopped while the pod is being deleted", () => {
    const leaving = pod({ phase: "Running" }, { name: "engine-u", deletionTimestamp: new Date() });
    expect(engineStatusOf(leaving, true).phase).toBe("stopped");
  });

  it("is starting with the scheduler's reason when no node fits", () => {
    const status = engineStatusOf(
      pod({
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
          },
        ],
      }),
      true,
    );
    expect(status).toEqual({
      phase: "starting",
      dataPresent: true,
      pending: { reason: "Unschedulable", message: "0/2 nodes are available: 2 Insufficient nvidia.com/gpu." },
    });
  });

  it("reports an image that cannot be pulled, not the normal container creation", () => {
    const waiting = (reason: string) =>
      pod({
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "True" }],
        containerStatuses: [containerStatus("driverless-ai", { waiting: { reason, message: `${reason} for i` } })],
      });
    expect(engineStatusOf(waiting("ImagePullBackOff"), true).pending).toEqual({
      reason: "ImagePullBackOff",
      message: "ImagePullBackOff for i",
    });
    expect(engineStatusOf(waiting("ContainerCreating"), true)).toEqual({ phase: "starting", dataPresent: true });
  });

  it("is ready only when the pod runs and its Ready condition holds", () => {
    expect(
      engineStatusOf(pod({ phase: "Running", conditions: [{ type: "Ready", status: "False" }] }), true).phase,
    ).toBe("starting");
    expect(engineStatusOf(pod({ phase: "Running", conditions: [{ type: "Ready", status: "True" }] }), true).phase).toBe(
      "ready",
    );
  });

  it("exits with oom when a container was killed for memory, with the exit code otherwise", () => {
    const terminated = (reason: string, exitCode: number) =>
      pod({
        phase: "Failed",
        containerStatuses: [containerStatus("driverless-ai", { terminated: { reason, exitCode } })],
      });
    expect(engineStatusOf(terminated("OOMKilled", 137), true).exit?.cause).toBe("oom");
    expect(engineStatusOf(terminated("Error", 3), true)).toEqual({
      phase: "exited",
      dataPresent: true,
      exit: { cause: "error", message: "container driverless-ai exited with code 3 (Error)" },
    });
  });

  it("takes the pod's own reason when no container says why (eviction)", () => {
    const evicted = pod({ phase: "Failed", reason: "Evicted", message: "The node was low on resource: memory." });
    expect(engineStatusOf(evicted, true).exit).toEqual({
      cause: "error",
      message: "Evicted: The node was low on resource: memory.",
    });
  });
});

describe("an H2O engine's status from all its nodes", () => {
  const running = (name: string): V1Pod =>
    pod({ phase: "Running", conditions: [{ type: "Ready", status: "True" }] }, { name });
  const nodes = ["engine-u-0", "engine-u-1"];

  it("is ready only when every node is", () => {
    expect(h2oStatusOf(nodes.map(running), 2, true)).toEqual({ phase: "ready", dataPresent: false });
    const starting = [running("engine-u-0"), pod({ phase: "Running" }, { name: "engine-u-1" })];
    expect(h2oStatusOf(starting, 2, true).phase).toBe("starting");
  });

  it("is stopped with no pods and its Service kept, absent without either", () => {
    expect(h2oStatusOf([], 2, true)).toEqual({ phase: "stopped", dataPresent: false });
    expect(h2oStatusOf([], 2, false)).toEqual({ phase: "absent", dataPresent: false });
  });

  it("is stopped when a node is missing: the cloud is started again as a whole", () => {
    expect(h2oStatusOf([running("engine-u-0")], 2, true).phase).toBe("stopped");
    const leaving = pod({ phase: "Running" }, { name: "engine-u-1", deletionTimestamp: new Date() });
    expect(h2oStatusOf([running("engine-u-0"), leaving], 2, true).phase).toBe("stopped");
  });

  it("has exited, naming the node, when one node ended", () => {
    const oom = pod(
      {
        phase: "Failed",
        containerStatuses: [containerStatus("h2o", { terminated: { exitCode: 137, reason: "OOMKilled" } })],
      },
      { name: "engine-u-1" },
    );
    const status = h2oStatusOf([running("engine-u-0"), oom], 2, true);
    expect(status.phase).toBe("exited");
    expect(status.exit?.cause).toBe("oom");
    expect(status.exit?.message).toMatch(/^engine-u-1: container h2o was killed/);
  });

  it("waits with the reason of the first node that waits", () => {
    const unschedulable = pod(
      {
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/2 nodes" }],
      },
      { name: "engine-u-1" },
    );
    expect(h2oStatusOf([running("engine-u-0"), unschedulable], 2, true)).toEqual({
      phase: "starting",
      dataPresent: false,
      pending: { reason: "Unschedulable", message: "engine-u-1: 0/2 nodes" },
    });
  });
});
