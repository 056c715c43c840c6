import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { LOCAL_URL_REGEXES } from '../../src/background/network/local-network-rules';
import type { JobView, ReplyOf, RequestOf, RequestType } from '../../src/messages';
import { contentSha256 } from '../support/content';
import { extensionPage, launchWithExtension, request } from './support/chromium';
import { addonWithTestPage, launchFirefox, openAddonPage } from './support/firefox';
import { fileSha256, until, waitForFile } from './support/files';
import { MiB, mirror, onCleanup, profile } from './support/setup';

/**
 * Stitch's own requests to local addresses are stopped in the browser, before they are sent,
 * redirect hops included (issue 25, item 5). A browser hides a redirect from fetch (an opaque
 * redirect): Stitch learns the hop from webRequest and checks it before it is sent
 * (redirect-log.ts), else asks again following it blind, which only the browser's rule keeps
 * from the local address. Either way the download ends within seconds, naming the hop.
 *
 * Every server is on the loopback, which is itself local: the "public" ones are addressed by
 * names the browser resolves to 127.0.0.1 (public.test, mirror.test), the local one by its
 * address. Each server records every request it received.
 */

/** What the scenario needs of a browser with Stitch loaded. */
interface Driver {
  send<T extends RequestType>(message: RequestOf<T>): Promise<{ ok: boolean; value?: ReplyOf<T>; error?: string }>;
  sessionRules(): Promise<SessionRuleSeen[]>;
  regexSupported(regex: string): Promise<boolean>;
  downloads: string;
  name: string;
}

/** A session rule as the browser returns it (Firefox: null for each field unset). */
interface SessionRuleSeen {
  priority?: number;
  action: { type: string };
  condition: { urlFilter?: string | null; regexFilter?: string | null };
}

const SIZE = 2 * MiB;

async function scenario(browser: Driver): Promise<void> {
  const local = await mirror({ size: SIZE, seed: 61, filename: 'local.bin' });
  const trap = await mirror({ size: SIZE, redirect: { location: local.url } });
  const file = await mirror({ size: SIZE, seed: 62, filename: 'public.bin' });
  const hop = await mirror({ size: SIZE, redirect: { location: `http://mirror.test:${file.port}/file.bin` } });
  const add = async (url: string): Promise<JobView> => {
    const reply = await browser.send({ type: 'add-url', url });
    if (!reply.value) throw new Error(`add-url ${url}: ${reply.error}`);
    return reply.value.job;
  };
  /** The error a person sees when the public file of `server` redirects to `target`. */
  const refused = (server: typeof trap, target: typeof local) =>
    `http://public.test:${server.port}/file.bin redirected to ${target.url} is on a local or private network address, and the download is not`;
  /**
   * Adds a public file that redirects to the local server; returns once the download has failed,
   * saying which hop was refused, and how long that took from its start.
   */
  const addTrap = async (server: typeof trap) => {
    const url = `http://public.test:${server.port}/file.bin`;
    const started = Date.now();
    const job = await add(url);
    const failed = await until(
      'the download to fail',
      async () => {
        const view = (await browser.send({ type: 'list-jobs' })).value?.jobs.find((j) => j.id === job.id);
        return view?.state === 'failed' ? view : undefined;
      },
      60_000,
      50,
    );
    const elapsedMs = Date.now() - started;
    console.log(`trap ${browser.name}: failed after ${elapsedMs} ms (${server.stats.requests.length} requests to it): ${failed.error}`);
    return { job: failed, elapsedMs };
  };

  for (const regex of LOCAL_URL_REGEXES) expect(await browser.regexSupported(regex), regex).toBe(true);

  // A public file that redirects into the local network: the local server never hears of it.
  const trapped = await addTrap(trap);
  expect(local.stats.requests).toEqual([]);
  expect(trapped.job.error).toBe(refused(trap, local));
  expect(trapped.elapsedMs).toBeLessThan(5000);

  // A redirect to another public name is followed, and the file saved exactly.
  await add(`http://public.test:${hop.port}/file.bin`);
  const publicFile = await waitForFile(browser.downloads, 'public.bin', SIZE, 60_000);
  expect(await fileSha256(publicFile)).toBe(await contentSha256(62, SIZE));
  expect(file.stats.requests.length).toBeGreaterThan(0);

  // A download whose own address is local may reach it.
  await add(local.url);
  const localFile = await waitForFile(browser.downloads, 'local.bin', SIZE, 60_000);
  expect(await fileSha256(localFile)).toBe(await contentSha256(61, SIZE));
  const reached = local.stats.requests.length;
  expect(reached).toBeGreaterThan(0);
  // Only while it runs: then the block rules alone are left...
  await until(
    'the allow rule to go with its job',
    async () => (await browser.sessionRules()).every((rule) => rule.action.type === 'block'),
    10_000,
  );
  expect((await browser.sessionRules()).map((rule) => [rule.priority, rule.condition.regexFilter])).toEqual(
    LOCAL_URL_REGEXES.map((regex) => [1, regex]),
  );
  // ...and a public redirect there is refused again.
  const again = await mirror({ size: SIZE, redirect: { location: local.url } });
  const trappedAgain = await addTrap(again);
  expect(local.stats.requests).toHaveLength(reached);
  expect(trappedAgain.job.error).toBe(refused(again, local));
  expect(trappedAgain.elapsedMs).toBeLessThan(5000);
}

test('Chromium: Stitch’s requests into the local network are stopped before they are sent, unless the download is local', async () => {
  const p = profile();
  const launched = await launchWithExtension(p, undefined, ['--host-resolver-rules=MAP *.test 127.0.0.1']);
  onCleanup(() => launched.close());
  const ui = await extensionPage(launched, 'offscreen/offscreen.html');
  // (Functions given to evaluate run in the page: each names the API itself.)
  await scenario({
    send: (message) => request(ui, message),
    sessionRules: () => ui.evaluate(() => (chrome as unknown as Extension).declarativeNetRequest.getSessionRules()),
    regexSupported: (regex) =>
      ui.evaluate(
        async (r) => (await (chrome as unknown as Extension).declarativeNetRequest.isRegexSupported({ regex: r })).isSupported,
        regex,
      ),
    downloads: p.downloads,
    name: 'Chromium',
  });
});

test('Firefox: Stitch’s requests into the local network are stopped before they are sent, unless the download is local', async () => {
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, {
    addonDir: addonWithTestPage(onCleanup),
    prefs: { 'network.dns.localDomains': 'public.test,mirror.test' },
  });
  const page = await openAddonPage(browser, 'test-page.html', onCleanup);
  await scenario({
    send: (message) =>
      page.evaluate((m) => (globalThis as unknown as { browser: Extension }).browser.runtime.sendMessage(m), message) as never,
    sessionRules: () =>
      page.evaluate(() => (globalThis as unknown as { browser: Extension }).browser.declarativeNetRequest.getSessionRules()),
    regexSupported: (regex) =>
      page.evaluate(
        async (r) =>
          (await (globalThis as unknown as { browser: Extension }).browser.declarativeNetRequest.isRegexSupported({ regex: r }))
            .isSupported,
        regex,
      ),
    downloads,
    name: 'Firefox',
  });
});

/** The extension APIs the test calls from an extension page. */
interface Extension {
  runtime: { sendMessage(message: unknown): Promise<unknown> };
  declarativeNetRequest: {
    getSessionRules(): Promise<SessionRuleSeen[]>;
    isRegexSupported(options: { regex: string }): Promise<{ isSupported: boolean }>;
  };
}
