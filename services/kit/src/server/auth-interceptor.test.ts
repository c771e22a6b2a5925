import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import { createAuthenticator } from "../identity/authenticator.js";
import { mintEmbeddedToken } from "../identity/embedded-token.js";
import { loadOrCreateSigningKey } from "../identity/signing-key.js";
import { createAuthInterceptor } from "./auth-interceptor.js";
import { principalOf } from "./principal-context.js";

let dataDir: string;
let token: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "aiem-auth-"));
  token = await mintEmbeddedToken(await loadOrCreateSigningKey(dataDir), { user: "alice", displayName: "Alice" });
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

function client() {
  const transport = createRouterTransport(
    (router) =>
      router.service(NotebookEngineImageService, {
        getNotebookEngineImage(req, ctx) {
          const caller = principalOf(ctx);
          return {
            notebookEngineImage: { name: req.name, creator: caller.name, creatorDisplayName: caller.displayName },
          };
        },
      }),
    { router: { interceptors: [createAuthInterceptor(createAuthenticator({ dataDir }))] } },
  );
  return createClient(NotebookEngineImageService, transport);
}

describe("auth interceptor", () => {
  it("hands the verified principal to the handler", async () => {
    const res = await client().getNotebookEngineImage(
      { name: "workspaces/global/notebookEngineImages/x" },
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(res.notebookEngineImage?.creator).toBe("users/alice");
    expect(res.notebookEngineImage?.creatorDisplayName).toBe("Alice");
  });

  it.each([
    ["no header", undefined],
    ["not a bearer token", "Basic abc"],
    ["a malformed token", "Bearer not.a.jwt"],
  ])("rejects %s with UNAUTHENTICATED before the handler runs", async (_, header) => {
    const err = await client()
      .getNotebookEngineImage(
        { name: "workspaces/global/notebookEngineImages/x" },
        header ? { headers: { authorization: header } } : {},
      )
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });
});
