// The image sandbox pods take the agent from (AIEM_SANDBOX_AGENT_IMAGE): FROM scratch, the static
// agent at /aiem/agent and nothing else; the init container runs `/aiem/agent install <dest>`.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  buildGoAgent,
  GO_AGENT_BUILD_DIR,
  readSandboxVersion,
} from "../../services/sandbox/src/runtime/go-agent-build.js";
import { ociImage, writeOciImage } from "./oci-image.js";

const root = resolve(import.meta.dirname, "..", "..");

/** Where `npm run build:agent-image` writes, beside the agent's own builds. */
export const AGENT_IMAGE_DIR = join(root, ".tools", "agent-image");
/** The architectures an image can be built for (Go's names, as OCI uses them). */
export const AGENT_IMAGE_ARCHITECTURES = ["amd64", "arm64"] as const;

export function hostArchitecture(): string {
  return process.arch === "x64" ? "amd64" : process.arch;
}

export interface AgentImage {
  /** The image's manifest digest: what a registry names it by once pushed. */
  readonly digest: string;
  /** The OCI image layout directory (`crane push <it>`, `skopeo copy oci:<it>`). */
  readonly layout: string;
  /** The `oci-archive` tarball of that directory (`skopeo copy oci-archive:<it>`). */
  readonly archive: string;
  readonly version: string;
  readonly architecture: string;
}

export async function buildAgentImage(
  options: { out?: string; architecture?: string; version?: string } = {},
): Promise<AgentImage> {
  const version = options.version ?? readSandboxVersion();
  const architecture = options.architecture ?? hostArchitecture();
  const out = options.out ?? AGENT_IMAGE_DIR;
  // This machine's build is the one the local runtime uses too; another architecture is cross-built.
  const native = process.platform === "linux" && architecture === hostArchitecture();
  const built = await buildGoAgent(version, GO_AGENT_BUILD_DIR, native ? undefined : architecture);
  if (built.path === undefined) throw new Error(built.reason);
  const image = ociImage({
    files: [
      { path: "aiem/", mode: 0o755 },
      { path: "aiem/agent", mode: 0o755, data: readFileSync(built.path) },
    ],
    architecture,
    entrypoint: ["/aiem/agent"],
    refName: version,
    annotations: {
      "org.opencontainers.image.title": "aiem-agent",
      "org.opencontainers.image.description": "The AI Engine Manager sandbox agent, installed into sandbox pods",
      "org.opencontainers.image.version": version,
    },
  });
  const layout = join(out, `linux-${architecture}`);
  const archive = join(out, `aiem-agent-linux-${architecture}.tar`);
  writeOciImage(image, layout, archive);
  return { digest: image.manifest.digest, layout, archive, version, architecture };
}
