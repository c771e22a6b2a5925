// The catalogue's internal API on the all-in-one server: a user's token does not open it, the
// internal key (kept in the data directory when AIEM_INTERNAL_KEY is unset) does, and the
// OpenAPI document leaves it out.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { SecretResolverService } from "@aiem/proto/enginemanager/internal/v1/secret_resolver_service_pb.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { createModuleFactories } from "./modules.js";

describe("internal API on the all-in-one server", () => {
  let t: TestHost;
  let secret: string;

  beforeAll(async () => {
    t = await startTestHost({ modules: createModuleFactories().filter((m) => m.name === "catalogue") });
    const res = await t.call("POST", "/v1/workspaces/default/secrets?secretId=k", { user: "alice", body: {} });
    secret = ((await res.json()) as { secret: { name: string } }).secret.name;
    await t.call("POST", `/v1/${secret}/versions`, {
      user: "alice",
      body: { value: Buffer.from("v4lue").toString("base64") },
    });
  }, 60_000);
  afterAll(() => t.stop());

  const client = () =>
    createClient(SecretResolverService, createConnectTransport({ baseUrl: t.url, httpVersion: "1.1" }));
  const request = () => ({
    principal: { name: "users/alice", subject: "alice" },
    secretVersion: `${secret}/versions/latest`,
    reveal: {
      sandboxEngine: "workspaces/default/sandboxEngines/s",
      target: SecretVersionRevealed_Target.FILE,
      destination: "/workspace/key",
    },
  });

  it("refuses a caller holding only a user's token, even an admin's", async () => {
    const token = await t.token("root", { admin: true });
    const err = await client()
      .resolveSecretValue(request(), { headers: { authorization: `Bearer ${token}` } })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.Unauthenticated);
    expect(err?.rawMessage).toContain("internal key");
  });

  it("answers a caller holding the data directory's internal key, for the principal it names", async () => {
    const key = (await readFile(join(t.dataDir, "keys", "internal.key"), "utf8")).trim();
    const res = await client().resolveSecretValue(request(), { headers: { "aiem-internal-key": key } });
    expect(res.name).toBe(`${secret}/versions/1`);
    expect(Buffer.from(res.value).toString()).toBe("v4lue");
  });

  it("is not in the OpenAPI document", async () => {
    const res = await t.call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("SecretVersionService");
    expect(text).not.toContain("SecretResolver");
    expect(text).not.toContain("enginemanager.internal");
  });
});
