// REST replies and the assertions on them.
export { CODES, expectError, ok, type Reply } from "@aiem/kit/testing";

export const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
export const unb64 = (s: string) => Buffer.from(s ?? "", "base64");
