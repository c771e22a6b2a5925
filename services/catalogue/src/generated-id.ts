import { randomInt } from "node:crypto";
import { validateResourceId } from "@aiem/kit/aip";

/** A server-chosen id: a slug of the display name when it has one, and a random suffix. */
export function generateId(word: string, displayName: string): string {
  const slug = displayName
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let suffix = "";
  for (let i = 0; i < 6; i++) suffix += alphabet[randomInt(alphabet.length)];
  const id = `${slug || word}-${suffix}`;
  return validateResourceId(id) === undefined ? id : `${word}-${suffix}`;
}
