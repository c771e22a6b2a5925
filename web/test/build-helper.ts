// Builds the docs site from inside the test runner.
import { fileURLToPath } from "node:url";
import { build } from "vite";

/**
 * Runs a production build. The test runner sets NODE_ENV=test, which would make Vite and React
 * build for development, so NODE_ENV is production for the duration of the build.
 */
export async function buildSite(options: { outDir?: string; env?: Record<string, string> } = {}): Promise<void> {
  const overrides = { NODE_ENV: "production", ...options.env };
  const saved = Object.fromEntries(Object.keys(overrides).map((k) => [k, process.env[k]]));
  Object.assign(process.env, overrides);
  try {
    await build({
      configFile: fileURLToPath(new URL("../vite.config.ts", import.meta.url)),
      logLevel: "warn",
      ...(options.outDir ? { build: { outDir: options.outDir, emptyOutDir: true } } : {}),
    });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
