// The permission bits a write may ask for.
import { invalidArgument } from "@aiem/kit/errors";

/**
 * Parses the octal permission string of a write (`0644`, `755`); undefined when none is given,
 * which keeps a replaced file's mode and gives a new one 0644.
 */
export function parseMode(field: string, value: string): number | undefined {
  if (value === "") return undefined;
  if (!/^0?[0-7]{1,4}$/.test(value)) {
    throw invalidArgument(
      field,
      `must be an octal permission string of at most 07777, such as 0644 or 0755 (got ${JSON.stringify(value.slice(0, 32))})`,
    );
  }
  return Number.parseInt(value, 8);
}
