import * as v from 'valibot';
import { REQUEST, type ParsedRequest } from '../../message-schemas';
import type { Reply, ReplyOf, RequestType } from '../../messages';
import { t } from '../../words/i18n';
import { DEFAULT_SETTINGS, parseSettings } from '../../settings/schema';
import type { BrowserApi } from '../browser-api';
import type { JobManager, NewDownload } from '../jobs/job-manager';
import type { LocalNetworkRules } from '../network/local-network-rules';
import { testMirrorRule } from './mirror-test';
import { InvalidSettings, type SettingsStore } from '../settings-store';
import type { UiNotices } from './ui-notices';
import type { Bypass } from '../takeover/bypass';
import { Aria2Unavailable, type Aria2Link } from '../aria2/aria2-link';
import type { DownloadWatcher } from '../takeover/download-watcher';
import type { Streams } from '../streams/install';
import { looksLikeStreamManifest } from '../../engine';
import type { PlaybackHub } from '../playback/playback';

type RequestOfType<T extends RequestType> = Extract<ParsedRequest, { type: T }>;
type PlayRequest = RequestOfType<'play'>;

export interface HandlerDeps {
  api: BrowserApi;
  /** Settings requests do not wait for it: the options page must not wait for the store to open. */
  manager: JobManager | Promise<JobManager>;
  settings: SettingsStore;
  notices: UiNotices;
  mirrorsFor: (url: string) => string[];
  testRule?: typeof testMirrorRule;
  /** Lets a mirror test on a local address reach it (Stitch's requests there are stopped otherwise). */
  localNetwork?: Pick<LocalNetworkRules, 'during'>;
  bypass?: Bypass;
  aria2?: Aria2Link;
  /** The downloads left with the browser: Take over in the popup. */
  watcher?: Pick<DownloadWatcher, 'takeOver'>;
  /** The video streams the tabs loaded: Download (Record, Stop for a live one) in the popup. */
  streams?: Pick<Streams, 'download' | 'record' | 'stopRecording'>;
  /** Where the jobs' players are: a job started by Play expects one at its start. */
  playback?: Pick<PlaybackHub, 'expectPlayer'>;
}

/**
 * Answers one page request, parsed with its schema (message-schemas.ts). Always resolves with a
 * Reply: bad input gets ok:false with a sentence for the user (the schema's first issue), never
 * an exception into the messaging layer.
 */
export async function handleRequest(message: unknown, deps: HandlerDeps): Promise<Reply<unknown>> {
  const parsed = v.safeParse(REQUEST, message);
  if (!parsed.success) return { ok: false, error: parsed.issues[0].message };
  const request = parsed.output;
  try {
    return { ok: true, value: await (settingsRequest(request, deps) ?? jobRequest(request, deps)) };
  } catch (error) {
    if (error instanceof InvalidSettings) return { ok: false, error: error.message, errors: error.errors };
    if (error instanceof Aria2Unavailable) return { ok: false, error: error.message, aria2: error.trouble };
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The requests answered without the job manager, or undefined. */
function settingsRequest(request: ParsedRequest, deps: HandlerDeps): Promise<ReplyOf<RequestType>> | undefined {
  switch (request.type) {
    case 'get-settings':
      return deps.settings.load().then((settings) => ({ settings, defaults: parseSettings(DEFAULT_SETTINGS) }));
    case 'set-settings':
      return deps.settings.save(request.settings).then((settings) => ({ settings }));
    case 'import-settings':
      return deps.settings.import(request.json).then((settings) => ({ settings }));
    case 'test-mirror-rule':
      return (deps.testRule ?? testMirrorRule)(request.rule, request.sampleUrl, undefined, deps.localNetwork);
    case 'aria2-test':
      return aria2Of(deps).check(request.url, request.secret, request.plainConfirmed);
    case 'take-over-watched':
      return takeOverWatched(request.downloadId, deps);
    default:
      return undefined;
  }
}

async function jobRequest(request: ParsedRequest, deps: HandlerDeps): Promise<ReplyOf<RequestType>> {
  const { api } = deps;
  const manager = await deps.manager;
  await manager.restore();
  switch (request.type) {
    case 'list-jobs':
      return { jobs: manager.views(), notices: await deps.notices.all() };
    case 'job-action':
      return { job: await manager.act(request.id, request.action) };
    case 'all-action':
      return { affected: await manager.actAll(request.action, request.ids) };
    case 'clear-finished':
      return { removed: await manager.clearFinished() };
    case 'dismiss-notices':
      await deps.notices.clear();
      return {};
    case 'add-url':
      return { job: await manager.add(newDownload(request, deps.mirrorsFor)) };
    case 'open-file':
      await api.downloads.open(savedDownloadId(manager, request.id));
      return {};
    case 'show-in-folder':
      await api.downloads.show(savedDownloadId(manager, request.id));
      return {};
    case 'saved-path': {
      const item = await api.downloads.search(savedDownloadId(manager, request.id));
      return item?.filename && item.exists !== false ? { path: item.filename } : {};
    }
    case 'save-as':
      return { job: await manager.saveAs(request.id) };
    case 'play':
      return playJob(request, manager, deps);
    case 'bypass':
      return bypass(request, deps);
    case 'relink':
      return manager.relink(request.id, request.url, request.startOver === true);
    case 'queue-move':
      return { job: await manager.moveInQueue(request.id, request.direction) };
    case 'job-speed-limit':
      return { job: await manager.setSpeedLimit(request.id, request.bytesPerSecond) };
    case 'hand-to-browser':
      return handToBrowser(request.id, manager, deps);
    case 'aria2-send':
      return sendToAria2(request.id, manager, aria2Of(deps));
    case 'download-stream':
      if (!deps.streams) throw new Error(`unknown request ${request.type}`);
      return { job: await deps.streams.download(request.url, request.variant) };
    case 'record-stream':
      if (!deps.streams) throw new Error(`unknown request ${request.type}`);
      await deps.streams.record(request.url);
      return {};
    case 'stop-recording':
      if (!deps.streams) throw new Error(`unknown request ${request.type}`);
      deps.streams.stopRecording(request.url);
      return {};
    case 'aria2-action': {
      const url = await aria2Of(deps).act(request.gid, request.action);
      if (url) await manager.add(newDownload({ url }, deps.mirrorsFor));
      return {};
    }
    default:
      throw new Error(`unknown request ${request.type}`);
  }
}

/** The job a player asked for, started at once if queued: a player waits for it, not for the downloads ahead of it. */
async function playJob(request: PlayRequest, manager: JobManager, deps: HandlerDeps): Promise<ReplyOf<'play'>> {
  const { job, started } = await jobToPlay(request, manager, deps);
  const stream = manager.bytes.streamTimeline(job.id);
  if (started) await deps.playback?.expectPlayer(job.id, stream?.durationSeconds);
  return { job: job.state === 'queued' ? ((await manager.act(job.id, 'start-now')) ?? job) : job, started, ...(stream && { stream }) };
}

/** By id, else an existing download of the URL, else a new one. */
async function jobToPlay(request: PlayRequest, manager: JobManager, deps: HandlerDeps): Promise<ReplyOf<'play'>> {
  if (request.id !== undefined) {
    const job = manager.get(request.id);
    if (!job) throw new Error(t('errorNoSuchDownload'));
    return { job, started: false };
  }
  const url = request.url!; // the schema asks for one of id and url
  const existing = manager.bytes.findPlayable(url);
  if (existing) return { job: existing, started: false };
  // A playlist (or a DASH manifest) is a stream to download as one file, not a file of text.
  if (deps.streams && looksLikeStreamManifest(url, undefined)) return { job: await deps.streams.download(url), started: true };
  return { job: await manager.add(newDownload({ url, referrer: request.referrer }, deps.mirrorsFor)), started: true };
}

async function bypass(request: RequestOfType<'bypass'>, deps: HandlerDeps): Promise<ReplyOf<'bypass'>> {
  if (!deps.bypass) throw new Error('leaving downloads to the browser is not available here');
  if (request.next !== undefined) await deps.bypass.setNext(request.next);
  if (request.site !== undefined) await deps.bypass.leaveSite(request.site);
  return { next: await deps.bypass.nextArmed() };
}

/** The browser downloads the URL itself first (so nothing is lost if it refuses), then the job goes. */
async function handToBrowser(id: string, manager: JobManager, deps: HandlerDeps): Promise<ReplyOf<'hand-to-browser'>> {
  const job = manager.get(id);
  if (!job) throw new Error(t('errorNoSuchDownload'));
  if (!deps.bypass) throw new Error('handing downloads to the browser is not available here');
  if (job.stream) throw new Error(t('errorStreamStaysWithStitch'));
  await deps.bypass.browserDownload(deps.api, job.url);
  await manager.forget(id);
  return {};
}

function aria2Of(deps: HandlerDeps): Aria2Link {
  if (!deps.aria2) throw new Aria2Unavailable('no-endpoint');
  return deps.aria2;
}

/** aria2 takes the download first (so nothing is lost if it refuses), then the job and its bytes go. */
async function sendToAria2(id: string, manager: JobManager, aria2: Aria2Link): Promise<ReplyOf<'aria2-send'>> {
  const facts = manager.handoffFacts(id);
  if (!facts) throw new Error(t('errorNoSuchDownload'));
  if (manager.get(id)?.stream) throw new Error(t('errorStreamStaysWithStitch'));
  const gid = await aria2.send(facts);
  await manager.forget(id);
  return { gid };
}

/** A download of a parsed `add-url` (or of a URL aria2 gave back). */
function newDownload(
  { url, filename, referrer, saveAs }: { url: string; filename?: string; referrer?: string; saveAs?: boolean },
  mirrorsFor: (url: string) => string[],
): NewDownload {
  return { url, filename, referrer, saveAs: saveAs === true, mirrors: mirrorsFor(url) };
}

function savedDownloadId(manager: JobManager, id: string): number {
  const view = manager.get(id);
  if (!view) throw new Error(t('errorNoSuchDownload'));
  if (view.savedDownloadId === undefined) throw new Error(t('errorNotSavedYet'));
  return view.savedDownloadId;
}

/** The user's Take over of a download left with the browser; refused in words when it is watched no more. */
async function takeOverWatched(downloadId: number, deps: HandlerDeps): Promise<ReplyOf<'take-over-watched'>> {
  const outcome = (await deps.watcher?.takeOver(downloadId)) ?? 'not-watched';
  if (outcome === 'not-watched') throw new Error(t('errorNotWatched'));
  return { taken: outcome === 'taken' };
}
