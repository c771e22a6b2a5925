// The names along a slash-separated path, for checking a client's path field name by name.
import { invalidArgument } from "@aiem/kit/errors";

/** The path's names, empty and `.` ones dropped; a `..` is refused, `leaving` saying why it may not be. */
export function pathSegments(field: string, value: string, leaving: string): string[] {
  const segments: string[] = [];
  for (const segment of value.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") throw invalidArgument(field, `must not contain '..' segments: ${leaving}`);
    segments.push(segment);
  }
  return segments;
}
