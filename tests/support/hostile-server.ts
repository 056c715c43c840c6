/**
 * A purpose-built hostile server on 127.0.0.1: the test gives the request handler (endless
 * bodies, drips, odd headers); `close` cuts every open connection so a test never waits on one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HostileServer {
  readonly origin: string;
  /** Paths of the requests received, in order. */
  readonly requests: string[];
  /** TCP connections accepted, and the most open at once. */
  readonly connections: number;
  readonly peakConnections: number;
  close(): Promise<void>;
}

export async function startHostile(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<HostileServer> {
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  let connections = 0;
  let peakConnections = 0;
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    connections++;
    peakConnections = Math.max(peakConnections, sockets.size);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    get peakConnections() {
      return peakConnections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes `chunk` for ever (as fast as the client reads) until the client goes away. */
export function sendForever(res: ServerResponse, chunk: string | Uint8Array): void {
  const more = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', more);
  };
  more();
}

/** Writes one byte every `everyMs` until the client goes away: a body that never ends. */
export function drip(res: ServerResponse, everyMs: number): void {
  const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), everyMs);
  res.on('close', () => clearInterval(timer));
}
