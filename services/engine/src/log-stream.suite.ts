// Engine log streams (`…:stream_logs`, a WebSocket) through the real host, as the official
// integration tests read them: a line at a time, the same lines `:downloadLogs` gives, a
// not-available line while the engine does not run, and new lines as they are written.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { get, h, ok, post, res, runningEngine } from "./testing/rest-suite.js";

/** A WebSocket to the log stream of `name`, collecting its messages. */
async function openStream(name: string, query = "follow=true", user = "alice") {
  const url = `${h().url.replace(/^http/, "ws")}/v1/${name}:stream_logs?${query}`;
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${await h().token(user)}` } } as never);
  const messages: string[] = [];
  const waiters: Array<() => void> = [];
  let closed = false;
  ws.onmessage = (e) => {
    messages.push(String(e.data));
    for (const w of waiters.splice(0)) w();
  };
  ws.onclose = () => {
    closed = true;
    for (const w of waiters.splice(0)) w();
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`the log stream of ${name} did not open`));
  });
  return {
    messages,
    get closed() {
      return closed;
    },
    /** Resolves once `test` holds of the messages, or the stream closed. */
    async until(test: (m: string[]) => boolean): Promise<string[]> {
      while (!test(messages) && !closed) await new Promise<void>((r) => waiters.push(r));
      return messages;
    },
    close: () => ws.close(),
  };
}

/** The status line of a handshake to `path` with `headers`. */
function handshakeStatus(path: string, headers: Record<string, string>): Promise<string> {
  const url = new URL(h().url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        `host: ${url.host}`,
        "connection: Upgrade",
        "upgrade: websocket",
        "sec-websocket-version: 13",
        "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==",
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    });
    let seen = "";
    socket.on("data", (d: Buffer) => {
      seen += d.toString("latin1");
      if (seen.includes("\r\n")) {
        socket.destroy();
        resolve(seen.slice(0, seen.indexOf("\r\n")));
      }
    });
    socket.on("error", reject);
  });
}

async function downloaded(name: string): Promise<string> {
  const r = ok(await post(`/v1/${name}:downloadLogs`, { who: "alice" }));
  return Buffer.from(r.logs.data, "base64").toString();
}

describe("engine log streams", () => {
  it.each([["dai"], ["h2o"]] as const)(
    "stream a running %s engine's log a line at a time, then the lines written after",
    async (kind) => {
      const name = await runningEngine(kind);
      const stream = await openStream(name);
      const first = (await stream.until((m) => m.length >= 2)).slice(0, 2);
      for (const line of first) expect(line.endsWith("\n")).toBe(true);
      const lines = (await downloaded(name)).split(/(?<=\n)/);
      expect(first).toEqual(lines.slice(0, 2));
      // The stand-in logs every request it serves: a page nothing else asks for is a new line.
      const e = res(await get(`/v1/${name}`, { who: "alice" }));
      const page = await fetch(e.loginUrl, { headers: { authorization: `Bearer ${await h().token("alice")}` } });
      expect(page.status).toBe(200);
      const wanted = kind === "h2o" ? "/flow/index.html" : "/oidc/login";
      const after = await stream.until((m) => m.some((l) => l.includes(`GET /engines/${e.uid}${wanted}`)));
      expect(stream.closed).toBe(false);
      expect(after.some((l) => l.includes(wanted))).toBe(true);
      stream.close();
    },
  );

  it("say the logs are not available yet while the engine does not run, every two seconds", async () => {
    const name = await runningEngine("dai");
    ok(await post(`/v1/${name}:pause`, { who: "alice" }));
    await h().waitForState(name, "STATE_PAUSED");
    const stream = await openStream(name);
    expect(await stream.until((m) => m.length >= 2)).toEqual([
      "Driverless AI logs are not available yet\n",
      "Driverless AI logs are not available yet\n",
    ]);
    stream.close();
    const h2o = await runningEngine("h2o");
    ok(await post(`/v1/${h2o}:terminate`, { who: "alice" }));
    await h().waitForState(h2o, "STATE_TERMINATED");
    const once = await openStream(h2o, "follow=false");
    expect(await once.until(() => false)).toEqual(["H2O logs are not available yet"]);
  });

  it("without follow send the log as it is and close", async () => {
    const name = await runningEngine("dai");
    const stream = await openStream(name, "follow=false");
    const all = await stream.until(() => false);
    expect(stream.closed).toBe(true);
    expect(all.join("")).toBe(await downloaded(name).then((t) => t.slice(0, all.join("").length)));
    expect(all.length).toBeGreaterThan(1);
  });

  it("answer only the engine's creator (or an administrator), signed in with a bearer token", async () => {
    const name = await runningEngine("dai");
    const path = `/v1/${name}:stream_logs?follow=true`;
    expect(await handshakeStatus(path, {})).toMatch(/^HTTP\/1\.1 401/);
    expect(await handshakeStatus(path, { authorization: `Bearer ${await h().token("bob")}` })).toMatch(
      /^HTTP\/1\.1 404/,
    );
    const alice = { authorization: `Bearer ${await h().token("alice")}` };
    expect(await handshakeStatus(path, alice)).toMatch(/^HTTP\/1\.1 101/);
    expect(await handshakeStatus(`/v1/${name.replace(/\/[^/]+$/, "/no-such-engine")}:stream_logs`, alice)).toMatch(
      /^HTTP\/1\.1 404/,
    );
    // Notebook engines have no log stream.
    const notebook = await runningEngine("notebook");
    expect(await handshakeStatus(`/v1/${notebook}:stream_logs`, alice)).toMatch(/^HTTP\/1\.1 404/);
    // Plain HTTP under the same prefix is the REST API's, not the stream's.
    const plain = await fetch(`${h().url}/v1/${name}`, { headers: alice });
    expect(plain.status).toBe(200);
  });
});
