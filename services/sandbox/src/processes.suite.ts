// Processes over REST: create (optional id, auto_run), :start, :wait (and giving up on it),
// :sendSignal with every signal number, :readOutput per stream, :streamOutput (replay, tail,
// keep-alives, resume without loss or repeat), list with a state filter, exit codes, working
// directories and environments, and output that stays bounded whatever a process writes.
import * as fs from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { ErrorCode, RestJson } from "@aiem/kit/testing";
import { Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { OUT_OF_MEMORY } from "./process-watcher.js";
import {
  expectError,
  ok,
  readNdjson,
  settled,
  sharedHarness,
  sleep,
  unb64,
  until,
  type SandboxHarness,
} from "./testing/index.js";

let h: SandboxHarness;
let sb: RestJson;

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("procs");
});

const create = async (body: Record<string, unknown>, query = "autoRun=true") =>
  ok(await h.rest("POST", `/v1/${sb.name}/processes?${query}`, { body })).process;
const wait = async (name: string) => ok(await h.rest("POST", `/v1/${name}:wait`, { body: {} })).process;
const output = async (name: string, stream = "OUTPUT_STREAM_COMBINED") => {
  const r = ok(await h.rest("GET", `/v1/${name}:readOutput?outputStream=${stream}`));
  return { text: unb64(r.data).toString(), dropped: BigInt(r.droppedBytes) };
};
/** The text of an output stream's lines, keep-alives left out. */
const textOf = (lines: RestJson[]) =>
  lines
    .filter((l) => !l.result.keepAlive)
    .map((l) => unb64(l.result.data).toString())
    .join("");
const stream = async (name: string, query = "", until?: (line: RestJson, all: RestJson[]) => boolean) => {
  const res = await fetch(`${h.t.url}/v1/${name}:streamOutput${query}`, {
    headers: { authorization: `Bearer ${await h.token("alice")}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/x-ndjson");
  return readNdjson(res, until);
};

describe("processes: create, start, get, list, delete", () => {
  it("creates pending processes, or running ones with autoRun; ids are optional", async () => {
    const pending = await create({ command: "echo", args: ["hello", "world"] }, "processId=1st-proc");
    expect(pending).toMatchObject({
      name: `${sb.name}/processes/1st-proc`,
      command: "echo",
      args: ["hello", "world"],
      workingDirectory: "/workspace",
      state: "STATE_PENDING",
    });
    expect(pending.exitCode).toBeUndefined();
    expect(pending.startTime).toBeNull();
    await expect(output(pending.name)).resolves.toEqual({ text: "", dropped: 0n });
    const started = ok(await h.rest("POST", `/v1/${pending.name}:start`, { body: {} })).process;
    expect(["STATE_RUNNING", "STATE_SUCCEEDED"]).toContain(started.state);
    expectError(
      await h.rest("POST", `/v1/${pending.name}:start`, { body: {} }),
      "FAILED_PRECONDITION",
      "only a pending process",
    );
    const done = await wait(pending.name);
    expect(done).toMatchObject({ state: "STATE_SUCCEEDED", exitCode: 0 });
    expect(Date.parse(done.endTime)).toBeGreaterThanOrEqual(Date.parse(done.startTime));
    expect(Date.parse(done.startTime)).toBeGreaterThanOrEqual(Date.parse(done.createTime));
    expect((await output(pending.name)).text).toBe("hello world\n");

    const auto = await create({ command: "true" });
    expect(auto.name).toMatch(new RegExp(`^${sb.name}/processes/p-[a-z0-9]{10}$`));
    expect(["STATE_RUNNING", "STATE_SUCCEEDED"]).toContain(auto.state);
    expectError(
      await h.rest("POST", `/v1/${sb.name}/processes?processId=1st-proc`, { body: { command: "true" } }),
      "ALREADY_EXISTS",
      pending.name,
    );
  });

  it("checks the process and its id", async () => {
    const post = (body: Record<string, unknown>, query = "") =>
      h.rest("POST", `/v1/${sb.name}/processes?${query}`, { body });
    for (const bad of ["-x", "Upper", "x_y", "a".repeat(64), "end-"])
      expectError(await post({ command: "true" }, `processId=${bad}`), "INVALID_ARGUMENT", "process_id");
    const invalid: [Record<string, unknown>, string][] = [
      [{}, "process.command"],
      [{ command: "true", workingDirectory: "tmp" }, "process.working_directory"],
      [{ command: "true", workingDirectory: "/a/../b" }, "process.working_directory"],
      [{ command: "true", environmentVariables: { "1BAD": "x" } }, 'process.environment_variables["1BAD"]'],
      [{ command: "true", environmentVariables: { "A=B": "x" } }, 'process.environment_variables["A=B"]'],
      [{ command: "tr\u0000ue" }, "process.command"],
    ];
    for (const [body, field] of invalid) expectError(await post(body), "INVALID_ARGUMENT", field);
    // A process that cannot start is not created.
    const unstartable: [Record<string, unknown>, string, ErrorCode, string][] = [
      [{ command: "no-such-program" }, "nope1", "NOT_FOUND", "no-such-program"],
      [{ command: "true", workingDirectory: "/nowhere" }, "nope2", "NOT_FOUND", "/nowhere"],
      [{ command: "/etc/hostname" }, "nope3", "PERMISSION_DENIED", "not executable"],
    ];
    for (const [body, id, code, text] of unstartable)
      expectError(await post(body, `autoRun=true&processId=${id}`), code, text);
    for (const id of ["nope1", "nope2", "nope3"])
      expectError(await h.rest("GET", `/v1/${sb.name}/processes/${id}`), "NOT_FOUND");
    // A pending one that cannot start stays pending.
    const p = await create({ command: "no-such-program" }, "");
    expectError(await h.rest("POST", `/v1/${p.name}:start`, { body: {} }), "NOT_FOUND");
    expect(ok(await h.rest("GET", `/v1/${p.name}`)).process.state).toBe("STATE_PENDING");
    expectError(await h.rest("GET", `/v1/${sb.name}/processes/Bad_Name`), "INVALID_ARGUMENT", "name");
  });

  it("reports exit codes: 0 succeeded, anything else failed", async () => {
    expect(await wait((await create({ command: "sh", args: ["-c", "exit 0"] })).name)).toMatchObject({
      state: "STATE_SUCCEEDED",
      exitCode: 0,
    });
    expect(await wait((await create({ command: "sh", args: ["-c", "exit 3"] })).name)).toMatchObject({
      state: "STATE_FAILED",
      exitCode: 3,
    });
    expect(await wait((await create({ command: "sh", args: ["-c", "exit 255"] })).name)).toMatchObject({
      state: "STATE_FAILED",
      exitCode: 255,
    });
    expect(await wait((await create({ command: "false" })).name)).toMatchObject({ state: "STATE_FAILED", exitCode: 1 });
  });

  it("runs in the working directory with the template's, its own and no other variables", async () => {
    const r = await h.run(sb.name, "sh", ["-c", "pwd; env | sort"], {
      workingDirectory: "/tmp",
      environmentVariables: { SHARED: "process", OWN: "own value with spaces" },
    });
    expect(r.output).toBe(
      "/tmp\nFROM_TEMPLATE=template\nOWN=own value with spaces\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nPWD=/tmp\nSHARED=process\n",
    );
  });

  it("lists newest first, filtered on state, in pages", async () => {
    const other = await h.createSandbox("procs-list");
    const names: string[] = [];
    for (const cmd of [["true"], ["false"], ["sleep", "30"]]) {
      names.push(
        ok(
          await h.rest("POST", `/v1/${other.name}/processes?autoRun=true`, {
            body: { command: cmd[0], args: cmd.slice(1) },
          }),
        ).process.name,
      );
    }
    names.push(ok(await h.rest("POST", `/v1/${other.name}/processes`, { body: { command: "true" } })).process.name);
    await wait(names[0]!);
    await wait(names[1]!);
    const list = async (query: string) => ok(await h.rest("GET", `/v1/${other.name}/processes?${query}`));
    expect((await list("")).processes.map((p: RestJson) => p.name)).toEqual([...names].reverse());
    const state = async (f: string) =>
      (await list(`filter=${encodeURIComponent(f)}`)).processes.map((p: RestJson) => p.name);
    expect(await state("state = STATE_RUNNING")).toEqual([names[2]]);
    expect(await state("state = STATE_PENDING")).toEqual([names[3]]);
    expect(await state("state = STATE_SUCCEEDED OR state = STATE_FAILED")).toEqual([names[1], names[0]]);
    expect(await state("state != STATE_PENDING")).toEqual([names[2], names[1], names[0]]);
    const first = await list("pageSize=3");
    expect(first.processes).toHaveLength(3);
    const second = await list(`pageSize=3&pageToken=${first.nextPageToken}`);
    expect(second.processes.map((p: RestJson) => p.name)).toEqual([names[0]]);
    expect(second.nextPageToken).toBe("");
    expectError(
      await h.rest("GET", `/v1/${other.name}/processes?filter=${encodeURIComponent('command = "x"')}`),
      "INVALID_ARGUMENT",
      "filter",
    );
    expectError(await h.rest("GET", `/v1/${other.name}/processes?pageSize=-1`), "INVALID_ARGUMENT", "page_size");
  });

  it("deletes a process (killing it first) and its output; its id can be used again", async () => {
    const p = await create({ command: "sleep", args: ["30"] }, "autoRun=true&processId=doomed");
    const deleted = ok(await h.rest("DELETE", `/v1/${p.name}`)).process;
    expect(deleted).toMatchObject({ name: p.name, state: "STATE_FAILED", exitCode: 137 });
    expectError(await h.rest("GET", `/v1/${p.name}`), "NOT_FOUND", p.name);
    expectError(await h.rest("GET", `/v1/${p.name}:readOutput`), "NOT_FOUND");
    const again = await create({ command: "echo", args: ["reborn"] }, "autoRun=true&processId=doomed");
    await wait(again.name);
    expect((await output(again.name)).text).toBe("reborn\n");
    // Ended, waited for, deleted: a wait then knows it no more (the ended row kept for waits goes too).
    ok(await h.rest("DELETE", `/v1/${again.name}`));
    expectError(await h.rest("POST", `/v1/${again.name}:wait`, { body: {} }), "NOT_FOUND", again.name);
    const third = await create({ command: "sh", args: ["-c", "exit 4"] }, "autoRun=true&processId=doomed");
    expect(await wait(third.name)).toMatchObject({ state: "STATE_FAILED", exitCode: 4 });
  });

  it("records creation, start and end as events without the command or environment", async () => {
    const p = await create(
      { command: "sh", args: ["-c", "echo EVENT-ARG"], environmentVariables: { EVENT_ENV: "EVENT-VALUE" } },
      "",
    );
    ok(await h.rest("POST", `/v1/${p.name}:start`, { body: {} }));
    await wait(p.name);
    await h.sandbox.flushEvents();
    const until = Date.now() + 5_000;
    const mine = () =>
      h.events.filter(
        (e) => e.event.payload.case === "processStateChanged" && e.event.payload.value.process === p.name,
      );
    while (mine().length < 3 && Date.now() < until) await sleep(20);
    expect(mine().map((e) => e.subject)).toEqual(
      Array(3).fill(`enginemanager.sandboxes.team-a.procs.processes.${p.name.split("/").pop()}.state`),
    );
    expect(
      mine().map((e) => {
        const v = e.event.payload.value as { previousState: number; state: number; exitCode?: number };
        return [Process_State[v.previousState], Process_State[v.state], v.exitCode];
      }),
    ).toEqual([
      ["UNSPECIFIED", "PENDING", undefined],
      ["PENDING", "RUNNING", undefined],
      ["RUNNING", "SUCCEEDED", 0],
    ]);
    for (const e of mine()) {
      const raw = Buffer.from(e.raw);
      for (const text of ["EVENT-ARG", "EVENT-VALUE", "EVENT_ENV"]) expect(raw.includes(text)).toBe(false);
    }
  });
});

describe("processes: wait and signals", () => {
  it("waits until the process ends, with all its output readable; the exit code stays", async () => {
    // The process ends only once the test says so: the wait must still be open then.
    const gate = "/workspace/wait-gate";
    const p = await create({ command: "sh", args: ["-c", `while [ ! -e ${gate} ]; do sleep 0.02; done; echo done`] });
    let answered = false;
    const waiting = wait(p.name).finally(() => {
      answered = true;
    });
    expect(ok(await h.rest("GET", `/v1/${p.name}`)).process.state).toBe("STATE_RUNNING");
    expect(answered).toBe(false);
    ok(
      await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
        body: { path: gate, content: Buffer.from("go").toString("base64") },
      }),
    );
    const done = await waiting;
    expect(done).toMatchObject({ state: "STATE_SUCCEEDED", exitCode: 0 });
    expect((await output(p.name)).text).toBe("done\n");
    // Answers for an ended process too (it has nothing left to wait for), and the exit code outlives it.
    expect((await wait(p.name)).exitCode).toBe(0);
    expect(ok(await h.rest("GET", `/v1/${p.name}`)).process.exitCode).toBe(0);
  });

  it("lets the caller give up waiting without affecting the process; a pending process is waited through its start", async () => {
    const p = await create({ command: "sleep", args: ["30"] });
    const abort = new AbortController();
    const waiting = fetch(`${h.t.url}/v1/${p.name}:wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${await h.token("alice")}`, "content-type": "application/json" },
      body: "{}",
      signal: abort.signal,
    }).catch((e: unknown) => e);
    await sleep(300);
    abort.abort();
    expect(await waiting).toBeInstanceOf(Error);
    await sleep(100);
    expect(ok(await h.rest("GET", `/v1/${p.name}`)).process.state).toBe("STATE_RUNNING");
    ok(await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: 9 } }));
    expect(await wait(p.name)).toMatchObject({ state: "STATE_FAILED", exitCode: 137 });

    const pending = await create({ command: "echo", args: ["late"] }, "");
    const waited = wait(pending.name);
    await sleep(300);
    ok(await h.rest("POST", `/v1/${pending.name}:start`, { body: {} }));
    expect(await waited).toMatchObject({ state: "STATE_SUCCEEDED", exitCode: 0 });
    expect((await output(pending.name)).text).toBe("late\n");
  });

  it("delivers every signal number 1-64: terminating ones end the process with 128 + N, the others leave it running", async () => {
    const nonTerminating = new Set([17, 18, 19, 20, 21, 22, 23, 28]); // CHLD CONT STOP TSTP TTIN TTOU URG WINCH
    const sigs = Array.from({ length: 64 }, (_, i) => i + 1);
    const procs = await Promise.all(
      sigs.map((s) => create({ command: "sleep", args: ["30"] }, `autoRun=true&processId=sig-${s}`)),
    );
    await Promise.all(
      procs.map((p, i) => h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: sigs[i] } }).then(ok)),
    );
    const ended = await Promise.all(procs.map((p, i) => (nonTerminating.has(sigs[i]!) ? undefined : wait(p.name))));
    for (const [i, s] of sigs.entries()) {
      if (nonTerminating.has(s)) continue;
      expect([s, ended[i]!.state, ended[i]!.exitCode]).toEqual([s, "STATE_FAILED", 128 + s]);
    }
    await sleep(300);
    for (const [i, s] of sigs.entries()) {
      if (!nonTerminating.has(s)) continue;
      expect([s, ok(await h.rest("GET", `/v1/${procs[i]!.name}`)).process.state]).toEqual([s, "STATE_RUNNING"]);
      ok(await h.rest("POST", `/v1/${procs[i]!.name}:sendSignal`, { body: { signal: 18 } }));
      ok(await h.rest("POST", `/v1/${procs[i]!.name}:sendSignal`, { body: { signal: 15 } }));
      expect(await wait(procs[i]!.name)).toMatchObject({ exitCode: 143 });
    }
  });

  it("stops and continues a process with SIGSTOP and SIGCONT; signals reach its children", async () => {
    const p = await create({
      command: "sh",
      args: ["-c", "i=0; while true; do echo $i; i=$((i+1)); sleep 0.02; done"],
    });
    const length = async () => (await output(p.name)).text.length;
    await until(async () => (await length()) > 0);
    ok(await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: 19 } }));
    // Output already in the pipe may still arrive: frozen means it stopped growing, and stays so.
    const frozen = await settled(length);
    await sleep(300);
    expect(await length()).toBe(frozen);
    ok(await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: 18 } }));
    await until(async () => (await length()) > frozen);
    ok(await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: 15 } }));
    expect(await wait(p.name)).toMatchObject({ state: "STATE_FAILED", exitCode: 143 });

    // The shell and its child get the signal as a group: had only the shell got it, the child
    // would hold the output pipes for its 60 s.
    const parent = await create({ command: "sh", args: ["-c", "sleep 60 & echo started; wait"] });
    await until(async () => (await output(parent.name)).text === "started\n");
    const t0 = Date.now();
    ok(await h.rest("POST", `/v1/${parent.name}:sendSignal`, { body: { signal: 15 } }));
    expect(await wait(parent.name)).toMatchObject({ state: "STATE_FAILED", exitCode: 143 });
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it("says why a process failed when the kernel killed it at the sandbox's memory limit, and not for a SIGKILL sent", async () => {
    const { template } = await h.catalogueFixture("oom-96", { memoryBytesLimit: String(96 << 20) });
    const small = await h.createSandbox("oom", { template });
    const hog = ok(
      await h.rest("POST", `/v1/${small.name}/processes?autoRun=true`, {
        body: { command: "python3", args: ["-c", "a=[]\nwhile True: a.append(bytearray(1<<20))"] },
      }),
    ).process;
    expect(await wait(hog.name)).toMatchObject({ state: "STATE_FAILED", exitCode: 137, failureReason: OUT_OF_MEMORY });
    expect(ok(await h.rest("GET", `/v1/${hog.name}`)).process.failureReason).toBe(OUT_OF_MEMORY);
    // The sandbox and its agent live on.
    const after = ok(
      await h.rest("POST", `/v1/${small.name}/processes?autoRun=true`, { body: { command: "true" } }),
    ).process;
    expect(await wait(after.name)).toMatchObject({ state: "STATE_SUCCEEDED", exitCode: 0 });

    const killed = await create({ command: "sleep", args: ["30"] });
    ok(await h.rest("POST", `/v1/${killed.name}:sendSignal`, { body: { signal: 9 } }));
    const ended = await wait(killed.name);
    expect(ended).toMatchObject({ state: "STATE_FAILED", exitCode: 137 });
    expect(ended.failureReason ?? "").toBe("");
  });

  it("refuses signals outside 1-64 and signals to processes that do not run", async () => {
    const p = await create({ command: "sleep", args: ["30"] });
    for (const signal of [0, 65, -9])
      expectError(await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal } }), "INVALID_ARGUMENT", "signal");
    ok(await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: 9 } }));
    await wait(p.name);
    expectError(
      await h.rest("POST", `/v1/${p.name}:sendSignal`, { body: { signal: 9 } }),
      "FAILED_PRECONDITION",
      "only a running process",
    );
    const pending = await create({ command: "true" }, "");
    expectError(await h.rest("POST", `/v1/${pending.name}:sendSignal`, { body: { signal: 9 } }), "FAILED_PRECONDITION");
  });
});

describe("processes: output", () => {
  let mixed: RestJson;
  const script = "echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three; sleep 0.05; echo four >&2";

  beforeAll(async () => {
    mixed = await create({ command: "sh", args: ["-c", script] });
    await wait(mixed.name);
  });

  it("reads stdout (also by default), stderr, or both in the order written", async () => {
    expect((await output(mixed.name, "OUTPUT_STREAM_STDOUT")).text).toBe("one\nthree\n");
    expect((await output(mixed.name, "OUTPUT_STREAM_UNSPECIFIED")).text).toBe("one\nthree\n");
    expect(unb64(ok(await h.rest("GET", `/v1/${mixed.name}:readOutput`)).data).toString()).toBe("one\nthree\n");
    expect((await output(mixed.name, "OUTPUT_STREAM_STDERR")).text).toBe("two\nfour\n");
    expect(await output(mixed.name)).toEqual({ text: "one\ntwo\nthree\nfour\n", dropped: 0n });
  });

  it("reads the output as frames: each chunk with its stream and offset, joining to the combined output", async () => {
    const frames = ok(await h.rest("GET", `/v1/${mixed.name}:readOutputFrames`)).frames;
    expect(frames.map((f: RestJson) => [f.stream, unb64(f.data).toString(), Number(f.offset)])).toEqual([
      ["OUTPUT_STREAM_STDOUT", "one\n", 0],
      ["OUTPUT_STREAM_STDERR", "two\n", 4],
      ["OUTPUT_STREAM_STDOUT", "three\n", 8],
      ["OUTPUT_STREAM_STDERR", "four\n", 14],
    ]);
    expect(ok(await h.rest("GET", `/v1/${mixed.name}:readOutputFrames`)).droppedBytes).toBe("0");
    // A pending process has none; a quoted name (as the official client sends it) reaches the same call.
    const pending = await create({ command: "true" }, "");
    expect(ok(await h.rest("GET", `/v1/${pending.name}:readOutputFrames`)).frames).toEqual([]);
    const quoted = encodeURIComponent(mixed.name);
    expect(ok(await h.rest("GET", `/v1/${quoted}:readOutputFrames`)).frames).toHaveLength(4);
    expectError(await h.rest("GET", `/v1/${sb.name}/processes/nope:readOutputFrames`), "NOT_FOUND");
    expectError(await h.rest("GET", `/v1/${sb.name}/processes/Bad_Id:readOutputFrames`), "INVALID_ARGUMENT", "name");
  });

  it("streams as NDJSON: replays from the start with stream tags and offsets, then ends", async () => {
    const lines = await stream(mixed.name);
    const results = lines.map((l) => l.result);
    expect(lines.every((l) => l.result)).toBe(true);
    const data = results.filter((r) => !r.keepAlive);
    expect(data.map((r) => [r.stream, unb64(r.data).toString(), Number(r.offset)])).toEqual([
      ["OUTPUT_STREAM_STDOUT", "one\n", 0],
      ["OUTPUT_STREAM_STDERR", "two\n", 4],
      ["OUTPUT_STREAM_STDOUT", "three\n", 8],
      ["OUTPUT_STREAM_STDERR", "four\n", 14],
    ]);
    expect(data.every((r) => r.droppedBytes === "0")).toBe(true);
    // From an offset inside the log.
    const from = await stream(mixed.name, "?startOffset=9");
    expect(from.map((l) => unb64(l.result.data).toString()).join("")).toBe("hree\nfour\n");
    expect(from[0].result.offset).toBe("9");
  });

  it("streams large binary output as NDJSON byte for byte (chunks written beside the JSON text)", async () => {
    // Over 64 KiB a chunk's base64 is written from its bytes rather than inside the JSON text.
    const p = await create({ command: "sh", args: ["-c", "head -c 600000 /dev/urandom | tee /workspace/random.bin"] });
    await wait(p.name);
    const lines = await stream(p.name);
    const data = lines.map((l) => l.result).filter((r) => !r.keepAlive);
    expect(Math.max(...data.map((r) => unb64(r.data).length))).toBeGreaterThanOrEqual(64 << 10);
    const streamed = Buffer.concat(data.map((r) => unb64(r.data)));
    const file = ok(
      await h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=${encodeURIComponent("/workspace/random.bin")}`),
    );
    expect(streamed.equals(unb64(file.content))).toBe(true);
    expect(streamed.length).toBe(600000);
    let offset = 0;
    for (const r of data) {
      expect(Number(r.offset)).toBe(offset);
      offset += unb64(r.data).length;
    }
  });

  it("skipReplay follows only new output; bad offsets are refused", async () => {
    const p = await create({ command: "sh", args: ["-c", "echo before; sleep 0.6; echo after"] });
    await sleep(250);
    const lines = await stream(p.name, "?skipReplay=true");
    expect(textOf(lines)).toBe("after\n");
    const get = (q: string) => h.rest("GET", `/v1/${p.name}:streamOutput?${q}`);
    expectError(await get("startOffset=1000"), "OUT_OF_RANGE", "start_offset");
    expectError(await get("startOffset=3&skipReplay=true"), "INVALID_ARGUMENT", "skip_replay");
    expectError(await get("startOffset=-1"), "INVALID_ARGUMENT", "start_offset");
  });

  it("sends keep-alives on quiet streams and waits on a pending process for its start", async () => {
    const quiet = await create({ command: "sh", args: ["-c", "sleep 1; echo end"] });
    const lines = await stream(quiet.name);
    const kinds = lines.map((l) => (l.result.keepAlive ? "k" : "d"));
    expect(kinds.filter((k) => k === "k").length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1).result).toMatchObject({ stream: "OUTPUT_STREAM_STDOUT", offset: "0" });
    const ka = lines.find((l) => l.result.keepAlive).result;
    expect(ka).toMatchObject({ stream: "OUTPUT_STREAM_UNSPECIFIED", data: "", keepAlive: true });

    const pending = await create({ command: "echo", args: ["started later"] }, "");
    const streamed = stream(pending.name);
    await sleep(700);
    ok(await h.rest("POST", `/v1/${pending.name}:start`, { body: {} }));
    const got = await streamed;
    expect(got.filter((l) => l.result.keepAlive).length).toBeGreaterThanOrEqual(1);
    expect(textOf(got)).toBe("started later\n");
  });

  it("a stream cut and resumed from its last offset gets every byte exactly once", async () => {
    const p = await create({
      command: "sh",
      args: [
        "-c",
        "i=0; while [ $i -lt 600 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); [ $((i % 60)) -eq 0 ] && sleep 0.05; done",
      ],
    });
    const received: Buffer[] = [];
    let next = 0n;
    let cuts = 0;
    for (;;) {
      // Take three chunks, then drop the connection, and resume where the last chunk ended.
      let taken = 0;
      const lines = await stream(
        p.name,
        `?startOffset=${next}`,
        (line) => !!line.result && !line.result.keepAlive && ++taken === 3,
      );
      for (const line of lines) {
        const r = line.result;
        if (!r || r.keepAlive) continue;
        expect(BigInt(r.offset)).toBe(next);
        expect(r.droppedBytes).toBe("0");
        const data = unb64(r.data);
        received.push(data);
        next += BigInt(data.length);
      }
      if (taken < 3) break; // the stream ended by itself: the process ended and everything was sent
      cuts++;
    }
    expect(cuts).toBeGreaterThan(3);
    const all = await output(p.name);
    expect(Buffer.concat(received).toString()).toBe(all.text);
    expect(all.text.split("\n").filter((l) => l.startsWith("out-")).length).toBe(600);
    expect(all.text.split("\n").filter((l) => l.startsWith("err-")).length).toBe(600);
  });

  it("keeps output bounded: 1 GB from a process nobody reads, with the service's memory flat", async () => {
    const total = 1 << 30;
    const limit = 4 << 20;
    const rss = () => process.memoryUsage().rss;
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 25);
    const t0 = Date.now();
    const p = await create({ command: "head", args: ["-c", String(total), "/dev/zero"] });
    const done = await wait(p.name);
    clearInterval(sampler);
    const seconds = (Date.now() - t0) / 1000;
    expect(done).toMatchObject({ state: "STATE_SUCCEEDED", exitCode: 0 });
    // The service never held the output: its memory did not grow by anything like it.
    expect(peak - before).toBeLessThan(64 << 20);
    // The agent kept the newest `limit` bytes and counted the rest.
    const combined = ok(await h.rest("GET", `/v1/${p.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`));
    expect(unb64(combined.data).length).toBe(limit);
    expect(BigInt(combined.droppedBytes)).toBe(BigInt(total - limit));
    const first = (await stream(p.name, "", () => true))[0].result;
    expect(first.droppedBytes).toBe(String(total - limit));
    expect(first.offset).toBe(String(total - limit));
    // And the agent's own memory stayed bounded too.
    const agentRss = sandboxRss(h.sandbox.runtime.get(runtimeIdOf(sb))!.pid);
    expect(agentRss).toBeLessThan(256 << 20);
    console.log(
      `1 GiB of output in ${seconds.toFixed(1)} s; service RSS +${((peak - before) / 2 ** 20).toFixed(1)} MiB; sandbox RSS ${(agentRss / 2 ** 20).toFixed(0)} MiB`,
    );
  });
});

let runtimeIds = new Map<string, string>();
function runtimeIdOf(sandbox: RestJson): string {
  return runtimeIds.get(sandbox.uid) ?? sandbox.uid;
}

beforeAll(async () => {
  const rows = (await h.sandbox.database!.db.selectFrom("sandbox_engines").select(["uid", "runtime_id"]).execute()) as {
    uid: string;
    runtime_id: string;
  }[];
  runtimeIds = new Map(rows.map((r) => [r.uid, r.runtime_id]));
});

/** Resident memory of a process and its descendants, from /proc. */
function sandboxRss(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const status = fs.readFileSync(`/proc/${p}/status`, "utf8");
      total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      for (const task of fs.readdirSync(`/proc/${p}/task`)) {
        const children = fs.readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim();
        for (const c of children ? children.split(/\s+/) : []) visit(Number(c));
      }
    } catch {
      // gone
    }
  };
  visit(pid);
  return total;
}
