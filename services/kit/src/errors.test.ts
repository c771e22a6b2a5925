import {
  BadRequestSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
} from "@aiem/proto/google/rpc/error_details_pb.js";
import { describe, expect, it } from "vitest";
import {
  Code,
  ConnectError,
  aborted,
  alreadyExists,
  deadlineExceeded,
  failedPrecondition,
  hasCode,
  internalError,
  invalidArgument,
  invalidArguments,
  notFound,
  outOfRange,
  permissionDenied,
  quote,
  requiredField,
  resourceExhausted,
  unauthenticated,
  unavailable,
  unimplemented,
} from "./errors.js";

describe("errors", () => {
  it("invalidArgument names the field first and carries a BadRequest detail", () => {
    const err = invalidArgument("dai_engine.display_name", "must be at most 63 characters");
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("dai_engine.display_name: must be at most 63 characters");
    const [detail] = err.findDetails(BadRequestSchema);
    expect(detail?.fieldViolations.map((v) => [v.field, v.description])).toEqual([
      ["dai_engine.display_name", "must be at most 63 characters"],
    ]);
  });

  it("invalidArguments lists every violation", () => {
    const err = invalidArguments([
      { field: "cpu", description: "must be positive" },
      { field: "gpu", description: "must not be negative" },
    ]);
    expect(err.rawMessage).toBe("cpu: must be positive; gpu: must not be negative");
    expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations).toHaveLength(2);
    expect(() => invalidArguments([])).toThrow();
  });

  it("requiredField and outOfRange", () => {
    expect(requiredField("dai_engine.profile").rawMessage).toBe("dai_engine.profile: is required");
    const oor = outOfRange("offset", "is past the end of the output");
    expect(oor.code).toBe(Code.OutOfRange);
    expect(oor.rawMessage).toBe("offset: is past the end of the output");
  });

  it("notFound and alreadyExists quote the name and carry ResourceInfo", () => {
    const nf = notFound("workspaces/a/daiEngines/x", "enginemanager.ai/DAIEngine");
    expect(nf.code).toBe(Code.NotFound);
    expect(nf.rawMessage).toBe('"workspaces/a/daiEngines/x" not found');
    expect(nf.findDetails(ResourceInfoSchema)[0]?.resourceType).toBe("enginemanager.ai/DAIEngine");
    const ae = alreadyExists("workspaces/a/daiEngines/x");
    expect(ae.code).toBe(Code.AlreadyExists);
    expect(ae.rawMessage).toBe('"workspaces/a/daiEngines/x" already exists');
  });

  it("failedPrecondition optionally carries a PreconditionFailure", () => {
    const plain = failedPrecondition("the engine is running");
    expect(plain.code).toBe(Code.FailedPrecondition);
    expect(plain.details).toEqual([]);
    const withDetail = failedPrecondition("the image is disabled", {
      type: "IMAGE_DISABLED",
      subject: "workspaces/global/notebookEngineImages/x",
      description: "disabled",
    });
    expect(withDetail.findDetails(PreconditionFailureSchema)[0]?.violations[0]?.type).toBe("IMAGE_DISABLED");
  });

  it("maps each helper to its code", () => {
    expect(permissionDenied("no").code).toBe(Code.PermissionDenied);
    expect(unauthenticated().code).toBe(Code.Unauthenticated);
    expect(unauthenticated().rawMessage).toMatch(/bearer token/);
    expect(aborted("x").code).toBe(Code.Aborted);
    expect(resourceExhausted("x").code).toBe(Code.ResourceExhausted);
    expect(unavailable("x").code).toBe(Code.Unavailable);
    expect(unimplemented("x").code).toBe(Code.Unimplemented);
    expect(deadlineExceeded("x").code).toBe(Code.DeadlineExceeded);
    const cause = new Error("db exploded");
    const internal = internalError(undefined, cause);
    expect(internal.code).toBe(Code.Internal);
    expect(internal.rawMessage).toBe("internal error");
    expect(internal.cause).toBe(cause);
    expect(hasCode(internal, Code.Internal)).toBe(true);
    expect(hasCode(internal, Code.NotFound)).toBe(false);
    expect(hasCode(new Error("x"), Code.Internal)).toBe(false);
  });

  it("quote escapes and cuts client values", () => {
    expect(quote('a"b\nc')).toBe('"a\\"b\\nc"');
    expect(quote("x".repeat(200))).toBe(`"${"x".repeat(80)}..."`);
  });
});
