// The fixed parts of the sandbox tests: the policy, the users, the workspaces, the agent's cache.
import * as os from "node:os";
import * as path from "node:path";

export { TEST_POLICY, UUID_WORKSPACE as UUID_WS } from "@aiem/kit/testing";

export type Who = "creator" | "member" | "admin" | "viewer" | "anonymous";
export const USERS: Record<Exclude<Who, "anonymous">, string> = {
  creator: "alice",
  member: "bob",
  admin: "root",
  viewer: "carol",
};
export const WS = "team-a";
/** Shared by every test run on this machine: the agent is bundled and the helper compiled once. */
export const AGENT_CACHE = path.join(os.tmpdir(), "aiem-agent-cache-test");
/** A sandbox's resources small enough for any test node: 100m to 200m CPU, 10 to 20 MiB memory, 10 MiB storage. */
export const SMALL_SANDBOX = {
  milliCpuRequest: 100,
  milliCpuLimit: 200,
  memoryBytesRequest: 10n << 20n,
  memoryBytesLimit: 20n << 20n,
  storageBytes: 10n << 20n,
} as const;
