import { create, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "@aiem/proto/grpc/reflection/v1/reflection_pb.js";
import { createLibraryFixture, type LibraryFixture } from "../testing/library-fixture.js";
import { registerReflection } from "./reflection.js";

let fixture: LibraryFixture;
let ask: (requests: ServerReflectionRequest["messageRequest"][]) => Promise<ServerReflectionResponse[]>;

beforeAll(() => {
  fixture = createLibraryFixture();
  const transport = createRouterTransport((router) =>
    registerReflection(router, { registry: fixture.registry, serviceNames: () => ["edgetest.v1.LibraryService"] }),
  );
  const client = createClient(ServerReflection, transport);
  ask = async (requests) => {
    async function* input() {
      for (const messageRequest of requests) yield create(ServerReflectionRequestSchema, { messageRequest });
    }
    const out: ServerReflectionResponse[] = [];
    for await (const res of client.serverReflectionInfo(input())) out.push(res);
    return out;
  };
});

const fileNames = (res: ServerReflectionResponse | undefined) =>
  res?.messageResponse.case === "fileDescriptorResponse"
    ? res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name)
    : [];

describe("server reflection", () => {
  it("lists the served services and itself", async () => {
    const [res] = await ask([{ case: "listServices", value: "" }]);
    expect(res?.messageResponse.case).toBe("listServicesResponse");
    const names =
      res?.messageResponse.case === "listServicesResponse" ? res.messageResponse.value.service.map((s) => s.name) : [];
    expect(names).toEqual([
      "edgetest.v1.LibraryService",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);
  });

  it("finds files by symbol (service, method, nested type) with dependencies sent once per stream", async () => {
    const [service, method, nested] = await ask([
      { case: "fileContainingSymbol", value: "edgetest.v1.LibraryService" },
      { case: "fileContainingSymbol", value: "edgetest.v1.LibraryService.GetBook" },
      { case: "fileContainingSymbol", value: "edgetest.v1.Book.Genre" },
    ]);
    const first = fileNames(service);
    expect(first[0]).toBe("edgetest/v1/library.proto");
    expect(first).toEqual(
      expect.arrayContaining([
        "google/api/annotations.proto",
        "google/api/http.proto",
        "google/protobuf/timestamp.proto",
      ]),
    );
    expect(fileNames(method)).toEqual(["edgetest/v1/library.proto"]);
    expect(fileNames(nested)).toEqual(["edgetest/v1/library.proto"]);
  });

  it("keeps comments (source info) in the descriptors it sends", async () => {
    const [res] = await ask([{ case: "fileByFilename", value: "edgetest/v1/library.proto" }]);
    const file =
      res?.messageResponse.case === "fileDescriptorResponse"
        ? res.messageResponse.value.fileDescriptorProto[0]
        : undefined;
    const proto = fromBinary(FileDescriptorProtoSchema, file!);
    expect(proto.sourceCodeInfo?.location.some((l) => l.leadingComments.includes("Every query parameter shape"))).toBe(
      true,
    );
  });

  it("answers extension questions", async () => {
    const [numbers, byExtension] = await ask([
      { case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" },
      {
        case: "fileContainingExtension",
        value: {
          $typeName: "grpc.reflection.v1.ExtensionRequest",
          containingType: "google.protobuf.MethodOptions",
          extensionNumber: 72295728,
        },
      },
    ]);
    expect(
      numbers?.messageResponse.case === "allExtensionNumbersResponse" && numbers.messageResponse.value.extensionNumber,
    ).toContain(72295728);
    expect(fileNames(byExtension)[0]).toBe("google/api/annotations.proto");
  });

  it("answers NOT_FOUND for what it does not know", async () => {
    const [file, symbol] = await ask([
      { case: "fileByFilename", value: "nope.proto" },
      { case: "fileContainingSymbol", value: "nope.Nothing" },
    ]);
    for (const res of [file, symbol]) {
      expect(res?.messageResponse.case).toBe("errorResponse");
      expect(res?.messageResponse.case === "errorResponse" && res.messageResponse.value.errorCode).toBe(5);
    }
  });
});
