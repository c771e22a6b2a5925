import { SandboxEngine_PendingReason as Reason } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { containerStatus } from "@aiem/kit/testing";
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { sandboxStatusOf } from "./sandbox-status.js";

const pod = (status: V1Pod["status"], nodeName?: string): V1Pod => ({
  metadata: { name: "engine-x", uid: "p1" },
  spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
  status,
});

describe("a sandbox's state from its pod", () => {
  it("is absent without objects and lost when only its pod is gone", () => {
    expect(sandboxStatusOf(undefined, false)).toEqual({ state: "absent" });
    expect(sandboxStatusOf(undefined, true)).toEqual({ state: "lost" });
  });

  it("waits for a node, an image, its containers and its agent, saying which", () => {
    const unschedulable = pod({
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/2 nodes" }],
    });
    expect(sandboxStatusOf(unschedulable, true).pending).toEqual({
      reason: Reason.SCHEDULING,
      message: "Unschedulable: 0/2 nodes",
    });
    const pulling = pod(
      {
        phase: "Pending",
        containerStatuses: [
          containerStatus("sandbox", { waiting: { reason: "ImagePullBackOff", message: "no such image" } }),
        ],
      },
      "n1",
    );
    expect(sandboxStatusOf(pulling, true).pending).toEqual({
      reason: Reason.PULLING_IMAGE,
      message: "ImagePullBackOff: no such image",
    });
    expect(sandboxStatusOf(pod({ phase: "Pending" }, "n1"), true).pending?.reason).toBe(Reason.CONTAINER_CREATING);
    const mounting = sandboxStatusOf(pod({ phase: "Pending" }, "n1"), true, () => ({
      reason: "FailedMount",
      message: "no volume",
    }));
    expect(mounting.pending).toEqual({ reason: Reason.CONTAINER_CREATING, message: "FailedMount: no volume" });
    expect(sandboxStatusOf(pod({ phase: "Running" }, "n1"), true).pending?.reason).toBe(Reason.WAITING_READINESS);
  });

  it("runs once ready and fails with why its pod ended", () => {
    expect(
      sandboxStatusOf(pod({ phase: "Running", conditions: [{ type: "Ready", status: "True" }] }, "n1"), true),
    ).toEqual({
      state: "running",
    });
    const ended = pod(
      {
        phase: "Failed",
        containerStatuses: [containerStatus("sandbox", { terminated: { exitCode: 2 } })],
      },
      "n1",
    );
    expect(sandboxStatusOf(ended, true)).toEqual({
      state: "failed",
      failure: "the sandbox's pod ended: container sandbox exited with code 2",
    });
  });
});
