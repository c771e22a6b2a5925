// The server side of a WebSocket (RFC 6455) that only sends text: the handshake answer, text and
// close frames, and reading the client's frames far enough to answer pings and notice a close.
// The engine log streams need no more, and no package for it is among the service's dependencies.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export interface TextSocket {
  /** Sends one text message; false once the socket is closed. */
  send(text: string): boolean;
  /** Sends a close frame (1000, or `code`) and ends the socket. */
  close(code?: number, reason?: string): void;
  readonly closed: boolean;
  /** Called once, when either side closed the socket. */
  onClose(listener: () => void): void;
}

/** Whether `req` asks for a WebSocket. */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  return (
    String(req.headers.upgrade ?? "").toLowerCase() === "websocket" &&
    typeof req.headers["sec-websocket-key"] === "string"
  );
}

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (length < 126) header[1] = length;
  else if (length < 65536) {
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, payload]);
}

/** Answers the handshake of `req` and returns the socket as a sender of text messages. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer): TextSocket {
  const accept = createHash("sha1")
    .update(`${String(req.headers["sec-websocket-key"])}${GUID}`)
    .digest("base64");
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
  );
  let closed = false;
  const listeners: Array<() => void> = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    for (const listener of listeners) listener();
  };
  socket.on("close", finish);
  socket.on("error", () => {
    finish();
    socket.destroy();
  });

  // The client's frames: masked, possibly split across chunks. Pings are answered, a close ends it.
  let pending: Buffer = head.length > 0 ? Buffer.from(head) : Buffer.alloc(0);
  const read = () => {
    for (;;) {
      if (pending.length < 2) return;
      const opcode = pending[0]! & 0x0f;
      let length = pending[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (pending.length < 4) return;
        length = pending.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (pending.length < 10) return;
        length = Number(pending.readBigUInt64BE(2));
        offset = 10;
      }
      const masked = (pending[1]! & 0x80) !== 0;
      const total = offset + (masked ? 4 : 0) + length;
      if (pending.length < total) return;
      const mask = masked ? pending.subarray(offset, offset + 4) : undefined;
      const payload = Buffer.from(pending.subarray(total - length, total));
      if (mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
      pending = pending.subarray(total);
      if (opcode === 0x8) {
        api.close();
        return;
      }
      if (opcode === 0x9 && !closed) socket.write(frame(0xa, payload));
    }
  };
  socket.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    read();
  });

  const api: TextSocket = {
    send(text) {
      if (closed) return false;
      socket.write(frame(0x1, Buffer.from(text, "utf8")));
      return true;
    },
    close(code = 1000, reason = "") {
      if (closed) return;
      const body = Buffer.alloc(2 + Buffer.byteLength(reason));
      body.writeUInt16BE(code, 0);
      body.write(reason, 2, "utf8");
      socket.end(frame(0x8, body));
      finish();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
  read();
  return api;
}
