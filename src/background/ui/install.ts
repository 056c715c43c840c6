import type { JobView, PortMessage } from '../../messages';
import type { Settings } from '../../settings/schema';
import { t } from '../../words/i18n';
import { aria2TroubleText, type Aria2Link } from '../aria2/aria2-link';
import type { BrowserApi } from '../browser-api';
import type { JobManager } from '../jobs/job-manager';
import type { LocalNetworkRules } from '../network/local-network-rules';
import type { PlaybackHub } from '../playback/playback';
import { isOwnPage } from '../sender';
import type { SettingsStore } from '../settings-store';
import type { Bypass } from '../takeover/bypass';
import type { DownloadWatcher } from '../takeover/download-watcher';
import type { Streams } from '../streams/install';
import {
  aria2FromClick,
  browserFromClick,
  createContextMenu,
  downloadFromClick,
  playerFromClick,
  streamTabFromClick,
} from './context-menu';
import { handleRequest } from './message-handler';
import { Toolbar } from './toolbar';
import { UiNotices } from './ui-notices';
import { UiPorts } from './ui-ports';

export interface UiDeps {
  api: BrowserApi;
  settings: SettingsStore;
  manager: Promise<JobManager>;
  mirrorsFor: (url: string) => string[];
  bypass: Bypass;
  localNetwork: LocalNetworkRules;
  aria2: Aria2Link;
  /** The downloads left with the browser: their rows, and Take over. */
  watcher: Pick<DownloadWatcher, 'rows' | 'takeOver'>;
  /** The video streams the tabs loaded: their rows, Download, and Record and Stop for a live one. */
  streams: Pick<Streams, 'rows' | 'download' | 'downloadTab' | 'record' | 'stopRecording'>;
  /** Where the jobs' players are: a job started by Play expects one at its start. */
  playback: Pick<PlaybackHub, 'expectPlayer'>;
}

export interface Ui {
  /** Sends a message to every open page (popup, options). */
  broadcast: (message: PortMessage) => void;
  /** Adds a page-wide notice, kept across worker restarts (url: the download it is about). */
  notice: (message: string, url?: string) => Promise<unknown>;
  /** Tells the user a download was taken over. */
  tookOver: (filename: string, jobId: string) => void;
  /** Shows a job's change on the pages and the toolbar. */
  jobChanged: (job: JobView) => void;
  jobRemoved: (id: string) => void;
  /** The context menu offers "Send to aria2" only while an endpoint is set. */
  settingsChanged: (settings: Settings) => void;
}

/**
 * What the user sees and asks: the pages' requests and ports, the notices, the toolbar, the
 * context menu. Registers its listeners synchronously (runtime.onMessage, runtime.onConnect,
 * runtime.onInstalled, menus.onClicked); only Stitch's own pages are answered.
 */
export function installUi({ api, settings, manager, mirrorsFor, bypass, localNetwork, aria2, watcher, streams, playback }: UiDeps): Ui {
  const ports = new UiPorts(
    async () => {
      const m = await manager;
      await m.restore();
      return { type: 'snapshot', jobs: m.views(), notices: await notices.all() } satisfies PortMessage;
    },
    (viewers) => aria2.viewers(viewers),
    () => [
      { type: 'watched', rows: watcher.rows() },
      { type: 'streams', rows: streams.rows() },
    ],
  );
  const notices = new UiNotices(api, (notice) => ports.broadcast({ type: 'notice', notice }));
  const toolbar = new Toolbar(api, () => settings.current);
  let menuWithAria2: boolean | undefined;

  api.runtime.onMessage.addListener((message, sender) => {
    // Messages for the offscreen document are not ours: leave them unanswered here.
    if ((message as { target?: unknown } | null)?.target === 'offscreen') return undefined;
    if (!isOwnPage(sender, api)) return undefined;
    return handleRequest(message, { api, manager, settings, notices, mirrorsFor, bypass, localNetwork, aria2, watcher, streams, playback });
  });
  api.runtime.onConnect.addListener((port) => {
    if (isOwnPage(port.sender, api)) ports.connect(port);
  });
  api.runtime.onInstalled.addListener(
    () =>
      void settings
        .load()
        .then((s) => createContextMenu(api, s.aria2Url.trim() !== ''))
        .catch(() => {}),
  );
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
    const streamTab = streamTabFromClick(click);
    if (streamTab !== undefined)
      void streams.downloadTab(streamTab).then(
        (started) => void (started || notices.add(t('noticeNoStream'), click.pageUrl)),
        (error: unknown) => void notices.add(t('noticeStreamFailed', (error as Error).message), click.pageUrl),
      );
    const player = playerFromClick(click);
    if (player) void api.tabs?.create(player).catch((error: unknown) => console.error('Stitch: could not open the player', error));
  });

  return {
    broadcast: (message) => ports.broadcast(message),
    notice: (message, url) => notices.add(message, url),
    tookOver: (filename, jobId) => toolbar.tookOver(filename, jobId),
    jobChanged: (job) => {
      ports.broadcast({ type: 'job', job });
      toolbar.jobChanged(job);
    },
    jobRemoved: (id) => {
      ports.broadcast({ type: 'removed', id });
      toolbar.jobRemoved(id);
    },
    settingsChanged: (s) => {
      const withAria2 = s.aria2Url.trim() !== '';
      if (withAria2 !== menuWithAria2) void createContextMenu(api, (menuWithAria2 = withAria2)).catch(() => {});
    },
  };
}
