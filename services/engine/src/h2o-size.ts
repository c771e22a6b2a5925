// H2O engine size recommendations. The memory a dataset needs (five times its size for a raw
// dataset, rows x columns x 32 bytes compressed) is spread over at least `node_count_min` nodes;
// nodes are added while each would need more than `memory_bytes_per_node_max`, up to
// `node_count_max`; each node gets at least `memory_bytes_per_node_min` and never more than the
// maximum. When even the most nodes at the most memory cannot hold the dataset, the largest
// allowed size is recommended (the reference test vectors: raw 1000 B, max 200 B/node and
// 2 nodes gives 200 B x 2).
import { invalidArguments, type FieldViolation } from "@aiem/kit/errors";
import type { H2OEngineSizeLimits } from "@aiem/proto/enginemanager/v1/h2o_engine_size_pb.js";

export const RAW_DATASET_FACTOR = 5n;
export const COMPRESSED_BYTES_PER_CELL = 32n;

export interface H2OSize {
  readonly nodeCount: bigint;
  readonly memoryBytes: bigint;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const INT64_MAX = 2n ** 63n - 1n;

function checkTotal(total: bigint, field: string, violations: FieldViolation[]): void {
  if (total > INT64_MAX)
    violations.push({ field, description: "is too large: the memory it needs does not fit in 64 bits" });
}

/** Throws INVALID_ARGUMENT listing every inconsistent limit. */
export function checkLimits(limits: H2OEngineSizeLimits | undefined, violations: FieldViolation[]): void {
  if (!limits) {
    violations.push({
      field: "limits",
      description: "is required: memory_bytes_per_node_min and node_count_min at least",
    });
    return;
  }
  if (limits.memoryBytesPerNodeMin <= 0n) {
    violations.push({
      field: "limits.memory_bytes_per_node_min",
      description: `must be above 0, got ${limits.memoryBytesPerNodeMin}`,
    });
  }
  if (limits.nodeCountMin <= 0n)
    violations.push({ field: "limits.node_count_min", description: `must be at least 1, got ${limits.nodeCountMin}` });
  if (limits.memoryBytesPerNodeMax !== undefined && limits.memoryBytesPerNodeMax < limits.memoryBytesPerNodeMin) {
    violations.push({
      field: "limits.memory_bytes_per_node_max",
      description: `must not be below memory_bytes_per_node_min (${limits.memoryBytesPerNodeMax} < ${limits.memoryBytesPerNodeMin})`,
    });
  }
  if (limits.nodeCountMax !== undefined && limits.nodeCountMax < limits.nodeCountMin) {
    violations.push({
      field: "limits.node_count_max",
      description: `must not be below node_count_min (${limits.nodeCountMax} < ${limits.nodeCountMin})`,
    });
  }
}

/** The size for a dataset needing `totalBytes` of memory, within checked limits. */
export function sizeFor(totalBytes: bigint, limits: H2OEngineSizeLimits): H2OSize {
  const max = limits.memoryBytesPerNodeMax;
  let nodes = limits.nodeCountMin;
  if (max !== undefined && max > 0n) {
    const needed = ceilDiv(totalBytes, max);
    if (needed > nodes) nodes = needed;
  }
  if (limits.nodeCountMax !== undefined && nodes > limits.nodeCountMax) nodes = limits.nodeCountMax;
  let perNode = ceilDiv(totalBytes, nodes);
  if (perNode < limits.memoryBytesPerNodeMin) perNode = limits.memoryBytesPerNodeMin;
  if (max !== undefined && perNode > max) perNode = max;
  return { nodeCount: nodes, memoryBytes: perNode };
}

export function rawDatasetSize(datasetSizeBytes: bigint, limits: H2OEngineSizeLimits | undefined): H2OSize {
  const violations: FieldViolation[] = [];
  if (datasetSizeBytes <= 0n)
    violations.push({ field: "dataset_size_bytes", description: `must be above 0, got ${datasetSizeBytes}` });
  checkLimits(limits, violations);
  checkTotal(datasetSizeBytes * RAW_DATASET_FACTOR, "dataset_size_bytes", violations);
  if (violations.length > 0) throw invalidArguments(violations);
  return sizeFor(datasetSizeBytes * RAW_DATASET_FACTOR, limits!);
}

export function compressedDatasetSize(rows: bigint, columns: bigint, limits: H2OEngineSizeLimits | undefined): H2OSize {
  const violations: FieldViolation[] = [];
  if (rows <= 0n) violations.push({ field: "rows_count", description: `must be above 0, got ${rows}` });
  if (columns <= 0n) violations.push({ field: "columns_count", description: `must be above 0, got ${columns}` });
  checkLimits(limits, violations);
  checkTotal(rows * columns * COMPRESSED_BYTES_PER_CELL, "rows_count", violations);
  if (violations.length > 0) throw invalidArguments(violations);
  return sizeFor(rows * columns * COMPRESSED_BYTES_PER_CELL, limits!);
}
