// The well-known types the API reference lists: those from google.protobuf, google.api, google.type
// and google.rpc that the documented fields use, with how each looks in JSON.
import type { ApiPage } from "./api-page.js";
import { escapeHtml, headingHtml } from "./html.js";
import { codeBlockHtml } from "./markdown.js";

export const wellKnown: Record<string, { json: string; text: string }> = {
  "google.protobuf.Timestamp": {
    json: '"2026-03-01T12:30:00Z"',
    text: "A point in time, in JSON an RFC 3339 string in UTC with an optional fraction of a second.",
  },
  "google.protobuf.Duration": {
    json: '"3600s"',
    text: 'A length of time, in JSON a number of seconds followed by s, with up to nine decimals (`"1.5s"`).',
  },
  "google.protobuf.FieldMask": {
    json: '"displayName,cpu"',
    text: "A list of field paths. Over REST, `updateMask` is a query parameter with comma-separated snake_case paths (`updateMask=display_name,cpu`); in a JSON body it is one comma-separated string of camelCase paths.",
  },
  "google.protobuf.Any": {
    json: '{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "..."}',
    text: "A message of any type, in JSON an object whose `@type` names the type and whose other members are that message's fields.",
  },
  "google.api.HttpBody": {
    json: '{"contentType": "text/plain; charset=utf-8", "data": "c3RhbmQtaW4gbGlzdGVuaW5nCg==", "extensions": []}',
    text: "Bytes with their content type, in JSON `contentType` and `data` (base64, standard alphabet with padding); `extensions` is unused.",
  },
  "google.type.Date": {
    json: '{"year": 2027, "month": 1, "day": 31}',
    text: "A calendar day without a time zone, in JSON its year, month (1-12) and day (1-31).",
  },
  "google.rpc.Status": {
    json: '{"code": 5, "message": "daiEngine workspaces/default/daiEngines/demo not found", "details": []}',
    text: "The error body of every failed call: `code` is the gRPC status code (3 INVALID_ARGUMENT, 5 NOT_FOUND, 6 ALREADY_EXISTS, 7 PERMISSION_DENIED, 9 FAILED_PRECONDITION, 16 UNAUTHENTICATED, ...), `message` says what was wrong and with which field, and `details` may carry structured information.",
  },
};

/** The section of `used` (and google.rpc.Status, the error body every call may answer). */
export function wellKnownHtml(page: ApiPage, used: ReadonlySet<string>): string {
  const wkId = "well-known-types";
  page.ids.add(wkId);
  page.toc.push({ id: wkId, text: "Well-known types", level: 2 });
  const wkHtml = [...used, "google.rpc.Status"]
    .filter((name, i, all) => all.indexOf(name) === i)
    .sort()
    .map((name) => {
      page.ids.add(name);
      const short = name.split(".").pop()!;
      page.toc.push({ id: name, text: short, level: 3 });
      const info = wellKnown[name]!;
      page.addDoc(name, short, `${page.pageTitle} · Well-known types`, `${name} ${info.text}`);
      return (
        `<section class="api-message">${headingHtml(3, name, `<span class="api-kind">message</span> ${escapeHtml(short)}`)}` +
        `<p class="api-fullname"><code>${escapeHtml(name)}</code></p>${page.comment(info.text)}` +
        `${codeBlockHtml(info.json, "json", "JSON")}</section>`
      );
    })
    .join("");
  return (
    `<section class="api-types">${headingHtml(2, wkId, "Well-known types")}` +
    `<p>Types from <code>google.protobuf</code>, <code>google.api</code>, <code>google.type</code> and <code>google.rpc</code> that the API uses, and how they look in JSON.</p>${wkHtml}</section>`
  );
}
