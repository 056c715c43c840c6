/**
 * Issue 47, items 1, 4 and 5 for DASH: `stitch get` on hostile manifests from loopback servers.
 * A manifest naming a local address (from a public one) or plain http (from an https one) is
 * refused when the plan is made, before any request to what it names; a manifest past a bound of
 * dash-bounds.ts is refused in words. Each case ends by itself within 30 s, under 256 MiB, with
 * nothing requested that the rules refuse. Names under `.public.test` are public hosts on loopback.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runStitch, type CliResult } from '../support/cli';
import { startHostile, type HostileServer } from '../support/hostile-server';
import { streamTestBed } from '../support/stream-server';
import { DASH, stream, type MadeStream } from '../support/streams';

const MiB = 1024 * 1024;
const bed = streamTestBed('stitch-dash-hostile-');
let made: MadeStream;

beforeAll(async () => {
  made = await stream(DASH);
}, 180_000);

/** Runs the CLI in the test's folder; it must end by itself within 30 s and under 256 MiB. */
async function stitch(url: string, { quiet = false } = {}): Promise<CliResult> {
  const started = performance.now();
  const result = await runStitch(['get', ...(quiet ? ['-q'] : []), url], bed.dir, { timeoutMs: 30_000, publicNames: true });
  expect(result.timedOut, 'the CLI had to be killed after 30 s').toBe(false);
  expect(performance.now() - started).toBeLessThan(30_000);
  expect(result.peakRssBytes, result.stderr).toBeLessThan(256 * MiB);
  return result;
}

/** A server that answers every request with `text` (a manifest), and one that must never be asked. */
async function serving(text: string): Promise<HostileServer> {
  const server = await startHostile((_req, res) => res.writeHead(200, { 'content-type': 'application/dash+xml' }).end(text));
  closeAfter(server);
  return server;
}
async function untouched(): Promise<HostileServer> {
  const server = await startHostile((_req, res) => res.writeHead(404).end());
  closeAfter(server);
  return server;
}
const open: { close(): Promise<void> }[] = [];
function closeAfter(server: { close(): Promise<void> }): void {
  open.push(server);
  onTestFinished(() => Promise.all(open.splice(0).map((s) => s.close())).then(() => {}));
}

const publicUrl = (server: { origin: string }, path = '/manifest.mpd') => `http://media.public.test:${new URL(server.origin).port}${path}`;

/** A static manifest of one picture (SegmentTemplate, 2 s segments), with text put in at each level. */
function mpd(parts: { top?: string; period?: string; set?: string; rep?: string; segments?: string } = {}): string {
  const segments =
    parts.segments ?? '<SegmentTemplate timescale="1000" duration="2000" initialization="init.mp4" media="seg-$Number$.m4s"/>';
  return `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT30S">${parts.top ?? ''}
  <Period>${parts.period ?? ''}
    <AdaptationSet mimeType="video/mp4" contentType="video">${parts.set ?? ''}
      <Representation id="v" bandwidth="500000" width="640" height="360" codecs="avc1.64001e">${parts.rep ?? ''}${segments}</Representation>
    </AdaptationSet>
  </Period>
</MPD>`;
}

/** Expects a refusal naming `words`, with the manifest asked once and nothing else anywhere. */
function expectRefused(result: CliResult, words: string | RegExp, manifest: HostileServer, ...others: HostileServer[]): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toMatch(typeof words === 'string' ? new RegExp(words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : words);
  expect(manifest.requests).toEqual(['/manifest.mpd']);
  for (const other of others) expect(other.requests).toEqual([]);
}

describe('a public DASH manifest naming local addresses', () => {
  const at = {
    'an MPD-level BaseURL': (local: string) => mpd({ top: `<BaseURL>${local}/</BaseURL>` }),
    'a Period BaseURL': (local: string) => mpd({ period: `<BaseURL>${local}/</BaseURL>` }),
    'an AdaptationSet BaseURL': (local: string) => mpd({ set: `<BaseURL>${local}/</BaseURL>` }),
    'a Representation BaseURL': (local: string) => mpd({ rep: `<BaseURL>${local}/</BaseURL>` }),
    'its initialization': (local: string) =>
      mpd({ segments: `<SegmentTemplate timescale="1000" duration="2000" initialization="${local}/init.mp4" media="seg-$Number$.m4s"/>` }),
    'its media template': (local: string) =>
      mpd({ segments: `<SegmentTemplate timescale="1000" duration="2000" initialization="init.mp4" media="${local}/seg-$Number$.m4s"/>` }),
    'a SegmentList URL': (local: string) =>
      mpd({
        segments: `<SegmentList timescale="1000" duration="2000"><Initialization sourceURL="init.mp4"/><SegmentURL media="a.m4s"/><SegmentURL media="${local}/b.m4s"/></SegmentList>`,
      }),
    'a SegmentBase file': (local: string) =>
      mpd({
        rep: `<BaseURL>${local}/one.mp4</BaseURL>`,
        segments: '<SegmentBase indexRange="800-999"><Initialization range="0-799"/></SegmentBase>',
      }),
  };

  it.each(Object.entries(at))('is refused before any request when %s is on 127.0.0.1', async (_where, manifest) => {
    const local = await untouched();
    const server = await serving(manifest(local.origin));
    const result = await stitch(publicUrl(server));
    expectRefused(result, `names a source Stitch does not request: ${local.origin}/`, server, local);
    expect(result.stderr).toContain('is on a local or private network address, and the download is not');
  });

  it.each(['http://10.1.2.3', 'http://169.254.169.254/latest/meta-data', 'http://192.168.1.1', 'http://[::1]:8080'])(
    'is refused when its BaseURL is %s',
    async (local) => {
      const server = await serving(mpd({ top: `<BaseURL>${local}/</BaseURL>` }));
      const result = await stitch(publicUrl(server));
      expectRefused(result, `${local}/init.mp4 is on a local or private network address, and the download is not`, server);
    },
  );
});

describe('DASH manifests whose sources are allowed', () => {
  const withBase = async (base: string) =>
    (await readFile(join(made.dir, 'manifest.mpd'), 'utf8')).replace(/(<Period[^>]*>)/, `$1<BaseURL>${base}/</BaseURL>`);

  it('a local manifest may name another local server: its segments are downloaded', async () => {
    const media = await bed.serve({ root: made.dir });
    const manifest = await bed.serve({ root: bed.dir, files: { '/show.mpd': await withBase(media.origin) } });
    const result = await stitch(`${manifest.origin}/show.mpd`);
    expect(result.code, result.stderr).toBe(0);
    expect(media.requests.length).toBeGreaterThan(10);
  });

  it('a public manifest may name public hosts', async () => {
    const media = await bed.serve({ root: made.dir });
    const base = publicUrl(media, '');
    const manifest = await bed.serve({ root: bed.dir, files: { '/show.mpd': await withBase(base) } });
    const result = await stitch(publicUrl(manifest, '/show.mpd'));
    expect(result.code, result.stderr).toBe(0);
    expect(media.requests.length).toBeGreaterThan(10);
  });
});

describe('an https DASH manifest naming plain-http segments', () => {
  it('is refused before any plain-http request', async () => {
    const pem = (name: string) => readFile(fileURLToPath(new URL(`../support/tls/loopback.${name}.pem`, import.meta.url)), 'utf8');
    process.env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL('../support/tls/loopback.cert.pem', import.meta.url));
    onTestFinished(() => void delete process.env.NODE_EXTRA_CA_CERTS);
    const plain = await untouched();
    const requests: string[] = [];
    const sockets = new Set<Socket>();
    const secure = createHttpsServer({ key: await pem('key'), cert: await pem('cert') }, (req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/dash+xml' }).end(mpd({ top: `<BaseURL>${plain.origin}/</BaseURL>` }));
    });
    secure.on('connection', (socket: Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    closeAfter({ close: () => new Promise((resolve) => (sockets.forEach((s) => s.destroy()), secure.close(() => resolve()))) });
    const result = await stitch(`https://127.0.0.1:${(secure.address() as AddressInfo).port}/manifest.mpd`);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`${plain.origin}/init.mp4 is plain http and the download is https`);
    expect(requests).toEqual(['/manifest.mpd']);
    expect(plain.requests).toEqual([]);
  });
});

describe('DASH manifests that would cost unbounded work', () => {
  const cases: [string, () => string, string | RegExp][] = [
    ['a 3 MiB manifest', () => mpd({ top: `<!--${' '.repeat(3 * MiB)}-->` }), /is 3,14\d,\d{3} characters long, more than the 2,097,152/],
    [
      'a 1 MB media= attribute',
      () => mpd({ segments: `<SegmentTemplate duration="2" initialization="i.mp4" media="${'a'.repeat(1_000_000)}$Number$"/>` }),
      'has a SegmentTemplate media attribute of 1,000,008 characters, more than 4,096',
    ],
    [
      '150,000 elements in 600 kB',
      () =>
        mpd({
          segments: `<SegmentTemplate media="s$Number$"><SegmentTimeline>${'<S/>'.repeat(150_000)}</SegmentTimeline></SegmentTemplate>`,
        }),
      /has 150,0\d\d elements and attributes, more than the 100,000/,
    ],
    [
      'a 545-byte manifest implying 3·10⁹ segments (@duration)',
      () => mpd({ segments: '<SegmentTemplate duration="1" media="s$Number$.m4s"/>' }).replace('PT30S', 'PT3000000000S'),
      'implies 3,000,000,000 segments, more than the 100,000 a manifest may have',
    ],
    [
      '3·10⁹ segments in one SegmentTimeline repeat count',
      () =>
        mpd({
          segments:
            '<SegmentTemplate media="s$Time$.m4s"><SegmentTimeline><S t="0" d="1" r="2999999999"/></SegmentTimeline></SegmentTemplate>',
        }),
      'implies 3,000,000,000 segments, more than the 100,000 a manifest may have',
    ],
    [
      'a repeat to the end with segments of no duration',
      () =>
        mpd({
          segments: '<SegmentTemplate media="s$Number$.m4s"><SegmentTimeline><S t="0" d="0" r="-1"/></SegmentTimeline></SegmentTemplate>',
        }),
      'implies segments without end',
    ],
    [
      'a startNumber past 2^53 (mpd-parser would count for ever)',
      () =>
        mpd({
          segments:
            '<SegmentTemplate media="s$Number$.m4s" startNumber="99999999999999999999"><SegmentTimeline><S d="1" r="2"/></SegmentTimeline></SegmentTemplate>',
        }),
      'implies segments without end',
    ],
    [
      '$Number%030000000d$',
      () => mpd({ segments: '<SegmentTemplate duration="2" media="s$Number%030000000d$.m4s"/>' }),
      'asks for 30000000-digit numbers in a template (SegmentTemplate media); at most 20 digits are read',
    ],
    ['101 periods', () => mpd().replace(/<Period>[\s\S]*<\/Period>/, (period) => period.repeat(101)), 'has 101 periods, more than 100'],
    [
      '1,001 adaptation sets',
      () => mpd().replace(/<AdaptationSet[\s\S]*<\/AdaptationSet>/, (set) => set.repeat(1001)),
      'has more than 1,000 adaptation sets',
    ],
    [
      '11 BaseURLs at each of three levels (1,331 representations)',
      () => {
        const bases = Array.from({ length: 11 }, (_, i) => `<BaseURL>http://cdn${i}.public.test/</BaseURL>`).join('');
        return mpd({ top: bases, period: bases, set: bases });
      },
      'has more than 1,000 representations (each BaseURL alternative counted)',
    ],
    [
      'a 40,000-entry timeline inherited by 30 representations',
      () =>
        mpd({ segments: '' })
          .replace(
            '<AdaptationSet mimeType="video/mp4" contentType="video">',
            (set) =>
              `${set}<SegmentTemplate media="s$Time$"><SegmentTimeline>${'<S d="1"/>'.repeat(40_000)}</SegmentTimeline></SegmentTemplate>`,
          )
          .replace(/<Representation[\s\S]*<\/Representation>/, (rep) => rep.repeat(30)),
      'makes more than 1,000,000 SegmentTimeline entries in its representations',
    ],
    [
      'a live manifest whose segments run from 1970 in microseconds',
      () =>
        mpd({ segments: '<SegmentTemplate timescale="1000000" duration="1" media="s$Number$.m4s"/>' }).replace(
          'type="static"',
          'type="dynamic" availabilityStartTime="1970-01-01T00:00:00Z"',
        ),
      'this is a live DASH stream (its manifest is dynamic)',
    ],
    [
      'a byte range of 10^20 bytes',
      () =>
        mpd({
          segments:
            '<SegmentList duration="2"><Initialization sourceURL="f.mp4" range="0-99"/><SegmentURL media="f.mp4" mediaRange="100-99999999999999999999"/></SegmentList>',
        }),
      'gives http://media.public.test',
    ],
  ];

  it.each(cases)('refuses %s in words, quickly, in little memory', async (_name, manifest, words) => {
    const server = await serving(manifest());
    const result = await stitch(publicUrl(server));
    expectRefused(result, words, server);
  });

  it('reads a manifest just inside every bound at once within 256 MiB (and refuses it for its local segments)', async () => {
    const local = await untouched();
    // 95,000 elements of nothing, and 10 representations of 10,000 segments whose URLs come to 31 Mi characters.
    const media = `${'m'.repeat(125)}-$Number$.m4s`;
    const reps = Array.from(
      { length: 10 },
      (_, i) =>
        `<Representation id="r${i}" bandwidth="${i + 1}000" width="640" height="360"><SegmentTemplate duration="1" media="${media}"/></Representation>`,
    ).join('');
    const manifest = mpd()
      .replace('PT30S', 'PT10000S')
      .replace(/<Representation[\s\S]*<\/Representation>/, reps)
      .replace('<Period>', `<Period><BaseURL>${local.origin}/</BaseURL>${'<X/>'.repeat(95_000)}`);
    const server = await serving(manifest);
    const result = await stitch(publicUrl(server));
    expectRefused(result, `names a source Stitch does not request: ${local.origin}/`, server, local);
  });

  it('does not flood stderr with the XML parser warnings of a broken manifest, with -q or without', async () => {
    const broken = `<?xml version="1.0"?><MPD type="static"><Period>${'<X a=1/>'.repeat(40_000)}</Period></MPD>`;
    const server = await serving(broken);
    for (const quiet of [true, false]) {
      const result = await stitch(publicUrl(server), { quiet });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('lists no representation of the stream');
      expect(result.stderr).not.toContain('xmldom');
      expect(result.stderr.length, result.stderr.slice(0, 500)).toBeLessThan(1000);
    }
  });

  it('refuses segment indexes (SegmentBase) that list more than 100,000 segments, before probing any', async () => {
    // Picture and sound, each a file whose sidx lists 60,000 one-byte segments of 1 s.
    const references = 60_000;
    const sidx = Buffer.alloc(32 + 12 * references);
    sidx.writeUInt32BE(sidx.length, 0);
    sidx.write('sidx', 4);
    sidx.writeUInt32BE(1, 16); // timescale
    sidx.writeUInt16BE(references, 30);
    for (let i = 0; i < references; i++) {
      sidx.writeUInt32BE(1, 32 + 12 * i);
      sidx.writeUInt32BE(1, 36 + 12 * i);
    }
    const file = Buffer.concat([Buffer.alloc(100), sidx]);
    const base = `<SegmentBase indexRange="100-${file.length - 1}"><Initialization range="0-99"/></SegmentBase>`;
    const manifest = `<MPD type="static" mediaPresentationDuration="PT60000S"><Period>
      <AdaptationSet mimeType="video/mp4" contentType="video"><Representation id="v" bandwidth="1" width="640" height="360"><BaseURL>p.mp4</BaseURL>${base}</Representation></AdaptationSet>
      <AdaptationSet mimeType="audio/mp4" contentType="audio"><Representation id="a" bandwidth="1"><BaseURL>s.mp4</BaseURL>${base}</Representation></AdaptationSet>
    </Period></MPD>`;
    const server = await startHostile((req, res) => res.writeHead(200).end(req.url === '/manifest.mpd' ? manifest : file));
    closeAfter(server);
    const result = await stitch(publicUrl(server));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('has 120,000 segments in its segment indexes, more than the 100,000 Stitch joins');
    expect([...server.requests].sort()).toEqual(['/manifest.mpd', '/p.mp4', '/p.mp4', '/s.mp4', '/s.mp4']);
  });

  it('refuses a segment whose Content-Range says 10^15 bytes for 2 s of video', async () => {
    const server = await startHostile((req, res) => {
      if (req.url === '/manifest.mpd') {
        res.writeHead(200).end(mpd({ segments: '<SegmentTemplate timescale="1000" duration="2000" media="seg-$Number$.m4s"/>' }));
      } else res.writeHead(206, { 'content-range': 'bytes 0-9/1000000000000000', 'content-length': '10' }).end('0123456789');
    });
    closeAfter(server);
    const result = await stitch(publicUrl(server));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('has 1000000000000000 bytes, more than a 2 s segment can have (250 MB, at 1 Gbit/s)');
  });
});
