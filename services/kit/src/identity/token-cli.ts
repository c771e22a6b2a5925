import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { readCommonEnv } from "../config/common.js";
import { mintEmbeddedToken, parseTtl } from "./embedded-token.js";
import { loadOrCreateSigningKey } from "./signing-key.js";

const USAGE = `usage: npm run -s token -- --user NAME [--admin] [--role ROLE]... [--name DISPLAY_NAME] [--ttl 24h]

Prints a bearer token for the server that uses the same AIEM_DATA_DIR (embedded mode).
--ttl takes seconds or a number with s, m, h or d (default 24h).`;

/** Runs the token command; returns the exit code. Only the token goes to stdout. */
export async function runTokenCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        user: { type: "string" },
        admin: { type: "boolean", default: false },
        role: { type: "string", multiple: true, default: [] },
        name: { type: "string" },
        ttl: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    err(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    err(`${USAGE}\n`);
    return 0;
  }
  if (!values.user) {
    err(`--user is required\n${USAGE}\n`);
    return 2;
  }
  try {
    const cfg = readCommonEnv(env);
    if (cfg.oidcIssuer) {
      err(`AIEM_OIDC_ISSUER is set: the server accepts only tokens from ${cfg.oidcIssuer}; get one there\n`);
      return 1;
    }
    const ttlSeconds = values.ttl === undefined ? undefined : parseTtl(values.ttl);
    const key = await loadOrCreateSigningKey(cfg.dataDir);
    const token = await mintEmbeddedToken(key, {
      user: values.user,
      displayName: values.name,
      admin: values.admin,
      roles: values.role,
      ttlSeconds,
    });
    out(`${token}\n`);
    return 0;
  } catch (e) {
    err(`${(e as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await runTokenCli(process.argv.slice(2));
}
