// gRPC server reflection (grpc.reflection.v1 and v1alpha) answered from the descriptor
// registry, so grpcurl and `buf curl` can discover and call every service on the edge port
// without local proto files.
import {
  create,
  fromBinary,
  toBinary,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type FileRegistry,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection as ServerReflectionV1,
  ServerReflectionRequestSchema as RequestV1Schema,
  ServerReflectionResponseSchema as ResponseV1Schema,
  ErrorResponseSchema,
  ExtensionNumberResponseSchema,
  FileDescriptorResponseSchema,
  ListServiceResponseSchema,
  file_grpc_reflection_v1_reflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "@aiem/proto/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflection as ServerReflectionV1alpha,
  ServerReflectionRequestSchema as RequestV1alphaSchema,
  ServerReflectionResponseSchema as ResponseV1alphaSchema,
  file_grpc_reflection_v1alpha_reflection,
} from "@aiem/proto/grpc/reflection/v1alpha/reflection_pb.js";

export const reflectionServiceNames = [ServerReflectionV1.typeName, ServerReflectionV1alpha.typeName];

interface Index {
  readonly files: Map<string, DescFile>;
  readonly symbols: Map<string, DescFile>;
  /** extendee type name -> field number -> extension */
  readonly extensions: Map<string, Map<number, DescExtension>>;
}

function buildIndex(registry: FileRegistry): Index {
  const files = new Map<string, DescFile>();
  const addFile = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(addFile);
  };
  for (const file of registry.files) addFile(file);
  // The reflection service describes itself too, even when the image does not carry it.
  addFile(file_grpc_reflection_v1_reflection);
  addFile(file_grpc_reflection_v1alpha_reflection);

  const symbols = new Map<string, DescFile>();
  const extensions = new Map<string, Map<number, DescExtension>>();
  const addExtension = (ext: DescExtension) => {
    symbols.set(ext.typeName, ext.file);
    let byNumber = extensions.get(ext.extendee.typeName);
    if (!byNumber) {
      byNumber = new Map();
      extensions.set(ext.extendee.typeName, byNumber);
    }
    byNumber.set(ext.number, ext);
  };
  const addMessage = (file: DescFile, message: DescMessage) => {
    symbols.set(message.typeName, file);
    for (const field of message.fields) symbols.set(`${message.typeName}.${field.name}`, file);
    for (const oneof of message.oneofs) symbols.set(`${message.typeName}.${oneof.name}`, file);
    for (const nested of message.nestedMessages) addMessage(file, nested);
    for (const e of message.nestedEnums) symbols.set(e.typeName, file);
    message.nestedExtensions.forEach(addExtension);
  };
  for (const file of files.values()) {
    for (const message of file.messages) addMessage(file, message);
    for (const e of file.enums) symbols.set(e.typeName, file);
    for (const service of file.services) {
      symbols.set(service.typeName, file);
      for (const method of service.methods) symbols.set(`${service.typeName}.${method.name}`, file);
    }
    file.extensions.forEach(addExtension);
  }
  return { files, symbols, extensions };
}

export interface ReflectionOptions {
  readonly registry: FileRegistry;
  /** Fully-qualified names of the services the edge serves; reflection adds itself. */
  readonly serviceNames: () => readonly string[];
}

/** Registers grpc.reflection.v1 and v1alpha ServerReflection on `router`. */
export function registerReflection(router: ConnectRouter, options: ReflectionOptions): void {
  let index: Index | undefined;
  const bytesCache = new Map<string, Uint8Array>();
  const fileBytes = (file: DescFile): Uint8Array => {
    let bytes = bytesCache.get(file.proto.name);
    if (!bytes) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      bytesCache.set(file.proto.name, bytes);
    }
    return bytes;
  };

  function answer(req: ServerReflectionRequest, sent: Set<string>): ServerReflectionResponse {
    index ??= buildIndex(options.registry);
    const idx = index;
    const respond = (messageResponse: ServerReflectionResponse["messageResponse"]) =>
      create(ResponseV1Schema, { validHost: req.host, originalRequest: req, messageResponse });
    const notFound = (what: string) =>
      respond({
        case: "errorResponse",
        value: create(ErrorResponseSchema, { errorCode: 5, errorMessage: `${what} not found` }),
      });
    // The requested file always, then each dependency not yet sent on this stream.
    const withDependencies = (file: DescFile) => {
      const out: Uint8Array[] = [fileBytes(file)];
      sent.add(file.proto.name);
      const visit = (f: DescFile) => {
        for (const dep of f.dependencies) {
          if (sent.has(dep.proto.name)) continue;
          sent.add(dep.proto.name);
          out.push(fileBytes(dep));
          visit(dep);
        }
      };
      visit(file);
      return respond({
        case: "fileDescriptorResponse",
        value: create(FileDescriptorResponseSchema, { fileDescriptorProto: out }),
      });
    };

    const request = req.messageRequest;
    switch (request.case) {
      case "listServices": {
        const names = [...new Set([...options.serviceNames(), ...reflectionServiceNames])].sort();
        return respond({
          case: "listServicesResponse",
          value: create(ListServiceResponseSchema, { service: names.map((name) => ({ name })) }),
        });
      }
      case "fileByFilename": {
        const file = idx.files.get(request.value);
        return file ? withDependencies(file) : notFound(`file ${request.value}`);
      }
      case "fileContainingSymbol": {
        const file = idx.symbols.get(request.value.replace(/^\./, ""));
        return file ? withDependencies(file) : notFound(`symbol ${request.value}`);
      }
      case "fileContainingExtension": {
        const ext = idx.extensions.get(request.value.containingType)?.get(request.value.extensionNumber);
        return ext
          ? withDependencies(ext.file)
          : notFound(`extension ${request.value.extensionNumber} of ${request.value.containingType}`);
      }
      case "allExtensionNumbersOfType": {
        const typeName = request.value;
        if (!idx.symbols.has(typeName)) return notFound(`type ${typeName}`);
        const numbers = [...(idx.extensions.get(typeName)?.keys() ?? [])].sort((a, b) => a - b);
        return respond({
          case: "allExtensionNumbersResponse",
          value: create(ExtensionNumberResponseSchema, { baseTypeName: typeName, extensionNumber: numbers }),
        });
      }
      default:
        return respond({
          case: "errorResponse",
          value: create(ErrorResponseSchema, { errorCode: 3, errorMessage: "empty reflection request" }),
        });
    }
  }

  router.service(ServerReflectionV1, {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const req of requests) yield answer(req, sent);
    },
  });
  // v1alpha has the same messages under another package, so the wire bytes are identical.
  router.service(ServerReflectionV1alpha, {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const req of requests) {
        const v1 = fromBinary(RequestV1Schema, toBinary(RequestV1alphaSchema, req));
        yield fromBinary(ResponseV1alphaSchema, toBinary(ResponseV1Schema, answer(v1, sent)));
      }
    },
  });
}
