// The process that restart.test.ts kills: a runtime keeping its sandboxes running, which starts
// the sandboxes named on its command line, each with a process printing a counter every 100 ms,
// prints "started <id> <bwrap pid>" for each, and then waits to be killed.
import { createLocalSandboxRuntime } from "./local-runtime.js";

const [dataDir, cacheDir, registry, lines, ...ids] = process.argv.slice(2);
const runtime = createLocalSandboxRuntime({
  dataDir: dataDir!,
  cacheDir,
  uidRangeRegistry: registry,
  keepRunning: true,
});
for (const id of ids) {
  const sandbox = await runtime.start(id);
  await sandbox.client.startProcess({
    processId: "counter",
    command: "sh",
    args: ["-c", `i=0; while [ $i -lt ${lines} ]; do echo $i; i=$((i+1)); sleep 0.1; done`],
  });
  process.stdout.write(`started ${id} ${sandbox.pid}\n`);
}
setInterval(() => undefined, 60_000);
