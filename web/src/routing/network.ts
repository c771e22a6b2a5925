// Whether the reader's connection is one where prefetching would waste their data: a 2g
// connection, or Save-Data turned on.
export interface NetworkInformation {
  effectiveType?: string;
  saveData?: boolean;
}

export function canPrefetch(connection?: NetworkInformation): boolean {
  if (!connection) return true;
  return !(connection.effectiveType?.includes("2g") || connection.saveData);
}

export function currentConnection(): NetworkInformation | undefined {
  return (navigator as Navigator & { connection?: NetworkInformation }).connection;
}
