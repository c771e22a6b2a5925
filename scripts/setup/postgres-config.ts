// How the tests' PostgreSQL is configured: pure text edits, so they can be tested on strings.

const marker = "# AI Engine Manager tests: user postgres on loopback without a password";

/** pg_hba.conf with trust for user postgres on loopback in front (the first matching line wins). */
export function withLoopbackTrust(hba: string): string {
  if (hba.includes(marker)) return hba;
  const lines = [marker, "host all postgres 127.0.0.1/32 trust", "host all postgres ::1/128 trust", ""];
  return lines.join("\n") + hba;
}

/** Settings for a throwaway test server: durability traded for speed, room for parallel suites. */
export const testServerSettings = [
  "# Written by scripts/setup for the test suites; this server holds no data worth keeping.",
  "fsync = off",
  "synchronous_commit = off",
  "full_page_writes = off",
  "max_connections = 300",
  "",
].join("\n");
