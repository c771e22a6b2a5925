// The fixed parts of the sandbox tests: the policy, the users, the workspaces, the agent's cache.
import * as os from "node:os";
import * as path from "node:path";

export const TEST_POLICY = `
admins: [users/root]
workspaces:
  team-a:
    members: [users/alice, users/bob]
    viewers: [users/carol]
  team-b:
    members: [users/bob]
  team-c:
    viewers: [users/alice]
  list-ws:
    members: [users/alice, users/bob]
  8cf6b17d-c018-48f0-8d05-cdd5fba22893:
    members: [users/alice, users/bob]
`;

/** A workspace named, as many are, by a UUID: its id starts with a digit. */
export const UUID_WS = "8cf6b17d-c018-48f0-8d05-cdd5fba22893";

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
