import type { ModuleFactory } from "./create-host.js";

/**
 * The parts that have landed, as the launcher hosts them. A part missing here is answered
 * with UNIMPLEMENTED until its service is written.
 */
export const moduleFactories: readonly ModuleFactory[] = [];
