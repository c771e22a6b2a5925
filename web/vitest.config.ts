// Runs only the docs site's tests: `npx vitest run --project docs` from the repository root
// (the root vitest.config.ts defines the project; its global setup builds web/dist first).
export { default } from "../vitest.config.js";
