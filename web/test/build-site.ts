// Vitest global setup: builds the site into web/dist once before the tests, as
// `npx vite build --config web/vite.config.ts` does.
import { buildSite } from "./build-helper.js";

export async function setup(): Promise<void> {
  if (process.env.AIEM_WEB_SKIP_BUILD) return;
  await buildSite();
}
