// The authorization policy every service's tests run under, and who is who in it. One policy, so
// a name means the same caller in every suite.

/** The workspace most tests work in. */
export const TEST_WORKSPACE = "team-a";

/** A workspace named, as many are, by a UUID: its id starts with a digit. */
export const UUID_WORKSPACE = "8cf6b17d-c018-48f0-8d05-cdd5fba22893";

/**
 * The users of the policy by role: `root` administers everything; `alice` and `bob` are members of
 * team-a and `carol` its viewer; `bob` and `erin` are members of team-b, so `erin` is a stranger to
 * team-a; `dave` is in no workspace.
 */
export const TEST_USERS = {
  admin: "root",
  member: "alice",
  secondMember: "bob",
  viewer: "carol",
  otherWorkspaceMember: "erin",
  stranger: "dave",
} as const;

export const TEST_POLICY = `
admins: [users/root]
workspaces:
  team-a:
    members: [users/alice, users/bob]
    viewers: [users/carol]
  team-b:
    members: [users/bob, users/erin]
  team-c:
    viewers: [users/alice]
  list-ws:
    members: [users/alice, users/bob]
  ${UUID_WORKSPACE}:
    members: [users/alice, users/bob]
`;
