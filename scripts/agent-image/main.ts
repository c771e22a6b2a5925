// `npm run build:agent-image [-- --arch amd64|arm64] [--out DIR]`: the sandbox agent's image as an
// OCI layout and an oci-archive tarball, for a registry the cluster pulls from (README.md).
import { parseArgs } from "node:util";
import { AGENT_IMAGE_ARCHITECTURES, AGENT_IMAGE_DIR, buildAgentImage, hostArchitecture } from "./agent-image.js";

const { values } = parseArgs({
  options: { arch: { type: "string", default: hostArchitecture() }, out: { type: "string", default: AGENT_IMAGE_DIR } },
});
const architecture = values.arch;
if (!(AGENT_IMAGE_ARCHITECTURES as readonly string[]).includes(architecture)) {
  console.error(
    `build:agent-image: --arch must be one of ${AGENT_IMAGE_ARCHITECTURES.join(", ")}, got ${architecture}`,
  );
  process.exit(2);
}
try {
  const image = await buildAgentImage({ architecture, out: values.out });
  console.log(`build:agent-image: aiem-agent:${image.version} linux/${image.architecture} ${image.digest}`);
  console.log(`  layout:  ${image.layout}`);
  console.log(`  archive: ${image.archive}`);
} catch (error) {
  console.error(`build:agent-image: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
