import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetalinkEntry {
  name: string;
  size?: number;
  sha256?: string;
  pieces?: { length: number; sha256: string[] };
  urls: string[];
}

/** A Metalink 4 document (RFC 5854) for the given files. */
export function metalinkXml(files: MetalinkEntry[]): string {
  const body = files
    .map((f) => {
      const pieces = f.pieces
        ? `<pieces length="${f.pieces.length}" type="sha-256">${f.pieces.sha256.map((h) => `<hash>${h}</hash>`).join('')}</pieces>`
        : '';
      return `<file name="${f.name}">${f.size === undefined ? '' : `<size>${f.size}</size>`}${
        f.sha256 ? `<hash type="sha-256">${f.sha256}</hash>` : ''
      }${pieces}${f.urls.map((u, i) => `<url priority="${i + 1}">${u}</url>`).join('')}</file>`;
    })
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><metalink xmlns="urn:ietf:params:xml:ns:metalink">${body}</metalink>`;
}

/** Serves one document on 127.0.0.1; returns its URL. */
export async function serveDocument(
  body: string,
  type = 'application/metalink4+xml',
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/file.meta4`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
