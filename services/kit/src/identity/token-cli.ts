import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { readCommonEnv } from "../config/common.js";
import { defaultPublicUrl, readPublicUrl } from "../config/public-url.js";
import { DEFAULT_TOKEN_TTL_SECONDS, embeddedIssuerUrl, mintEmbeddedToken, parseTtl } from "./embedded-token.js";
import { mintRefreshToken } from "./refresh-token.js";
import { loadOrCreateSigningKey } from "./signing-key.js";

const USAGE = `usage: npm run -s token -- --user NAME [--admin] [--role ROLE]... [--name DISPLAY_NAME] [--ttl 24h]
                          [--refresh [--client CLIENT_ID]]

Prints a bearer token for the server that uses the same AIEM_DATA_DIR (embedded mode) and the
same AIEM_PUBLIC_URL (or AIEM_HOST and AIEM_PORT), which name the server's token issuer.
--refresh prints a refresh token instead, for OAuth clients (the official Python client's
login_custom() and login()); it lasts 30d unless --ttl says otherwise. --client binds it to
that OAuth client id.
--ttl takes seconds or a number with s, m, h or d (default 24h; an access token at most
AIEM_TOKEN_MAX_LIFETIME, a refresh token at most 365d).`;

/** The command line parsed: throws on an unknown or malformed option. */
function parseTokenArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      user: { type: "string" },
      admin: { type: "boolean", default: false },
      role: { type: "string", multiple: true, default: [] },
      name: { type: "string" },
      ttl: { type: "string" },
      refresh: { type: "boolean", default: false },
      client: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  }).values;
}

/** Runs the token command; returns the exit code. Only the token goes to stdout. */
export async function runTokenCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  let values: ReturnType<typeof parseTokenArgs>;
  try {
    values = parseTokenArgs(argv);
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
  if (values.client !== undefined && !values.refresh) {
    err(`--client binds a refresh token: use it with --refresh\n${USAGE}\n`);
    return 2;
  }
  try {
    const cfg = readCommonEnv(env);
    if (cfg.oidcIssuer) {
      err(`AIEM_OIDC_ISSUER is set: the server accepts only tokens from ${cfg.oidcIssuer}; get one there\n`);
      return 1;
    }
    const publicUrl = readPublicUrl(env);
    if (publicUrl === undefined && cfg.port === 0) {
      err(
        "AIEM_PORT is 0, so the server's address is unknown here: set AIEM_PORT or AIEM_PUBLIC_URL as the server has it\n",
      );
      return 1;
    }
    const issuer = embeddedIssuerUrl(publicUrl ?? defaultPublicUrl(cfg.host, cfg.port));
    const ttlSeconds = values.ttl === undefined ? undefined : parseTtl(values.ttl);
    if (!values.refresh && (ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS) > cfg.tokenMaxLifetimeSeconds) {
      err(
        `the server accepts tokens that last at most ${cfg.tokenMaxLifetimeSeconds}s (AIEM_TOKEN_MAX_LIFETIME): ` +
          "use a shorter --ttl, or --refresh for a long-lived login\n",
      );
      return 1;
    }
    const key = await loadOrCreateSigningKey(cfg.dataDir);
    const identity = {
      user: values.user,
      displayName: values.name,
      admin: values.admin,
      roles: values.role,
      issuer,
      ttlSeconds,
    };
    const token = values.refresh
      ? await mintRefreshToken(key, { ...identity, clientId: values.client })
      : await mintEmbeddedToken(key, identity);
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
