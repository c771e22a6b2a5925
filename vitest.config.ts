import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["proto/**/*.test.ts", "services/*/src/**/*.test.ts", "edge/src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
