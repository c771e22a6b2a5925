// Test fixture: builds edge/testdata/proto into a descriptor set with buf (as the product's
// image is built) and implements its LibraryService dynamically over that registry.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  create,
  createFileRegistry,
  fromBinary,
  type DescMessage,
  type DescService,
  type FileRegistry,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const require = createRequire(import.meta.url);

/** Builds the test protos (with the repo's .proto-deps) into a registry. */
export function buildTestRegistry(): FileRegistry {
  const dir = mkdtempSync(join(tmpdir(), "edge-test-proto-"));
  try {
    cpSync(join(repo, "edge", "testdata", "proto"), join(dir, "proto"), { recursive: true });
    cpSync(join(repo, ".proto-deps"), join(dir, "deps"), { recursive: true });
    writeFileSync(join(dir, "buf.yaml"), "version: v2\nmodules:\n  - path: proto\n  - path: deps\n");
    const buf = join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
    execFileSync(buf, ["build", "-o", "image.binpb"], { cwd: dir, stdio: "pipe" });
    return createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, "image.binpb"))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Msg = Record<string, unknown>;

export interface LibraryFixture {
  readonly registry: FileRegistry;
  readonly service: DescService;
  readonly routes: (router: ConnectRouter) => void;
  /** The last request each method received, by method name. */
  readonly lastRequest: Map<string, Msg>;
  /** The last request headers each method received, by method name. */
  readonly lastHeaders: Map<string, Headers>;
  /** Resolves when the next hanging StreamBooks call sees its cancellation. */
  streamCancelled(): Promise<void>;
  message(typeName: string): DescMessage;
}

export function createLibraryFixture(registry: FileRegistry = buildTestRegistry()): LibraryFixture {
  const service = registry.getService("edgetest.v1.LibraryService");
  if (!service) throw new Error("edgetest.v1.LibraryService is not in the registry");
  const message = (typeName: string): DescMessage => {
    const desc = registry.getMessage(typeName);
    if (!desc) throw new Error(`no message ${typeName}`);
    return desc;
  };
  const Book = message("edgetest.v1.Book");
  const lastRequest = new Map<string, Msg>();
  const lastHeaders = new Map<string, Headers>();
  let cancelWaiters: Array<() => void> = [];
  const cancelled = () => {
    const waiters = cancelWaiters;
    cancelWaiters = [];
    for (const w of waiters) w();
  };

  const book = (name: string, extra: Msg = {}) =>
    create(Book, { name, title: `Title of ${name}`, pageCount: 320n, genre: 1, tags: ["a"], ...extra } as never);
  const record = (method: string, req: Msg, ctx: HandlerContext) => {
    lastRequest.set(method, req);
    lastHeaders.set(method, ctx.requestHeader);
  };

  const impl: Record<string, unknown> = {
    getBook(req: Msg, ctx: HandlerContext) {
      record("GetBook", req, ctx);
      const name = req.name as string;
      if (name.endsWith("/missing")) {
        throw new ConnectError(`book "${name}" not found`, Code.NotFound);
      }
      ctx.responseHeader.set("x-book-etag", "etag-1");
      return book(name);
    },
    listBooks(req: Msg, ctx: HandlerContext) {
      record("ListBooks", req, ctx);
      return create(message("edgetest.v1.ListBooksResponse"), {
        request: req,
        books: [book("shelves/s/books/1")],
      } as never);
    },
    createBook(req: Msg, ctx: HandlerContext) {
      record("CreateBook", req, ctx);
      const b = req.book as Msg | undefined;
      return create(Book, {
        ...(b ?? {}),
        name: `${req.parent as string}/books/${req.bookId as string}`,
      } as never);
    },
    updateBook(req: Msg, ctx: HandlerContext) {
      record("UpdateBook", req, ctx);
      return req.book ?? create(Book);
    },
    deleteBook(req: Msg, ctx: HandlerContext) {
      record("DeleteBook", req, ctx);
      return create(message("edgetest.v1.DeleteBookResponse"), { name: req.name, force: req.force } as never);
    },
    archiveBook(req: Msg, ctx: HandlerContext) {
      record("ArchiveBook", req, ctx);
      return book(req.name as string, { archived: true, archiveReason: req.reason });
    },
    searchBooks(req: Msg, ctx: HandlerContext) {
      record("SearchBooks", req, ctx);
      return create(message("edgetest.v1.ListBooksResponse"), {
        nextPageToken: `q=${req.query as string}`,
      } as never);
    },
    getShelf(req: Msg, ctx: HandlerContext) {
      record("GetShelf", req, ctx);
      return create(message("edgetest.v1.Shelf"), {
        name: `shelves/${req.shelfId as string}`,
        shelfId: req.shelfId,
      } as never);
    },
    getFile(req: Msg, ctx: HandlerContext) {
      record("GetFile", req, ctx);
      return create(message("edgetest.v1.File"), { shelf: req.shelf, path: req.path } as never);
    },
    async *streamBooks(req: Msg, ctx: HandlerContext) {
      record("StreamBooks", req, ctx);
      const count = req.count as number;
      const failAfter = req.failAfter as number;
      const firstDelay = req.firstDelayMs as number;
      if (firstDelay > 0) await new Promise((resolve) => setTimeout(resolve, firstDelay));
      for (let i = 0; i < count; i++) {
        if (failAfter !== 0 && i === Math.max(failAfter, 0)) {
          throw new ConnectError("the shelf fell over", Code.Aborted);
        }
        yield book(`${req.parent as string}/books/${i}`);
        if (req.hang) {
          await new Promise<void>((resolve) => {
            if (ctx.signal.aborted) return resolve();
            ctx.signal.addEventListener("abort", () => resolve(), { once: true });
          });
          cancelled();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };

  return {
    registry,
    service,
    routes: (router) => {
      router.service(service, impl as never);
    },
    lastRequest,
    lastHeaders,
    streamCancelled: () => new Promise<void>((resolve) => cancelWaiters.push(resolve)),
    message,
  };
}
