// What the sandbox's callers see when the catalogue's process cannot be reached.
import { createServer } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createLogger } from "@aiem/kit/logger";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { createRemoteSecretResolver } from "./remote-secret-resolver.js";

// A port that was free a moment ago: nothing listens on it.
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("remote secret resolver", () => {
  it("answers UNAVAILABLE naming the catalogue when nothing listens there", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const resolver = createRemoteSecretResolver({
      catalogueUrl: url,
      internalKey: "x",
      logger: createLogger({ level: "error" }),
    });
    const principal = { name: "users/a", subject: "a", displayName: "a", roles: [], admin: false };
    const reveal = {
      sandboxEngine: "workspaces/w/sandboxEngines/s",
      target: SecretVersionRevealed_Target.FILE,
      destination: "/workspace/key",
    };
    const err = await resolver.resolveSecretValue(principal, "workspaces/w/secrets/s/versions/1", reveal).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.Unavailable);
    expect(err?.rawMessage).toContain(`the catalogue at ${url} cannot be reached to resolve secrets`);
  });
});
