// The API reference's services: each with its methods, their HTTP bindings, streaming, a REST
// example and a "Try it" sample, and their request and response field tables.
import type { DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import type { ApiPage } from "./api-page.js";
import { escapeHtml, headingHtml } from "./html.js";
import { codeBlockHtml } from "./markdown.js";
import { bindingsOf, commentOf, type HttpBinding } from "./proto-descriptors.js";

export function serviceHtml(page: ApiPage, service: DescService): string {
  page.ids.add(service.typeName);
  page.toc.push({ id: service.typeName, text: service.name, level: 2 });
  for (const m of service.methods) page.toc.push({ id: `${service.typeName}.${m.name}`, text: m.name, level: 3 });
  page.addDoc(service.typeName, service.name, page.pageTitle, `${service.typeName} ${commentOf(service)}`);
  return (
    `<section class="api-service">${headingHtml(2, service.typeName, `<span class="api-kind">service</span> ${escapeHtml(service.name)}`)}` +
    `<p class="api-fullname"><code>${escapeHtml(service.typeName)}</code></p>${page.comment(commentOf(service))}` +
    `${service.methods.map((m) => methodHtml(page, m)).join("")}</section>`
  );
}

function methodHtml(page: ApiPage, method: DescMethod): string {
  const id = `${method.parent.typeName}.${method.name}`;
  page.ids.add(id);
  const bindings = bindingsOf(method);
  // A method without an HTTP binding is served over Connect and gRPC only (a client stream cannot be a REST call).
  const rest =
    bindings.length > 0
      ? " Over REST the response is newline-delimited JSON, one object per message."
      : " Connect and gRPC only.";
  const streaming =
    method.methodKind === "server_streaming"
      ? `<p class="api-streaming"><span class="badge badge-streaming">Server streaming</span>${rest}</p>`
      : method.methodKind === "client_streaming"
        ? `<p class="api-streaming"><span class="badge badge-streaming">Client streaming</span> Connect and gRPC only.</p>`
        : "";
  const example = page.sample(method);
  const curl = example.curl
    ? `<details class="api-example"><summary>REST example</summary>${codeBlockHtml(example.curl, "bash")}</details>`
    : "";
  const tryIt =
    method.methodKind === "unary" || method.methodKind === "server_streaming"
      ? `<div class="try-it-slot"><button type="button" class="button button-secondary try-it-button" data-try="${escapeHtml(id)}" ` +
        `data-sample="${escapeHtml(JSON.stringify(example.connectJson, null, 2))}" aria-expanded="false">Try it</button></div>`
      : "";
  page.addDoc(
    id,
    method.name,
    `${page.pageTitle} · ${method.parent.name}`,
    `${method.name} ${bindings.map((b) => `${b.verb} ${b.path}`).join(" ")} ${commentOf(method)}`,
  );
  const io = (label: string, message: DescMessage) => {
    page.ids.add(message.typeName);
    return (
      `<div class="api-io">${headingHtml(4, message.typeName, `${label}: ${escapeHtml(message.name)}`)}` +
      `${page.types.fieldTable(message)}</div>`
    );
  };
  return (
    `<section class="api-method">${headingHtml(3, id, `<span class="api-kind">rpc</span> ${escapeHtml(method.name)}`)}` +
    `${bindings.map(bindingHtml).join("")}${streaming}${page.comment(commentOf(method))}${curl}${tryIt}` +
    `${io("Request", method.input)}${io("Response", method.output)}</section>`
  );
}

function bindingHtml(b: HttpBinding): string {
  const body =
    b.body === "*"
      ? "body: the request fields not in the path"
      : b.body
        ? `body: <code>${escapeHtml(b.body)}</code>`
        : "no body; other request fields go in the query string";
  return (
    `<div class="http-binding"><span class="http-verb http-${b.verb.toLowerCase()}">${escapeHtml(b.verb)}</span> ` +
    `<code class="http-path">${escapeHtml(b.path)}</code> <span class="http-body">${body}</span></div>`
  );
}
