import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createContextValues,
  createRouterTransport,
  type ConnectRouter,
  type HandlerContext,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ProcessSchema } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import {
  CreateProcessRequestSchema,
  type CreateProcessRequest,
} from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { DAILicenseService } from "@aiem/proto/enginemanager/v1/dai_license_service_pb.js";
import { invalidArgument } from "../errors.js";
import { createLogger } from "../logger.js";
import { guardHandler, registerGuarded } from "./handler-guard.js";

const ctx = { values: createContextValues() } as unknown as HandlerContext;

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: "debug", write: (line: string) => void lines.push(line) }) };
}

const request = (process: Parameters<typeof create<typeof ProcessSchema>>[1]) =>
  create(CreateProcessRequestSchema, {
    parent: "workspaces/w/sandboxEngines/s",
    process: create(ProcessSchema, process),
  });

async function codeOf(run: () => unknown): Promise<ConnectError> {
  try {
    await run();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("no error");
}

describe("guardHandler", () => {
  it("refuses NUL in strings, list items and map keys or values, naming the field, before the handler runs", async () => {
    const { logger } = capture();
    let called = 0;
    const guarded = guardHandler(
      { logger, label: "test" },
      "P/Create",
      CreateProcessRequestSchema,
      async () => void called++,
    );
    const cases: Array<[ReturnType<typeof request>, string]> = [
      [request({ command: "a\0b" }), "process.command"],
      [request({ command: "sh", args: ["ok", "x\0"] }), "process.args[1]"],
      [request({ command: "sh", environmentVariables: { "K\0": "v" } }), "process.environment_variables"],
      [request({ command: "sh", environmentVariables: { K: "v\0" } }), "process.environment_variables"],
    ];
    for (const [req, field] of cases) {
      const err = await codeOf(() => guarded(req, ctx));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toContain(field);
      expect(err.rawMessage).toContain("NUL");
    }
    expect(called).toBe(0);
    await guarded(request({ command: "sh", args: ["ok"], environmentVariables: { K: "v" } }), ctx);
    expect(called).toBe(1);
  });

  it("checks each message of a client stream as the handler takes it, naming the field", async () => {
    const { logger } = capture();
    const taken: string[] = [];
    const guarded = guardHandler(
      { logger, label: "test" },
      "P/Stream",
      CreateProcessRequestSchema,
      async (requests: AsyncIterable<{ parent: string }>) => {
        for await (const r of requests) taken.push(r.parent);
      },
    );
    async function* stream() {
      yield request({ command: "sh" });
      yield create(CreateProcessRequestSchema, { parent: "second" });
      yield request({ command: "sh", args: ["x\0"] });
      yield create(CreateProcessRequestSchema, { parent: "never taken" });
    }
    const err = await codeOf(() => guarded(stream(), ctx));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain("process.args[0]");
    expect(taken).toEqual(["workspaces/w/sandboxEngines/s", "second"]);
  });

  it("passes ConnectErrors through and answers anything else as INTERNAL without its message, logging only class, message and stack", async () => {
    const { logger, lines } = capture();
    const options = { logger, label: "test" };
    const refused = guardHandler(options, "P/Create", CreateProcessRequestSchema, async () => {
      throw invalidArgument("parent", "is wrong");
    });
    expect((await codeOf(() => refused(request({}), ctx))).code).toBe(Code.InvalidArgument);
    expect(lines).toEqual([]);

    const broken = guardHandler(options, "P/Create", CreateProcessRequestSchema, async () => {
      throw new TypeError("select * from secrets failed");
    });
    const err = await codeOf(() => broken(request({ environmentVariables: { TOKEN: "s3cret" } }), ctx));
    expect(err.code).toBe(Code.Internal);
    expect(err.rawMessage).toBe("internal error");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("test call failed");
    expect(lines[0]).toContain("select * from secrets failed");
    expect(lines[0]).not.toContain("s3cret");

    const throwsAtOnce = guardHandler(options, "P/Create", CreateProcessRequestSchema, () => {
      throw new Error("sync");
    });
    expect((await codeOf(() => throwsAtOnce(request({}), ctx))).code).toBe(Code.Internal);
  });

  it("answers a database that went away under the call as UNAVAILABLE, which clients retry", async () => {
    const { logger, lines } = capture();
    // What the pg driver throws when the server shuts down, drops the connection, or refuses it.
    const shutdown = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    for (const thrown of [shutdown, new Error("Connection terminated unexpectedly"), refused]) {
      const guarded = guardHandler({ logger, label: "test" }, "P/Create", CreateProcessRequestSchema, async () => {
        throw thrown;
      });
      const err = await codeOf(() => guarded(request({}), ctx));
      expect(err.code, thrown.message).toBe(Code.Unavailable);
      expect(err.rawMessage).toBe("the database is unavailable; retry shortly");
    }
    expect(lines).toHaveLength(3);
    // Anything else from the database stays INTERNAL.
    const broken = guardHandler({ logger, label: "test" }, "P/Create", CreateProcessRequestSchema, async () => {
      throw Object.assign(new Error("relation does not exist"), { code: "42P01" });
    });
    expect((await codeOf(() => broken(request({}), ctx))).code).toBe(Code.Internal);
  });

  it("guards a server stream: items pass, a failure midway becomes INTERNAL", async () => {
    const { logger } = capture();
    const streaming = guardHandler(
      { logger, label: "test" },
      "P/Stream",
      CreateProcessRequestSchema,
      async function* () {
        yield 1;
        yield 2;
        throw new Error("agent went away");
      },
    );
    const seen: number[] = [];
    const err = await codeOf(async () => {
      for await (const item of streaming(request({}), ctx) as AsyncIterable<number>) seen.push(item);
    });
    expect(seen).toEqual([1, 2]);
    expect(err.code).toBe(Code.Internal);
  });
});

describe("registerGuarded", () => {
  const options = { logger: capture().logger, label: "test" };

  it("serves every method of the service through its handler", async () => {
    const transport = createRouterTransport((router) =>
      registerGuarded(
        router,
        DAILicenseService,
        { getDAILicenseMetadata: async () => ({ daiLicenseMetadata: { licenseVersion: "1" } }) },
        options,
      ),
    );
    const answer = await createClient(DAILicenseService, transport).getDAILicenseMetadata({});
    expect(answer.daiLicenseMetadata?.licenseVersion).toBe("1");
  });

  // The type check is the test here: each `@ts-expect-error` fails `npm run typecheck` once the
  // handler map is no longer refused. At run time registration refuses what it can see.
  it("refuses a handler map that lacks, misspells or mistypes a method of its service", () => {
    const router = { service: () => router } as unknown as ConnectRouter;
    // @ts-expect-error the map lacks getDAILicenseMetadata
    expect(() => registerGuarded(router, DAILicenseService, {}, options)).toThrow(
      "no handler for enginemanager.v1.DAILicenseService.GetDAILicenseMetadata",
    );
    const misspelt = { getDaiLicenseMetadata: async () => ({}) };
    // @ts-expect-error getDaiLicenseMetadata is not the method's name
    expect(() => registerGuarded(router, DAILicenseService, misspelt, options)).toThrow(/no handler for/);
    const wrongResponse = { getDAILicenseMetadata: async () => ({ daiLicenseMetadata: 5 }) };
    // @ts-expect-error the response's field holds a message, not a number
    registerGuarded(router, DAILicenseService, wrongResponse, options);
    const takesAnotherRequest = async (req: CreateProcessRequest) => ({
      daiLicenseMetadata: { licenseVersion: req.parent },
    });
    // @ts-expect-error the handler takes another method's request
    registerGuarded(router, DAILicenseService, { getDAILicenseMetadata: takesAnotherRequest }, options);
  });
});
