import { formatSize } from '../../words/format';
import { t } from '../../words/i18n';
import { takeOverRoom, type SaveCopy } from '../jobs/disk-room';
import type { Settings } from '../../settings/schema';
import { goesToAria2 } from '../aria2/aria2-rule';
import type { BrowserApi, BrowserDownload } from '../browser-api';
import type { CappedHosts } from './capped-hosts';
import type { JobCredentials } from '../jobs/create-job';
import type { NewDownload } from '../jobs/job-manager';
import type { LocalNetworkRules } from '../network/local-network-rules';
import type { PostTracker } from '../network/post-tracker';
import { probeUrl, type ProbeResult } from './probe';
import type { ReferrerRules } from '../network/referrer-rules';
import { decideAtStart, type StartDecision } from './take-or-watch';
import { afterProbe, firstLook, takeoverCredentials } from './takeover-rules';

export interface TakeoverDeps {
  api: BrowserApi;
  settings: () => Promise<Settings>;
  posts: PostTracker;
  add: (download: NewDownload) => Promise<unknown>;
  notice: (message: string, url?: string) => Promise<unknown>;
  mirrorsFor: (url: string) => string[];
  probe?: (url: string, init: { referrer?: string; credentials: JobCredentials }) => Promise<ProbeResult>;
  /** Sets the page's Referer on Stitch's requests (fetch cannot): the probe must be asked as the job will. */
  referrers?: Pick<ReferrerRules, 'hold' | 'release'>;
  /** Lets the probe reach the file's origin when it is on a local address (Stitch's requests there are stopped otherwise). */
  localNetwork?: Pick<LocalNetworkRules, 'allow' | 'release'>;
  /** True once for a download the user asked to leave to the browser (it is used up). */
  leaveNext?: (url: string) => Promise<boolean>;
  /** Watches a download left with the browser, to rescue it if it breaks or stalls (absent: left unwatched). */
  watch?: (item: BrowserDownload) => void;
  /** Hosts measured capping each connection: their downloads are taken at once (absent: none known). */
  cappedHosts?: Pick<CappedHosts, 'has' | 'remember'>;
  /** The free bytes the browser tells Stitch's store (absent or undefined: not known), and whether they are the disk's. */
  freeBytes?: () => Promise<number | undefined>;
  /** The least the platform's save costs of that free room (disk-room.ts); absent: 'whole'. */
  saveCopy?: SaveCopy;
  /** The start probe (start-measure.ts): would Stitch be faster? Absent: a download is watched unmeasured. */
  measure?: (
    item: BrowserDownload,
    url: string,
    size: number,
    init: { referrer?: string; credentials: JobCredentials },
  ) => Promise<StartDecision>;
}

/**
 * Takes a browser download over: checks the rules, asks the server for the first byte again
 * (while the browser's copy keeps going, so nothing is lost if the answer is no), then cancels
 * and erases the browser's copy and starts the job. downloads.onDeterminingFilename is never
 * used: it would hold every download of every extension.
 */
export async function takeOver(item: BrowserDownload, deps: TakeoverDeps): Promise<Outcome> {
  const settings = await deps.settings();
  const url = item.finalUrl || item.url;
  const first = firstLook(item, settings, deps.api.extensionId, deps.posts.wasPosted(item.url, item.finalUrl));
  if (first !== 'probe') return leave(first.notice, url, deps);
  if (await deps.leaveNext?.(url)) return leave(t('noticeLeftAsAsked'), url, deps);
  const host = new URL(url).host;
  const hostCapsConnections = (await deps.cappedHosts?.has(host)) === true;
  return probeThenTake(item, settings, deps, async (probe, credentials) => {
    const atOnce = decideAtStart({
      mirrorsKnown: deps.mirrorsFor(url).length > 0 || probe.mirrorsAdvertised === true,
      digestAnnounced: probe.digestAnnounced === true,
      alwaysTakeOver: settings.alwaysTakeOver,
      hostCapsConnections,
      aria2RuleMatches: goesToAria2({ url, referrer: item.referrer, size: probe.size }, settings),
    });
    // Measuring needs the size and ranges: the request asks for the file's second half.
    if (atOnce === 'take' || !deps.measure || probe.status !== 206 || probe.size === undefined) return atOnce;
    const measured = await deps.measure(item, url, probe.size, { referrer: item.referrer, credentials });
    if (measured === 'take') await deps.cappedHosts?.remember(host);
    return measured;
  });
}

/**
 * Takes over a watched download the browser cannot finish (watch-rescue.ts), if the server still
 * serves the same file to Stitch's request; `why` is told once it is taken.
 */
export async function rescue(item: BrowserDownload, why: string, deps: TakeoverDeps): Promise<Outcome> {
  const outcome = await probeThenTake(item, await deps.settings(), deps, async () => 'take', true);
  if (outcome === 'taken') await deps.notice(why, item.finalUrl || item.url);
  return outcome;
}

type Outcome = 'taken' | 'left' | 'watched';

async function probeThenTake(
  item: BrowserDownload,
  settings: Settings,
  deps: TakeoverDeps,
  decide: (probe: ProbeResult, credentials: JobCredentials) => Promise<StartDecision>,
  rescuing = false,
): Promise<Outcome> {
  const url = item.finalUrl || item.url;
  // The probe carries the Referer the job will send, and reaches what it may reach; the job holds
  // the rules itself once added.
  const owner = `takeover:${item.id}`;
  const credentials = takeoverCredentials(url, item.referrer);
  await Promise.all([deps.referrers?.hold(owner, url, item.referrer), deps.localNetwork?.allow(owner, url)]);
  try {
    const probe = await (deps.probe ?? probeUrl)(url, { referrer: item.referrer, credentials });
    const second = afterProbe(item, probe, settings, credentials);
    if (!second.take) return await leave('notice' in second ? second.notice : undefined, url, deps);
    if ((await decide(probe, credentials)) === 'watch') {
      deps.watch?.(item);
      return 'watched';
    }
    // The browser writes the file once; Stitch, until its save ends, twice (disk-room.ts).
    const size = probe.size ?? (item.totalBytes ? item.totalBytes : undefined);
    const room = takeOverRoom(size, await deps.freeBytes?.(), deps.saveCopy);
    if (room) {
      await deps.notice(t('noticeLeftNoRoom', formatSize(room.needed), formatSize(room.free)), url);
      // A rescue is not tried again (the room will not grow by itself); a new download stays watched.
      if (rescuing) return 'left';
      deps.watch?.(item);
      return 'watched';
    }
    try {
      await deps.api.downloads.cancel(item.id);
    } catch {
      // Cancel fails when the browser already finished: its copy is complete, keep it.
    }
    const after = await deps.api.downloads.search(item.id).catch(() => undefined);
    if (after?.state === 'complete') return 'left';
    await deps.api.downloads.erase(item.id).catch(() => {});
    await deps.add({
      url,
      referrer: item.referrer || undefined,
      credentials,
      mirrors: deps.mirrorsFor(url),
      takenOver: true,
      // A queued job shows these until its own first answer: rows of one path differ by name and size.
      probed: { filename: probe.filename, size: probe.size },
      ...(probe.announced && { announced: probe.announced }),
    });
    return 'taken';
  } finally {
    await Promise.all([deps.referrers?.release(owner), deps.localNetwork?.release(owner)]);
  }
}

async function leave(notice: string | undefined, url: string, deps: TakeoverDeps): Promise<'left'> {
  if (notice) await deps.notice(notice, url);
  return 'left';
}
