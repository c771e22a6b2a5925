import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago, for a server that must know its port before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}
