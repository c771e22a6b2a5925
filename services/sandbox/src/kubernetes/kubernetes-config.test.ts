// AIEM_RUNTIME=kubernetes as the sandbox service reads it: its own switch first, the agent image
// required, a bad value a ConfigError naming its variable.
import { ConfigError } from "@aiem/kit/config";
import { describe, expect, it } from "vitest";
import { readSandboxEnv } from "../config.js";

const base = { AIEM_DATA_DIR: "/tmp/aiem-config-test" };

describe("the sandbox service's runtime settings", () => {
  it("runs sandboxes locally unless told otherwise", () => {
    expect(readSandboxEnv(base).runtime).toBe("local");
    expect(readSandboxEnv({ ...base, AIEM_RUNTIME: "kubernetes", AIEM_SANDBOX_RUNTIME: "local" }).runtime).toBe(
      "local",
    );
  });

  it("reads the namespace, the agent image and the Gateway for pods", () => {
    const config = readSandboxEnv({
      ...base,
      AIEM_RUNTIME: "kubernetes",
      AIEM_KUBERNETES_NAMESPACE: "sandboxes",
      AIEM_SANDBOX_AGENT_IMAGE: "registry.example/aiem-agent:1",
      AIEM_SANDBOX_AGENT_IMAGE_PULL_POLICY: "IfNotPresent",
      AIEM_KUBERNETES_GATEWAY: "gateways/public",
    });
    expect(config.runtime).toBe("kubernetes");
    expect(config.kubernetes).toEqual({
      namespace: "sandboxes",
      agentImage: "registry.example/aiem-agent:1",
      agentImagePullPolicy: "IfNotPresent",
      gateway: { namespace: "gateways", name: "public" },
    });
  });

  it("names the variable that is wrong or missing", () => {
    const fails = (env: Record<string, string>, variable: string) => {
      try {
        readSandboxEnv({ ...base, ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).message).toContain(variable);
        return;
      }
      throw new Error(`no error for ${variable}`);
    };
    fails({ AIEM_SANDBOX_RUNTIME: "docker" }, "AIEM_SANDBOX_RUNTIME");
    fails({ AIEM_RUNTIME: "kubernetes" }, "AIEM_SANDBOX_AGENT_IMAGE");
    fails(
      { AIEM_RUNTIME: "kubernetes", AIEM_SANDBOX_AGENT_IMAGE: "a", AIEM_SANDBOX_AGENT_IMAGE_PULL_POLICY: "Sometimes" },
      "AIEM_SANDBOX_AGENT_IMAGE_PULL_POLICY",
    );
  });
});
