// The programs engine processes run, beside this file.
import { fileURLToPath } from "node:url";

export const STAND_IN_SERVER = fileURLToPath(new URL("./stand-in-server.mjs", import.meta.url));
export const LAUNCHER = fileURLToPath(new URL("./launcher.mjs", import.meta.url));
export const H2O_CLUSTER = fileURLToPath(new URL("./h2o-cluster.mjs", import.meta.url));
