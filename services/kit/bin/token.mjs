#!/usr/bin/env node
// Prints an embedded-mode bearer token; see services/kit/src/identity/token-cli.ts.
import { register } from "tsx/esm/api";

register();
const { runTokenCli } = await import("../src/identity/token-cli.ts");
process.exitCode = await runTokenCli(process.argv.slice(2));
