import type { PortMessage } from '../messages';
import { t } from '../words/i18n';
import { mirrorUrlsFor } from '../settings/mirror-rules';
import type { BrowserStore } from '../storage/stored-blob-url';
import type { BlobUrlMaker } from './blob-url';
import type { BrowserApi } from './browser-api';
import { aria2FromClick, browserFromClick, createContextMenu, downloadFromClick, playerFromClick } from './context-menu';
import { JobManager } from './job-manager';
import { JobMetaStore } from './job-meta';
import { JobSaver } from './job-saver';
import { KeepAlive, RESTORE_ALARM } from './keep-alive';
import { LocalNetworkRules } from './local-network-rules';
import { handleRequest } from './message-handler';
import { PlaybackHub } from './playback';
import { PostTracker } from './post-tracker';
import { redirectLog } from './redirect-log';
import { ReferrerRules } from './referrer-rules';
import { SessionRules } from './session-rules';
import { SettingsStore } from './settings-store';
import { speedLimit } from './create-job';
import type { EstimateStorage } from './storage-space';
import { SaveFeed } from './save-feed';
import { installSaveRoute } from './save-route';
import { installStreamRoute, type StreamScope } from './stream-route';
import { rescue, takeOver, type TakeoverDeps } from './takeover';
import { Toolbar } from './toolbar';
import { Bypass } from './bypass';
import { DownloadWatcher } from './download-watcher';
import { CappedHosts } from './capped-hosts';
import { measuring } from './start-measure';
import { UiNotices } from './ui-notices';
import { isOwnPage } from './sender';
import { UiPorts } from './ui-ports';
import { Aria2Link, aria2TroubleText } from './aria2/aria2-link';

export interface BackgroundDeps {
  api: BrowserApi;
  /** Opened lazily: listeners must be registered before the first await. */
  store: () => Promise<BrowserStore>;
  blobUrls: BlobUrlMaker;
  estimate: EstimateStorage;
  /** Chrome's service worker scope (found by itself when omitted); absent in Firefox. */
  serviceWorker?: StreamScope;
}

/**
 * Wires the background: registers every listener synchronously (an MV3 worker woken by an
 * event must have its listener in place before its first await), then restores jobs.
 */
export function startBackground(deps: BackgroundDeps): { manager: Promise<JobManager> } {
  const { api } = deps;
  let menuWithAria2: boolean | undefined;
  const settings = new SettingsStore(api, (s) => {
    speedLimit.setRate(s.speedLimitBytesPerSec);
    // The menu offers "Send to aria2" only while an endpoint is set.
    const withAria2 = s.aria2Url.trim() !== '';
    if (withAria2 !== menuWithAria2) void createContextMenu(api, (menuWithAria2 = withAria2)).catch(() => {});
    aria2.settingsChanged();
  });
  const posts = new PostTracker();
  const keepAlive = new KeepAlive(api);
  const saver = new JobSaver(api, deps.blobUrls);
  const ports = new UiPorts(
    async () => {
      const m = await manager;
      await m.restore();
      return { type: 'snapshot', jobs: m.views(), notices: await notices.all() } satisfies PortMessage;
    },
    (viewers) => aria2.viewers(viewers),
  );
  const notices = new UiNotices(api, (notice) => ports.broadcast({ type: 'notice', notice }));
  const mirrorsFor = (url: string) => mirrorUrlsFor(url, settings.current.mirrorRules);
  // Players follow a job's events: in a restarted worker, its jobs must be read from the store first.
  let restored: Promise<JobManager> | undefined;
  const trackedJobs = () => (restored ??= manager.then(async (m) => (await m.restore().catch(() => {}), m)));
  const playback = new PlaybackHub({ jobs: trackedJobs, store: deps.store });
  // One set of session rules for both concepts: each sync makes the browser's rules their union.
  const sessionRules = new SessionRules(api);
  const referrers = new ReferrerRules(api, sessionRules);
  const localNetwork = new LocalNetworkRules(api, sessionRules);
  const aria2 = new Aria2Link(
    api,
    () => settings.current,
    (message) => ports.broadcast(message),
    localNetwork,
  );
  const toolbar = new Toolbar(api, () => settings.current);
  const bypass = new Bypass(api, settings);
  const feed = new SaveFeed();
  // Chrome's service worker scope: its fetch events serve players and streamed saves.
  const scope = deps.serviceWorker ?? serviceWorkerScope();

  const manager = (async () => {
    await settings.load();
    return new JobManager({
      // Streamed saves (Chrome) take just-stored blocks from memory.
      store: scope ? feed.feeding(await deps.store()) : await deps.store(),
      meta: new JobMetaStore(api),
      saver,
      settings: () => settings.current,
      estimate: deps.estimate,
      onView: (job) => {
        ports.broadcast({ type: 'job', job });
        playback.jobChanged(job);
        toolbar.jobChanged(job);
      },
      onRemoved: (id) => {
        ports.broadcast({ type: 'removed', id });
        playback.jobRemoved(id);
        toolbar.jobRemoved(id);
      },
      onActivity: (active, unfinished) => keepAlive.update(active, unfinished),
      referrers,
      localNetwork,
    });
  })();
  const restore = () => void manager.then((m) => m.restore()).catch((error: unknown) => console.error('Stitch: restore failed', error));

  api.runtime.onMessage.addListener((message, sender) => {
    // Messages for the offscreen document are not ours: leave them unanswered here.
    if ((message as { target?: unknown } | null)?.target === 'offscreen') return undefined;
    if (!isOwnPage(sender, api)) return undefined;
    return handleRequest(message, { api, manager, settings, notices, mirrorsFor, bypass, localNetwork, aria2 });
  });
  api.runtime.onConnect.addListener((port) => {
    if (!isOwnPage(port.sender, api)) return;
    ports.connect(port);
    playback.connect(port);
  });
  // Chrome's service worker answers the player's stream URLs; Firefox's event page has no fetch events.
  if (scope) installStreamRoute(scope, { hub: playback, jobs: trackedJobs, store: deps.store });
  // ...and its saves while they download.
  if (scope) installSaveRoute(scope, { hub: playback, jobs: trackedJobs, store: deps.store, feed });
  api.runtime.onStartup.addListener(restore);
  api.runtime.onInstalled.addListener(
    () =>
      void settings
        .load()
        .then((s) => createContextMenu(api, s.aria2Url.trim() !== ''))
        .catch(() => {}),
  );
  api.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === RESTORE_ALARM) restore();
  });
  api.menus.onClicked.addListener((click) => {
    const download = downloadFromClick(click, mirrorsFor);
    if (download) void manager.then((m) => m.add(download));
    const leave = browserFromClick(click);
    if (leave?.url)
      void bypass.browserDownload(api, leave.url).catch((error: unknown) => console.error('Stitch: the browser refused', error));
    const site = leave?.site;
    if (site) void bypass.leaveSite(site).then(() => notices.add(t('noticeLeftSite', site)));
    const toAria2 = aria2FromClick(click, mirrorsFor);
    if (toAria2)
      void aria2.send(toAria2).then(
        () => notices.add(t('noticeSentToAria2', toAria2.url), toAria2.url),
        (error: unknown) => notices.add(t('noticeAria2Refused', aria2TroubleText(error)), toAria2.url),
      );
    const player = playerFromClick(click);
    if (player) void api.tabs?.create(player).catch((error: unknown) => console.error('Stitch: could not open the player', error));
  });
  api.webRequest?.onBeforeRequest.addListener((details) => posts.observe(details));
  // The redirects fetch hides from the engine: their hops are checked before they are sent.
  redirectLog.watch(api.webRequest?.onRedirect, {
    mayReach: (url) => localNetwork.allows(url),
    letThrough: (url, task) => localNetwork.during(url, [], task),
  });
  const takeoverDeps = (m: JobManager): TakeoverDeps => ({
    api,
    settings: () => settings.load(),
    posts,
    add: async (download) => {
      if (await aria2.sendByRule(download, (message) => notices.add(message, download.url))) return;
      const job = await m.add(download);
      toolbar.tookOver(job.filename, job.id);
      return job;
    },
    notice: (message, url) => notices.add(message, url),
    mirrorsFor,
    referrers,
    localNetwork,
    leaveNext: (url) => bypass.takeNext(url),
    watch: (item) => watcher.watch(item),
    cappedHosts,
    measure: measuring(api.downloads),
  });
  const cappedHosts = new CappedHosts(api.storage);
  // Downloads left with the browser: resumed when they break, taken over when the browser cannot finish them.
  const watcher = new DownloadWatcher({ api, rescue: async (item, why) => rescue(item, why, takeoverDeps(await manager)) });
  api.downloads.onCreated.addListener((item) => {
    void manager.then((m) => takeOver(item, takeoverDeps(m))).catch((error: unknown) => console.error('Stitch: take-over failed', error));
  });

  // Any start of the worker (browser start, kill, alarm, message) puts the rule that stops
  // Stitch's requests to local addresses in place (jobs wait for it before their first request)
  // and resumes unfinished jobs, which set their own rules again; rules of jobs gone are removed.
  // Downloads left with the browser are watched again.
  void sessionRules.sync();
  restore();
  void watcher.restore().catch((error: unknown) => console.error('Stitch: restoring the watch failed', error));
  return { manager };
}

/** The global scope when it is a service worker (Chrome), else undefined. */
function serviceWorkerScope(): StreamScope | undefined {
  const SW = (globalThis as { ServiceWorkerGlobalScope?: abstract new () => unknown }).ServiceWorkerGlobalScope;
  return SW !== undefined && globalThis instanceof SW ? (globalThis as unknown as StreamScope) : undefined;
}
