// What a fault-suite run found, and its printout.

export interface FaultReport {
  readonly faults: string[];
  readonly requests: number;
  readonly succeeded: number;
  /** Answers the API gives by rule (a pause of an engine that is not running, ...). */
  readonly refused: number;
  /** UNAVAILABLE, 5xx or no answer: the request may or may not have taken effect. */
  readonly errors: number;
  readonly errorsByKind: Record<string, number>;
  /** Successful requests the final state does not reflect. */
  readonly lost: string[];
  readonly stuck: string[];
  readonly catalogueMismatches: string[];
  /** Catalogue entries checked, summed over the replicas holding a copy. */
  readonly catalogueChecks: number;
  readonly duplicateProcesses: string[];
  /** Outputs of processes whose sandbox's agent ended after they ran (the service says they were lost). */
  readonly outputLostWithAgent: number;
  readonly outputsRead: number;
  readonly durationMs: number;
  /** Processes of the layout that ended without being killed. */
  readonly crashes: string[];
}

export function formatReport(r: FaultReport): string {
  return [
    `faults injected: ${r.faults.length} (${r.faults.join(", ")})`,
    `requests: ${r.requests} (succeeded ${r.succeeded}, refused by rule ${r.refused}, errors ${r.errors})`,
    ...Object.entries(r.errorsByKind).map(([k, n]) => `  error ${k}: ${n}`),
    `lost: ${r.lost.length}${r.lost.length ? `\n  ${r.lost.join("\n  ")}` : ""}`,
    `stuck in a transitional state: ${r.stuck.length}${r.stuck.length ? `\n  ${r.stuck.join("\n  ")}` : ""}`,
    `catalogue entries checked in the replicas' copies: ${r.catalogueChecks}; differing from the database: ${r.catalogueMismatches.length}${r.catalogueMismatches.length ? `\n  ${r.catalogueMismatches.join("\n  ")}` : ""}`,
    `engine process mismatches: ${r.duplicateProcesses.length}${r.duplicateProcesses.length ? `\n  ${r.duplicateProcesses.join("\n  ")}` : ""}`,
    `process outputs read back: ${r.outputsRead}; lost with a killed sandbox replica's agent: ${r.outputLostWithAgent}`,
    `processes that ended by themselves: ${r.crashes.length}${r.crashes.length ? `\n${r.crashes.join("\n")}` : ""}`,
    `duration: ${Math.round(r.durationMs / 1000)} s`,
  ].join("\n");
}
