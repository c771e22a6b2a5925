import { defineConfig } from "vitest/config";

// Two projects: the services and the edge, and the docs site, whose global setup builds the
// site first. `npx vitest run services/kit` runs only what matches, and builds nothing.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "product",
          include: [
            "proto/**/*.test.ts",
            "scripts/**/*.test.ts",
            "services/*/src/**/*.test.ts",
            "edge/src/**/*.test.ts",
            "deploy/**/*.test.ts",
          ],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "docs",
          include: ["web/src/**/*.test.ts", "web/build/**/*.test.ts", "web/serve/**/*.test.ts", "web/test/*.test.ts"],
          globalSetup: ["web/test/build-site.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
