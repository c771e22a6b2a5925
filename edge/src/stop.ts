// `npm run stop -- --all`: ends every sandbox and engine a stopped server left running in
// AIEM_DATA_DIR (they outlive `npm start` so that the next start adopts them).
import { pathToFileURL } from "node:url";
import { ConfigError, readCommonEnv } from "@aiem/kit/config";
import { count, ServerRunningError, stopAll } from "./host/left-running.js";

const USAGE = `usage: npm run stop -- --all

Ends every sandbox and engine of the data directory (AIEM_DATA_DIR, default ./.aiem) that a stopped
server left running; their files stay. Refuses while a server runs on that directory.`;

export async function runStopCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    out(`${USAGE}\n`);
    return 0;
  }
  if (argv.length !== 1 || argv[0] !== "--all") {
    err(`${USAGE}\n`);
    return 2;
  }
  try {
    const { dataDir } = readCommonEnv(env);
    const stopped = await stopAll(dataDir);
    out(
      `stopped ${count(stopped.sandboxes.length, "sandbox")} and ${count(stopped.engines.length, "engine")} of ${dataDir}\n`,
    );
    return 0;
  } catch (e) {
    if (e instanceof ServerRunningError || e instanceof ConfigError) {
      err(`${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await runStopCli(process.argv.slice(2));
}
