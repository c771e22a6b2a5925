// The client of the agent's raw file routes (file-routes.ts): a file's bytes as one HTTP/2
// stream on the agent's connection, without protobuf messages. An agent started before these
// routes existed (a sandbox adopted across an upgrade) answers the probe with 404; the callers
// then use ReadFile and WriteFileStream as before. Where the agent runs on this host (its
// sandbox's outermost pid is known), reads and writes go through the agent's descriptors
// (agent-descriptors.ts) and the bytes never cross the agent's connection; an agent without the
// descriptor routes, or a descriptor that cannot be opened from here, falls back to the bodies.
import type * as http2 from "node:http2";
import type { Readable } from "node:stream";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { AGENT_PID_HEADER, DESCRIPTOR_HEADER, FILE_ID_HEADER, FILE_ROUTES_PREFIX } from "./file-routes.js";
import { type AgentProcess, DescriptorUnusable, findAgentProcess, openAgentDescriptor } from "./agent-descriptors.js";
import { one, response } from "./agent-file-streams.js";
import { readByBody, writeByBody } from "./body-transfers.js";
import { readByDescriptor, writeByDescriptor } from "./descriptor-transfers.js";

/** Opens a stream on the agent's connection (the session manager's `request`). */
export type AgentRequest = (
  method: string,
  path: string,
  headers: http2.OutgoingHttpHeaders,
  options: { endStream: boolean; waitForTrailers?: boolean },
) => Promise<http2.ClientHttp2Stream>;

export interface RawRead {
  readonly fileInfo: FileInfo | undefined;
  /** The file's size when it was opened; the body has exactly these bytes, unless it is 0 (a file like /proc's), when it runs to the file's end. */
  readonly size: number;
  /** The bytes; fails should the file shrink meanwhile. Destroy it to stop early. */
  readonly body: Readable;
  /**
   * Where the file is open here: reads it from its start into `target` instead of through
   * `body` (which is then closed), and resolves with how many bytes there were.
   */
  readonly readAll?: ((target: Uint8Array) => Promise<number>) | undefined;
}

export interface RawWriteOptions {
  readonly createParents: boolean;
  readonly overwrite: boolean;
  readonly mode?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface AgentFiles {
  /** Whether the agent serves the raw routes; asked once per connection. */
  supported(): Promise<boolean>;
  read(path: string, options?: { signal?: AbortSignal | undefined }): Promise<RawRead>;
  /** Writes `body` as the whole file. `body` is never destroyed here: after a refusal its owner decides. */
  write(
    path: string,
    body: Readable | AsyncIterable<Uint8Array>,
    options: RawWriteOptions,
  ): Promise<FileInfo | undefined>;
}

/**
 * @param sandboxPid the host pid of the sandbox's outermost process, where the agent runs on
 * this host: its descriptors are then opened from here.
 * @param known the agent as the runtime checked it (agent-peer.ts): its descriptors are opened,
 * whatever pid the agent names; without it the agent is looked for under `sandboxPid`.
 */
export function createAgentFiles(agentRequest: AgentRequest, sandboxPid?: number, known?: AgentProcess): AgentFiles {
  let probe: Promise<boolean> | undefined;
  // Whether descriptors work with this agent: undefined until the first transfer tells.
  let descriptors: boolean | undefined = sandboxPid === undefined ? false : undefined;
  let agent: AgentProcess | undefined = known;

  function openDescriptor(headers: http2.IncomingHttpHeaders, flags: number): number {
    agent ??= findAgentProcess(sandboxPid!, Number(one(headers[AGENT_PID_HEADER])));
    if (agent === undefined) throw new DescriptorUnusable("the agent's process was not found");
    return openAgentDescriptor(
      agent,
      Number(one(headers[DESCRIPTOR_HEADER])),
      flags,
      one(headers[FILE_ID_HEADER]) ?? "",
    );
  }

  /** Runs `transfer` through descriptors while they work; undefined once they do not. */
  async function viaDescriptor<T>(transfer: () => Promise<T>): Promise<T | undefined> {
    if (descriptors === false) return undefined;
    try {
      const result = await transfer();
      descriptors = true;
      return result;
    } catch (error) {
      if (!(error instanceof DescriptorUnusable)) throw error;
      descriptors = false;
      return undefined;
    }
  }

  // A stream's failure reaches the caller through response() or through whoever reads the
  // body; this listener only keeps one nobody waits on any more (the connection closing under
  // an abandoned read) from being an uncaught error.
  const request: AgentRequest = async (...args) => {
    const stream = await agentRequest(...args);
    stream.on("error", () => undefined);
    return stream;
  };

  async function ask(): Promise<boolean> {
    const stream = await request("GET", `${FILE_ROUTES_PREFIX}probe`, {}, { endStream: true });
    const headers = await response(stream, undefined);
    stream.resume();
    return Number(headers[":status"]) === 204;
  }

  return {
    supported() {
      probe ??= ask().catch((error: unknown) => {
        // Not known yet (the agent was not reachable): ask again next time.
        probe = undefined;
        throw error;
      });
      return probe;
    },

    async read(path, options = {}) {
      const viaFd = await viaDescriptor(() => readByDescriptor(request, openDescriptor, path, options.signal));
      return viaFd ?? readByBody(request, path, options.signal);
    },

    async write(path, body, options) {
      const query = new URLSearchParams({
        path,
        create_parents: options.createParents ? "1" : "0",
        overwrite: options.overwrite ? "1" : "0",
        ...(options.mode === undefined ? {} : { mode: String(options.mode) }),
      });
      const viaFd = await viaDescriptor(async () => ({
        info: await writeByDescriptor(request, openDescriptor, path, query, body, options),
      }));
      return viaFd !== undefined ? viaFd.info : writeByBody(request, query, body, options);
    },
  };
}
