import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback page with links, the way a user meets a download. */
export async function startLinkPage(links: { id: string; href: string; text: string }[]): Promise<{ url: string; close(): Promise<void> }> {
  const html = `<!doctype html><meta charset="utf-8"><title>Stitch test page</title><h1>Downloads</h1><ul>${links
    .map((l) => `<li><a id="${l.id}" href="${l.href}">${l.text}</a></li>`)
    .join('')}</ul><script>
    // ?click=<id>: the page clicks that link itself, for a browser no automation is attached to.
    const id = new URLSearchParams(location.search).get('click');
    if (id) document.getElementById(id).click();
  </script>`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => closeServer(server),
  };
}

/** Stops a page server at once: a browser keeps its connections alive, and close() alone would wait for it to let them go. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
