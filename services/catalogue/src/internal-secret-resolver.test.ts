// The internal SecretResolverService's first line: the shared key, checked before anything else.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { Principal } from "@aiem/kit/identity";
import { createLogger } from "@aiem/kit/logger";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import {
  ActingPrincipalSchema,
  SecretResolverService,
  SecretRevealSchema,
} from "@aiem/proto/enginemanager/internal/v1/secret_resolver_service_pb.js";
import { INTERNAL_KEY_HEADER, internalKeyMatches, registerInternalSecretResolver } from "./internal-secret-resolver.js";
import type { SecretReveal } from "./secret-reveal.js";

const key = randomBytes(32);
const keyText = key.toString("base64");

function setup() {
  const asked: { principal: Principal; name: string; reveal: SecretReveal }[] = [];
  const transport = createRouterTransport((router) =>
    registerInternalSecretResolver(router, {
      internalKey: () => key,
      resolveSecretValue: async (principal, name, reveal) => {
        asked.push({ principal, name, reveal });
        return { name: name.replace(/latest$/, "2"), value: new TextEncoder().encode(`value of ${name}`) };
      },
      guard: { logger: createLogger({ level: "error" }), label: "catalogue" },
    }),
  );
  return { asked, client: createClient(SecretResolverService, transport) };
}

const request = {
  principal: create(ActingPrincipalSchema, {
    name: "users/alice",
    subject: "alice",
    displayName: "Alice",
    roles: ["ds"],
    admin: false,
  }),
  secretVersion: "workspaces/team-a/secrets/s/versions/latest",
  reveal: create(SecretRevealSchema, {
    sandboxEngine: "workspaces/team-a/sandboxEngines/box",
    target: SecretVersionRevealed_Target.ENVIRONMENT_VARIABLE,
    destination: "API_KEY",
    process: "workspaces/team-a/sandboxEngines/box/processes/p",
  }),
};

async function codeOf(call: Promise<unknown>): Promise<Code | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

describe("internal SecretResolverService", () => {
  it("answers UNAUTHENTICATED without the key, with another key or with garbage, and resolves nothing", async () => {
    const { asked, client } = setup();
    expect(await codeOf(client.resolveSecretValue(request))).toBe(Code.Unauthenticated);
    expect(
      await codeOf(
        client.resolveSecretValue(request, { headers: { [INTERNAL_KEY_HEADER]: randomBytes(32).toString("base64") } }),
      ),
    ).toBe(Code.Unauthenticated);
    expect(
      await codeOf(client.resolveSecretValue(request, { headers: { [INTERNAL_KEY_HEADER]: "not base64 at all!" } })),
    ).toBe(Code.Unauthenticated);
    expect(
      await codeOf(client.resolveSecretValue(request, { headers: { [INTERNAL_KEY_HEADER]: keyText.slice(0, 20) } })),
    ).toBe(Code.Unauthenticated);
    expect(asked).toEqual([]);
  });

  it("with the key, resolves for the principal the call carries", async () => {
    const { asked, client } = setup();
    const res = await client.resolveSecretValue(request, { headers: { [INTERNAL_KEY_HEADER]: keyText } });
    expect(res.name).toBe("workspaces/team-a/secrets/s/versions/2");
    expect(new TextDecoder().decode(res.value)).toBe(`value of ${request.secretVersion}`);
    expect(asked).toEqual([
      {
        principal: { name: "users/alice", subject: "alice", displayName: "Alice", roles: ["ds"], admin: false },
        name: request.secretVersion,
        reveal: {
          sandboxEngine: "workspaces/team-a/sandboxEngines/box",
          target: SecretVersionRevealed_Target.ENVIRONMENT_VARIABLE,
          destination: "API_KEY",
          process: "workspaces/team-a/sandboxEngines/box/processes/p",
        },
      },
    ]);
  });

  it("needs a principal", async () => {
    const { asked, client } = setup();
    const call = client.resolveSecretValue(
      { secretVersion: request.secretVersion },
      { headers: { [INTERNAL_KEY_HEADER]: keyText } },
    );
    await expect(call).rejects.toMatchObject({ code: Code.InvalidArgument });
    expect(asked).toEqual([]);
  });

  it("needs to know where the value goes, for the audit record", async () => {
    const { asked, client } = setup();
    const headers = { [INTERNAL_KEY_HEADER]: keyText };
    const without = async (reveal: unknown, field: string) => {
      const err = await client.resolveSecretValue({ ...request, reveal } as never, { headers }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.InvalidArgument);
      expect(err?.rawMessage).toContain(field);
    };
    await without(undefined, "reveal.sandbox_engine");
    await without({ ...request.reveal, target: SecretVersionRevealed_Target.UNSPECIFIED }, "reveal.target");
    await without({ ...request.reveal, destination: "" }, "reveal.destination");
    expect(asked).toEqual([]);
  });

  it("compares the key bytes, not their spelling", () => {
    expect(internalKeyMatches(`  ${keyText}\n`, key)).toBe(true);
    expect(internalKeyMatches(null, key)).toBe(false);
    expect(internalKeyMatches("", key)).toBe(false);
  });
});
