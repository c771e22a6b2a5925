// A launch's limits: storage as an ext4 image (else a per-file rlimit), memory, CPU and
// processes as a cgroup (else the rlimit fallback for memory), and what each came to.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type AppliedLimit,
  type AppliedLimits,
  MIN_STORAGE_BYTES,
  type SandboxCgroup,
  type SandboxLimits,
  createSandboxCgroup,
} from "./limits.js";
import { SandboxRuntimeError } from "./runtime-types.js";
import type { RuntimeState } from "./runtime-state.js";

export interface LaunchLimits {
  readonly applied: AppliedLimits;
  readonly cgroup: SandboxCgroup | undefined;
  /** The sandbox's storage image, mounted as its root, when it has one. */
  readonly imagePath: string | undefined;
  /** Whether the image was made (or taken from the spares) for this start: never mounted yet. */
  readonly imageFresh: boolean;
  /** Where the image's mount, made ahead, is held for the launcher (storage-images.ts). */
  readonly premounted?: string | undefined;
}

async function applyStorage(
  state: RuntimeState,
  sandboxId: string,
  dir: string,
  limits: SandboxLimits,
): Promise<{
  storage: AppliedLimit;
  imagePath: string | undefined;
  imageFresh: boolean;
  premounted?: string | undefined;
}> {
  const { support } = state;
  const storageBytes = Number(limits.storageBytes ?? 0);
  const existingImage = path.join(dir, "root.img");
  // A sandbox whose files live in an image keeps using it, whatever this start asks for.
  const hasImage = fs.existsSync(existingImage);
  if (!hasImage && storageBytes <= 0) {
    return {
      storage: { mechanism: "none", note: "no storage limit requested" },
      imagePath: undefined,
      imageFresh: false,
    };
  }
  if (support.storageImages) {
    if (!hasImage) state.reservedStorage.set(sandboxId, Math.max(storageBytes, MIN_STORAGE_BYTES));
    const image = await state.images
      .ensure(existingImage, storageBytes)
      .finally(() => state.reservedStorage.delete(sandboxId));
    const note = image.size !== storageBytes ? `the image is ${image.size} bytes` : undefined;
    const storage: AppliedLimit = { mechanism: "loop-ext4", value: image.size, note };
    return { storage, imagePath: existingImage, imageFresh: image.created, premounted: image.premounted };
  }
  if (hasImage) {
    throw new SandboxRuntimeError(
      "start-failed",
      `sandbox ${sandboxId} keeps its files in a storage image, which cannot be mounted here: ${support.storageUnavailableReason}`,
    );
  }
  const note = `RLIMIT_FSIZE per file: ${support.storageUnavailableReason}`;
  return { storage: { mechanism: "rlimit", value: storageBytes, note }, imagePath: undefined, imageFresh: false };
}

/** Makes the sandbox's storage image and cgroup, after the removal of an earlier cgroup of it. */
export async function applyLimits(
  state: RuntimeState,
  sandboxId: string,
  dir: string,
  limits: SandboxLimits,
): Promise<LaunchLimits> {
  const { support } = state;
  const { storage, imagePath, imageFresh, premounted } = await applyStorage(state, sandboxId, dir, limits);
  await state.cleanups.get(sandboxId);
  const cgroup = support.cgroup
    ? createSandboxCgroup(support.cgroup, state.groupName, sandboxId, limits, state.maxProcesses)
    : undefined;
  const memoryBytes = Number(limits.memoryBytes ?? 0);
  const memory: AppliedLimit =
    cgroup && cgroup.applied.memory.mechanism !== "none"
      ? cgroup.applied.memory
      : memoryBytes > 0
        ? {
            mechanism: "rlimit",
            value: memoryBytes,
            note: "RLIMIT_AS per process (virtual memory), no cgroup memory controller",
          }
        : { mechanism: "none", note: "no memory limit requested" };
  const cpu: AppliedLimit = cgroup?.applied.cpu ?? {
    mechanism: "none",
    note:
      (limits.milliCpuLimit ?? 0) > 0 ? `not enforced: ${support.cgroupUnavailableReason}` : "no CPU limit requested",
  };
  const processes: AppliedLimit = cgroup?.applied.processes ?? {
    mechanism: "none",
    note: `not enforced: ${support.cgroupUnavailableReason}`,
  };
  return { applied: { memory, cpu, processes, storage }, cgroup, imagePath, imageFresh, premounted };
}
