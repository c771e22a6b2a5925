// The API reference's "Try it" panel: sends a method's request to the server this page is served
// from, over the Connect protocol with JSON, using the generated service descriptors. It is its
// own chunk, loaded the first time a reader opens a panel.
import { useId, useState } from "react";
import { createRoot } from "react-dom/client";
import { fromJson, toJson, type DescMethod, type JsonValue, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { services } from "virtual:aiem/api-services";
import { readToken, saveToken } from "../chrome/preferences.js";

export function findMethod(id: string): DescMethod | undefined {
  const dot = id.lastIndexOf(".");
  const service = services.find((s) => s.typeName === id.slice(0, dot));
  return service?.methods.find((m) => m.name === id.slice(dot + 1));
}

type Outcome =
  | { kind: "idle" }
  | { kind: "running" }
  | { kind: "ok"; ms: number; body: string; count?: number }
  | { kind: "error"; ms?: number; title: string; body: string };

const MAX_STREAM_MESSAGES = 200;
const TIMEOUT_MS = 30_000;

async function send(method: DescMethod, requestText: string, token: string, signal: AbortSignal): Promise<Outcome> {
  let message: Message;
  try {
    message = fromJson(method.input, JSON.parse(requestText) as JsonValue);
  } catch (error) {
    return {
      kind: "error",
      title: "The request is not valid",
      body: error instanceof Error ? error.message : String(error),
    };
  }
  const transport = createConnectTransport({ baseUrl: window.location.origin });
  const client = createClient(method.parent, transport) as unknown as Record<
    string,
    (req: unknown, options: object) => Promise<unknown> & AsyncIterable<unknown>
  >;
  const call = client[method.localName]!;
  const options = { signal, timeoutMs: TIMEOUT_MS, headers: token ? { Authorization: `Bearer ${token}` } : {} };
  const started = performance.now();
  const json = (m: unknown) => toJson(method.output, m as never, { alwaysEmitImplicit: true });
  try {
    if (method.methodKind === "server_streaming") {
      const messages: JsonValue[] = [];
      for await (const m of call(message, options)) {
        messages.push(json(m));
        if (messages.length >= MAX_STREAM_MESSAGES) break;
      }
      return {
        kind: "ok",
        ms: Math.round(performance.now() - started),
        body: messages.map((m) => JSON.stringify(m)).join("\n"),
        count: messages.length,
      };
    }
    const response = await call(message, options);
    return { kind: "ok", ms: Math.round(performance.now() - started), body: JSON.stringify(json(response), null, 2) };
  } catch (error) {
    const e = ConnectError.from(error);
    const name = Code[e.code] ?? "unknown";
    return {
      kind: "error",
      ms: Math.round(performance.now() - started),
      title: `${name.replace(/[A-Z]/g, (c, i: number) => (i ? "_" : "") + c.toLowerCase())} (code ${e.code})`,
      body: e.rawMessage || e.message,
    };
  }
}

function TryItPanel({ method, sample }: { method: DescMethod; sample: string }) {
  const [token, setToken] = useState(readToken);
  const [request, setRequest] = useState(sample);
  const [outcome, setOutcome] = useState<Outcome>({ kind: "idle" });
  const [controller, setController] = useState<AbortController>();
  const id = useId();
  const path = `/${method.parent.typeName}/${method.name}`;
  return (
    <form
      className="try-it"
      aria-label={`Try ${method.name}`}
      onSubmit={(event) => {
        event.preventDefault();
        const abort = new AbortController();
        setController(abort);
        setOutcome({ kind: "running" });
        void send(method, request, token.trim(), abort.signal).then((result) => {
          setOutcome(result);
          setController(undefined);
        });
      }}
    >
      <p className="try-it-target">
        <span className="http-verb http-post">POST</span> <code>{window.location.origin + path}</code>
        <span className="try-it-protocol"> Connect protocol, JSON</span>
      </p>
      <label htmlFor={`${id}-token`}>Bearer token</label>
      <input
        id={`${id}-token`}
        type="password"
        autoComplete="off"
        spellCheck={false}
        value={token}
        placeholder="Paste a token"
        aria-describedby={`${id}-token-hint`}
        onChange={(e) => {
          setToken(e.target.value);
          saveToken(e.target.value.trim());
        }}
      />
      <p className="try-it-hint" id={`${id}-token-hint`}>
        Kept in this browser tab only. On a server started with <code>npm start</code>, print one with{" "}
        <code>npm run -s token -- --user alice</code>.
      </p>
      <label htmlFor={`${id}-request`}>Request ({method.input.name} as JSON)</label>
      <textarea
        id={`${id}-request`}
        rows={Math.min(16, request.split("\n").length + 1)}
        spellCheck={false}
        value={request}
        onChange={(e) => setRequest(e.target.value)}
      />
      <div className="try-it-actions">
        {controller ? (
          <button type="button" className="button button-secondary" onClick={() => controller.abort()}>
            Cancel
          </button>
        ) : (
          <button type="submit" className="button button-primary">
            Send request
          </button>
        )}
        <button type="button" className="button button-secondary" onClick={() => setRequest(sample)}>
          Reset example
        </button>
      </div>
      <div className="try-it-result" aria-live="polite">
        {outcome.kind === "running" && <p className="try-it-status">Waiting for the server…</p>}
        {outcome.kind === "ok" && (
          <>
            <p className="try-it-status try-it-ok">
              OK · {outcome.ms} ms
              {outcome.count !== undefined ? ` · ${outcome.count} message${outcome.count === 1 ? "" : "s"}` : ""}
            </p>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll from the keyboard */}
            <pre tabIndex={0}>
              <code>{outcome.body}</code>
            </pre>
          </>
        )}
        {outcome.kind === "error" && (
          <>
            <p className="try-it-status try-it-failed">
              {outcome.title}
              {outcome.ms !== undefined ? ` · ${outcome.ms} ms` : ""}
            </p>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll from the keyboard */}
            <pre tabIndex={0}>
              <code>{outcome.body}</code>
            </pre>
          </>
        )}
      </div>
    </form>
  );
}

/** Renders the panel for a method ("package.Service.Method") into a container; returns unmount. */
export function mountTryIt(container: HTMLElement, methodId: string, sample: string): () => void {
  const root = createRoot(container);
  const method = findMethod(methodId);
  root.render(method ? <TryItPanel method={method} sample={sample} /> : <p>{methodId} is not a method of this API.</p>);
  // Unmounting is deferred: the page may be closing panels from inside its own React update.
  return () => queueMicrotask(() => root.unmount());
}
