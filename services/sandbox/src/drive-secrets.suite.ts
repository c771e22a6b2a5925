// Drive transfers and the secure store over REST: workspace permissions on the drive, the
// filesystem's rules on the sandbox side, remote paths that cannot leave the drive; secret values
// reaching a process's environment and a revealed file (0600) and nothing else: no response,
// event, log line or stored row; only for the secret's owner or an administrator, each reveal
// audited.
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import type { ErrorCode, RestJson } from "@aiem/kit/testing";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import {
  SecretVersionRevealed_Target,
  type SecretVersionRevealed,
} from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { b64, expectError, ok, sharedHarness, unb64, WS, type SandboxHarness } from "./testing/index.js";

let h: SandboxHarness;
let sb: RestJson;
let driveDir: string;

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("drive");
  driveDir = path.join(h.t.dataDir, "drive");
});

const upload = (body: Record<string, unknown>, who: "creator" | "member" = "creator") =>
  h.rest("POST", `/v1/${sb.name}/h2oDrive:uploadFile`, { who, body: { workspace: `workspaces/${WS}`, ...body } });
const download = (body: Record<string, unknown>) =>
  h.rest("POST", `/v1/${sb.name}/h2oDrive:downloadFile`, { body: { workspace: `workspaces/${WS}`, ...body } });
const write = (p: string, content: string) =>
  h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
    body: { path: p, content: b64(content), overwrite: true, createParentDirectories: true },
  });
const read = async (p: string) =>
  unb64(ok(await h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=${encodeURIComponent(p)}`)).content).toString();

describe("drive", () => {
  it("uploads a sandbox file into the workspace's drive, replacing what is there", async () => {
    ok(await write("/workspace/out/report.txt", "report v1"));
    expect(
      ok(await upload({ localPath: "/workspace/out/report.txt", remotePath: "results/2024/report.txt" })).bytesUploaded,
    ).toBe("9");
    expect(fs.readFileSync(path.join(driveDir, WS, "results/2024/report.txt"), "utf8")).toBe("report v1");
    ok(await write("/workspace/out/report.txt", "report v2!"));
    expect(
      ok(await upload({ localPath: "/workspace/out/report.txt", remotePath: "results/2024/report.txt" })).bytesUploaded,
    ).toBe("10");
    expect(fs.readFileSync(path.join(driveDir, WS, "results/2024/report.txt"), "utf8")).toBe("report v2!");
  });

  it("uses the sandbox engine's own workspace when the request names none", async () => {
    const call = (verb: string, body: Record<string, unknown>) =>
      h.rest("POST", `/v1/${sb.name}/h2oDrive:${verb}`, { body });
    ok(await write("/workspace/own.txt", "own workspace"));
    expect(
      ok(await call("uploadFile", { localPath: "/workspace/own.txt", remotePath: "own/a.txt" })).bytesUploaded,
    ).toBe("13");
    expect(fs.readFileSync(path.join(driveDir, WS, "own/a.txt"), "utf8")).toBe("own workspace");
    ok(await call("uploadFile", { workspace: "", localPath: "/workspace/own.txt", remotePath: "own/b.txt" }));
    expect(fs.readFileSync(path.join(driveDir, WS, "own/b.txt"), "utf8")).toBe("own workspace");
    ok(await call("downloadFile", { remotePath: "own/a.txt", localPath: "/workspace/own-back.txt" }));
    expect(await read("/workspace/own-back.txt")).toBe("own workspace");
    // A bob sandbox in team-b reads team-b's drive by default, not team-a's.
    fs.mkdirSync(path.join(driveDir, "team-b"), { recursive: true });
    fs.writeFileSync(path.join(driveDir, "team-b", "own.txt"), "team b");
    const bobs = await h.createSandbox("drive-b", { who: "member", workspace: "team-b" });
    ok(
      await h.rest("POST", `/v1/${bobs.name}/h2oDrive:downloadFile`, {
        who: "member",
        body: { remotePath: "own.txt", localPath: "/workspace/own.txt" },
      }),
    );
    const got = ok(
      await h.rest("GET", `/v1/${bobs.name}/filesystem:readFile?path=/workspace/own.txt`, { who: "member" }),
    );
    expect(unb64(got.content).toString()).toBe("team b");
  });

  it("downloads a drive file with the filesystem's overwrite and parent rules (new files 0644)", async () => {
    fs.mkdirSync(path.join(driveDir, WS, "datasets"), { recursive: true });
    fs.writeFileSync(path.join(driveDir, WS, "datasets/train.csv"), "a,b\n1,2\n");
    const local = "/workspace/data/train.csv";
    expectError(
      await download({ remotePath: "datasets/train.csv", localPath: local }),
      "FAILED_PRECONDITION",
      "create_parent_directories",
    );
    const info = ok(
      await download({ remotePath: "datasets/train.csv", localPath: local, createParentDirectories: true }),
    ).fileInfo;
    expect(info).toMatchObject({ path: local, size: "8", type: "FILE_TYPE_REGULAR", mode: "0644" });
    expect(await read(local)).toBe("a,b\n1,2\n");
    expectError(
      await download({ remotePath: "datasets/train.csv", localPath: local, overwrite: false }),
      "ALREADY_EXISTS",
      local,
    );
    // Unset (or null, as the official client sends it) means overwrite.
    fs.writeFileSync(path.join(driveDir, WS, "datasets/train.csv"), "new");
    ok(await download({ remotePath: "datasets/train.csv", localPath: local }));
    expect(await read(local)).toBe("new");
    fs.writeFileSync(path.join(driveDir, WS, "datasets/train.csv"), "newer");
    ok(await download({ remotePath: "datasets/train.csv", localPath: local, overwrite: null }));
    expect(await read(local)).toBe("newer");
    fs.writeFileSync(path.join(driveDir, WS, "datasets/train.csv"), "newest");
    ok(await download({ remotePath: "datasets/train.csv", localPath: local, overwrite: true }));
    expect(await read(local)).toBe("newest");
  });

  it("needs read permission on the workspace to download and write permission to upload", async () => {
    fs.mkdirSync(path.join(driveDir, "team-c"), { recursive: true });
    fs.writeFileSync(path.join(driveDir, "team-c", "shared.txt"), "from c");
    // alice only views team-c: she may read its drive, not write it.
    ok(
      await download({
        workspace: "workspaces/team-c",
        remotePath: "shared.txt",
        localPath: "/workspace/c.txt",
        overwrite: true,
      }),
    );
    expect(await read("/workspace/c.txt")).toBe("from c");
    expectError(
      await upload({ workspace: "workspaces/team-c", localPath: "/workspace/c.txt", remotePath: "x.txt" }),
      "PERMISSION_DENIED",
      "drive/UPDATE",
    );
    // She is not in team-b at all.
    expectError(
      await download({ workspace: "workspaces/team-b", remotePath: "x", localPath: "/workspace/x" }),
      "PERMISSION_DENIED",
      "drive/GET",
    );
    expectError(
      await upload({ workspace: "workspaces/team-b", localPath: "/workspace/c.txt", remotePath: "x.txt" }),
      "PERMISSION_DENIED",
    );
    expect(fs.existsSync(path.join(driveDir, "team-c", "x.txt"))).toBe(false);
  });

  it("keeps remote paths inside the drive and reports missing and odd files", async () => {
    fs.mkdirSync(path.join(driveDir, WS, "datasets"), { recursive: true });
    ok(await write("/workspace/c.txt", "c"));
    for (const remotePath of ["../team-b/x", "/etc/passwd", "a/../../b", "", "./"]) {
      expectError(await download({ remotePath, localPath: "/workspace/x" }), "INVALID_ARGUMENT", "remote_path");
      expectError(await upload({ remotePath, localPath: "/workspace/c.txt" }), "INVALID_ARGUMENT", "remote_path");
    }
    const downloads: [Record<string, unknown>, ErrorCode, string][] = [
      [{ remotePath: "nope.txt", localPath: "/workspace/x" }, "NOT_FOUND", "nope.txt"],
      [{ remotePath: "datasets", localPath: "/workspace/x" }, "FAILED_PRECONDITION", "not a regular file"],
      [{ remotePath: "datasets/train.csv", localPath: "workspace/x" }, "INVALID_ARGUMENT", "local_path"],
      [
        { workspace: "team-a", remotePath: "datasets/train.csv", localPath: "/workspace/x" },
        "INVALID_ARGUMENT",
        "workspace",
      ],
    ];
    for (const [body, code, text] of downloads) expectError(await download(body), code, text);
    const uploads: [Record<string, unknown>, ErrorCode, string?][] = [
      [{ localPath: "/workspace/missing", remotePath: "m" }, "NOT_FOUND"],
      [{ localPath: "/workspace", remotePath: "m" }, "FAILED_PRECONDITION", "not a regular file"],
      [{ localPath: "/workspace/c.txt", remotePath: "datasets" }, "FAILED_PRECONDITION", "is a directory"],
    ];
    for (const [body, code, text] of uploads) expectError(await upload(body), code, text);
    // A link someone left in the drive directory does not lead out of it.
    fs.writeFileSync(path.join(h.t.dataDir, "host-only.txt"), "HOST");
    fs.symlinkSync(path.join(h.t.dataDir, "host-only.txt"), path.join(driveDir, WS, "link.txt"));
    expectError(await download({ remotePath: "link.txt", localPath: "/workspace/link.txt" }), "NOT_FOUND");
    fs.symlinkSync(h.t.dataDir, path.join(driveDir, WS, "linkdir"));
    expectError(
      await upload({ localPath: "/workspace/c.txt", remotePath: "linkdir/escaped.txt" }),
      "FAILED_PRECONDITION",
      "not a directory",
    );
    expect(fs.existsSync(path.join(h.t.dataDir, "escaped.txt"))).toBe(false);
  });
});

describe("secure store and secret environment variables", () => {
  // api-key holds two versions for the whole block; the test of `latest` resolved at start
  // rotates a secret of its own, so no test depends on another having run.
  const value = `s3cr3t-${randomBytes(12).toString("hex")}`;
  const later = `l4ter-${randomBytes(12).toString("hex")}`;
  const rotated = [`r0t1-${randomBytes(12).toString("hex")}`, `r0t2-${randomBytes(12).toString("hex")}`] as const;
  const sha = (s: string) => createHash("sha256").update(s).digest("hex");
  let secret: string;

  beforeAll(async () => {
    secret = ok(
      await h.rest("POST", `/v1/workspaces/${WS}/secrets?secretId=api-key`, { body: { displayName: "API key" } }),
    ).secret.name;
    ok(await h.rest("POST", `/v1/${secret}/versions`, { body: { value: b64(value) } }));
    ok(await h.rest("POST", `/v1/${secret}/versions`, { body: { value: b64(later) } }));
  });

  const hashOf = (variable: string) => ["sh", ["-c", `printf %s "$${variable}" | sha256sum | cut -d' ' -f1`]] as const;

  it("puts the value in the process's environment, resolved when the process starts", async () => {
    const [command, args] = hashOf("API_KEY");
    const r = await h.run(sb.name, command, [...args], {
      environmentVariables: { API_KEY: "plain", OTHER: "o" },
      secretEnvironmentVariables: { API_KEY: { secretVersion: `${secret}/versions/latest` } },
    });
    expect(r.output.trim()).toBe(sha(later));
    expect(r.process.secretEnvironmentVariables).toEqual({ API_KEY: { secretVersion: `${secret}/versions/latest` } });
    expect(r.process.environmentVariables).toEqual({ API_KEY: "plain", OTHER: "o" });

    // A pending process resolves `latest` when it starts, not when it was created.
    const rotating = ok(
      await h.rest("POST", `/v1/workspaces/${WS}/secrets?secretId=rotating`, { body: { displayName: "Rotating" } }),
    ).secret.name;
    ok(await h.rest("POST", `/v1/${rotating}/versions`, { body: { value: b64(rotated[0]) } }));
    const pending = ok(
      await h.rest("POST", `/v1/${sb.name}/processes`, {
        body: {
          command,
          args,
          secretEnvironmentVariables: { API_KEY: { secretVersion: `${rotating}/versions/latest` } },
        },
      }),
    ).process;
    ok(await h.rest("POST", `/v1/${rotating}/versions`, { body: { value: b64(rotated[1]) } }));
    ok(await h.rest("POST", `/v1/${pending.name}:start`, { body: {} }));
    ok(await h.rest("POST", `/v1/${pending.name}:wait`, { body: {} }));
    const out = unb64(ok(await h.rest("GET", `/v1/${pending.name}:readOutput`)).data).toString();
    expect(out.trim()).toBe(sha(rotated[1]));
    // An explicit version stays that version.
    const v1 = await h.run(sb.name, command, [...args], {
      secretEnvironmentVariables: { API_KEY: { secretVersion: `${secret}/versions/1` } },
    });
    expect(v1.output.trim()).toBe(sha(value));
  });

  it("reveals a value into a file with mode 0600, creating parents and replacing what is there", async () => {
    const file = "/workspace/keys/deep/api.key";
    const revealed = ok(
      await h.rest("POST", `/v1/${sb.name}/h2oSecureStore:revealSecretToFile`, {
        body: { secretVersion: `${secret}/versions/1`, path: file },
      }),
    );
    expect(revealed.secretVersion).toBe(`${secret}/versions/1`);
    const info = revealed.fileInfo;
    expect(info).toMatchObject({ path: file, type: "FILE_TYPE_REGULAR", mode: "0600", size: String(value.length) });
    expect(ok(await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace/keys/deep`)).fileInfo.mode).toBe(
      "0755",
    );
    const hash = await h.run(sb.name, "sh", ["-c", `sha256sum ${file} | cut -d' ' -f1`]);
    expect(hash.output.trim()).toBe(sha(value));
    // An existing 0644 file is replaced, and becomes 0600.
    ok(await write("/workspace/plain.txt", "plain"));
    const latest = ok(
      await h.rest("POST", `/v1/${sb.name}/h2oSecureStore:revealSecretToFile`, {
        body: { secretVersion: `${secret}/versions/latest`, path: "/workspace/plain.txt" },
      }),
    );
    // `latest` is reported as the version it stood for.
    expect(latest.secretVersion).toBe(`${secret}/versions/2`);
    const replaced = latest.fileInfo;
    expect(replaced.mode).toBe("0600");
    expect((await h.run(sb.name, "sh", ["-c", "sha256sum /workspace/plain.txt | cut -d' ' -f1"])).output.trim()).toBe(
      sha(later),
    );
  });

  it("checks references: malformed ones are 400, missing ones 404, other workspaces' 403, and nothing is created", async () => {
    const create = (secretVersion: string, autoRun = true, processId = "") =>
      h.rest("POST", `/v1/${sb.name}/processes?autoRun=${autoRun}${processId ? `&processId=${processId}` : ""}`, {
        body: { command: "true", secretEnvironmentVariables: { KEY: { secretVersion } } },
      });
    expectError(
      await create("secrets/x"),
      "INVALID_ARGUMENT",
      'process.secret_environment_variables["KEY"].secret_version',
    );
    expectError(
      await create(`${secret}/versions/0`),
      "INVALID_ARGUMENT",
      'process.secret_environment_variables["KEY"].secret_version',
    );
    expectError(await create(`workspaces/${WS}/secrets/none/versions/latest`, true, "never-made"), "NOT_FOUND");
    expectError(await h.rest("GET", `/v1/${sb.name}/processes/never-made`), "NOT_FOUND");
    // bob's secret in team-b, where alice is no member.
    const other = ok(await h.rest("POST", `/v1/workspaces/team-b/secrets?secretId=bobs`, { who: "member", body: {} }))
      .secret.name;
    ok(await h.rest("POST", `/v1/${other}/versions`, { who: "member", body: { value: b64("bob-only") } }));
    expectError(await create(`${other}/versions/latest`), "PERMISSION_DENIED");
    // Pending, it stays pending when its secret cannot be resolved at start.
    const pending = ok(await create(`${other}/versions/latest`, false)).process;
    expectError(await h.rest("POST", `/v1/${pending.name}:start`, { body: {} }), "PERMISSION_DENIED");
    expect(ok(await h.rest("GET", `/v1/${pending.name}`)).process.state).toBe("STATE_PENDING");
    const reveal = (secretVersion: string, p = "/workspace/r") =>
      h.rest("POST", `/v1/${sb.name}/h2oSecureStore:revealSecretToFile`, { body: { secretVersion, path: p } });
    expectError(await reveal(`${other}/versions/1`), "PERMISSION_DENIED");
    expectError(await reveal(`workspaces/${WS}/secrets/none/versions/1`), "NOT_FOUND");
    expectError(await reveal("nope"), "INVALID_ARGUMENT", "secret_version");
    expectError(await reveal(`${secret}/versions/1`, "relative"), "INVALID_ARGUMENT", "path");
    expectError(await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace/r`), "NOT_FOUND");
  });

  it("reveals a secret only for its owner or an administrator, and audits each reveal", async () => {
    const audits = async (): Promise<SecretVersionRevealed[]> => {
      const rows = (await h.catalogue
        .database!.db.selectFrom("outbox")
        .select(["subject", "payload"])
        .where("subject", "=", `enginemanager.secrets.${WS}.api-key.revealed`)
        .orderBy("seq")
        .execute()) as { subject: string; payload: Uint8Array }[];
      return rows.map((r) => {
        const event = fromBinary(EventSchema, r.payload);
        expect(event.payload.case).toBe("secretVersionRevealed");
        return event.payload.value as SecretVersionRevealed;
      });
    };
    const before = (await audits()).length;
    const revealInto = (who: "creator" | "member" | "admin", sandbox: string, secretVersion: string, p: string) =>
      h.rest("POST", `/v1/${sandbox}/h2oSecureStore:revealSecretToFile`, { who, body: { secretVersion, path: p } });
    const processIn = (who: "creator" | "member" | "admin", sandbox: string, secretVersion: string) =>
      h.rest("POST", `/v1/${sandbox}/processes?autoRun=true`, {
        who,
        body: { command: "true", secretEnvironmentVariables: { KEY: { secretVersion } } },
      });

    // bob, another member of the workspace, in his own sandbox there: no reveal, no variable, no
    // new version, no delete of alice's secret.
    const bobs = (await h.createSandbox("secrets-bob", { who: "member" })).name as string;
    expectError(await revealInto("member", bobs, `${secret}/versions/1`, "/workspace/stolen"), "PERMISSION_DENIED");
    expectError(
      await h.rest("GET", `/v1/${bobs}/filesystem:statFile?path=/workspace/stolen`, { who: "member" }),
      "NOT_FOUND",
    );
    expectError(await processIn("member", bobs, `${secret}/versions/latest`), "PERMISSION_DENIED");
    expect(ok(await h.rest("GET", `/v1/${bobs}/processes`, { who: "member" })).processes ?? []).toEqual([]);
    expectError(
      await h.rest("POST", `/v1/${secret}/versions`, { who: "member", body: { value: b64("planted") } }),
      "PERMISSION_DENIED",
    );
    expectError(await h.rest("DELETE", `/v1/${secret}`, { who: "member" }), "PERMISSION_DENIED");
    ok(await h.rest("GET", `/v1/${secret}`, { who: "member" }));

    // alice only views team-c: its secrets do not reach her sandbox in team-a.
    const viewed = ok(await h.rest("POST", "/v1/workspaces/team-c/secrets?secretId=viewed", { who: "admin", body: {} }))
      .secret.name;
    ok(await h.rest("POST", `/v1/${viewed}/versions`, { who: "admin", body: { value: b64("team-c only") } }));
    const viewer = await revealInto("creator", sb.name, `${viewed}/versions/1`, "/workspace/viewed");
    expectError(viewer, "PERMISSION_DENIED", "secretVersions/ACCESS");
    expectError(await processIn("creator", sb.name, `${viewed}/versions/1`), "PERMISSION_DENIED");
    expect(await audits()).toHaveLength(before);

    // An administrator may, in their own sandbox, and both reveals are on record.
    const roots = (await h.createSandbox("secrets-root", { who: "admin" })).name as string;
    ok(await revealInto("admin", roots, `${secret}/versions/1`, "/workspace/admin.key"));
    const variable = ok(await processIn("admin", roots, `${secret}/versions/latest`)).process;
    const recorded = (await audits()).slice(before);
    expect(recorded).toMatchObject([
      {
        secretVersion: `${secret}/versions/1`,
        principal: "users/root",
        sandboxEngine: roots,
        target: SecretVersionRevealed_Target.FILE,
        destination: "/workspace/admin.key",
        process: "",
      },
      {
        secretVersion: `${secret}/versions/2`,
        principal: "users/root",
        sandboxEngine: roots,
        target: SecretVersionRevealed_Target.ENVIRONMENT_VARIABLE,
        destination: "KEY",
        process: variable.name,
      },
    ]);
    // The owner's own reveal is recorded too.
    ok(await revealInto("creator", sb.name, `${secret}/versions/1`, "/workspace/again.key"));
    expect((await audits()).at(-1)).toMatchObject({ principal: "users/alice", sandboxEngine: sb.name });
  });

  it("never lets a value into a response, an event, a log line or a stored row", async () => {
    const [command, args] = hashOf("KEY");
    const r = await h.run(sb.name, command, [...args], {
      secretEnvironmentVariables: { KEY: { secretVersion: `${secret}/versions/1` } },
    });
    expect(r.output.trim()).toBe(sha(value));
    await h.sandbox.flushEvents();
    for (const v of [value, later, ...rotated]) {
      const forms = [v, b64(v), Buffer.from(v).toString("hex")];
      for (const form of forms) {
        expect(h.responses.filter((r) => r.includes(form))).toEqual([]);
        expect(h.logs.filter((l) => l.includes(form))).toEqual([]);
      }
      expect(h.events.filter((e) => Buffer.from(e.raw).includes(v))).toEqual([]);
      const rows = (await h.sandbox.database!.db.selectFrom("processes").select("resource").execute()) as {
        resource: Uint8Array;
      }[];
      expect(rows.filter((r) => Buffer.from(r.resource).includes(v))).toEqual([]);
      const outbox = (await h.sandbox.database!.db.selectFrom("outbox").select("payload").execute()) as {
        payload: Uint8Array;
      }[];
      expect(outbox.filter((r) => Buffer.from(r.payload).includes(v))).toEqual([]);
    }
    expect(h.events.some((e) => e.event.payload.case === "processStateChanged")).toBe(true);
  });
});
