import { isHttpUrl } from '../../engine';
import { isRequest, type Aria2Action, type JobAction, type Reply, type Request, type ReplyOf, type RequestType } from '../../messages';
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
}

const ACTIONS: readonly JobAction[] = ['start-now', 'pause', 'resume', 'cancel', 'retry', 'undo'];

/**
 * Answers one page request. Always resolves with a Reply: bad input gets ok:false with a
 * sentence for the user, never an exception into the messaging layer.
 */
export async function handleRequest(message: unknown, deps: HandlerDeps): Promise<Reply<unknown>> {
  if (!isRequest(message)) return { ok: false, error: 'unknown request' };
  try {
    return { ok: true, value: await (settingsRequest(message, deps) ?? jobRequest(message, deps)) };
  } catch (error) {
    if (error instanceof InvalidSettings) return { ok: false, error: error.message, errors: error.errors };
    if (error instanceof Aria2Unavailable) return { ok: false, error: error.message, aria2: error.trouble };
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The requests answered without the job manager, or undefined. */
function settingsRequest(request: Request, deps: HandlerDeps): Promise<ReplyOf<RequestType>> | undefined {
  switch (request.type) {
    case 'get-settings':
      return deps.settings.load().then((settings) => ({ settings, defaults: parseSettings(DEFAULT_SETTINGS) }));
    case 'set-settings':
      return deps.settings.save(request.settings).then((settings) => ({ settings }));
    case 'import-settings':
      return deps.settings.import(requireString(request.json, 'json')).then((settings) => ({ settings }));
    case 'export-settings':
      return deps.settings.export().then((json) => ({ json }));
    case 'test-mirror-rule':
      return (deps.testRule ?? testMirrorRule)(request.rule, requireHttpUrl(request.sampleUrl), undefined, deps.localNetwork);
    case 'aria2-test':
      return aria2Of(deps).check(String(request.url ?? ''), String(request.secret ?? ''), request.plainConfirmed === true);
    default:
      return undefined;
  }
}

async function jobRequest(request: Request, deps: HandlerDeps): Promise<ReplyOf<RequestType>> {
  const { api } = deps;
  const manager = await deps.manager;
  await manager.restore();
  switch (request.type) {
    case 'list-jobs':
      return { jobs: manager.views(), notices: await deps.notices.all() };
    case 'job-action':
      return { job: await manager.act(requireString(request.id, 'id'), requireAction(request.action)) };
    case 'all-action':
      return { affected: await manager.actAll(requireAction(request.action)) };
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
      return { job: await manager.saveAs(requireString(request.id, 'id')) };
    case 'play':
      return playJob(request, manager, deps);
    case 'bypass':
      return bypass(request, deps);
    case 'relink':
      return manager.relink(requireString(request.id, 'id'), requireHttpUrl(request.url), request.startOver === true);
    case 'queue-move':
      return { job: await manager.moveInQueue(requireString(request.id, 'id'), requireDirection(request.direction)) };
    case 'job-speed-limit':
      return { job: await manager.setSpeedLimit(requireString(request.id, 'id'), requireRate(request.bytesPerSecond)) };
    case 'hand-to-browser':
      return handToBrowser(requireString(request.id, 'id'), manager, deps);
    case 'aria2-send':
      return sendToAria2(requireString(request.id, 'id'), manager, aria2Of(deps));
    case 'aria2-action': {
      const url = await aria2Of(deps).act(requireString(request.gid, 'gid'), requireAria2Action(request.action));
      if (url) await manager.add(newDownload({ url }, deps.mirrorsFor));
      return {};
    }
    default:
      throw new Error(`unknown request ${request.type}`);
  }
}

/** The job a player asked for, started at once if queued: a player waits for it, not for the downloads ahead of it. */
async function playJob(
  request: { id?: unknown; url?: unknown; referrer?: unknown },
  manager: JobManager,
  deps: HandlerDeps,
): Promise<ReplyOf<'play'>> {
  const { job, started } = await jobToPlay(request, manager, deps);
  return { job: job.state === 'queued' ? ((await manager.act(job.id, 'start-now')) ?? job) : job, started };
}

/** By id, else an existing download of the URL, else a new one. */
async function jobToPlay(
  request: { id?: unknown; url?: unknown; referrer?: unknown },
  manager: JobManager,
  deps: HandlerDeps,
): Promise<ReplyOf<'play'>> {
  if (request.id !== undefined) {
    const job = manager.get(requireString(request.id, 'id'));
    if (!job) throw new Error(t('errorNoSuchDownload'));
    return { job, started: false };
  }
  const url = requireHttpUrl(request.url);
  const existing = manager.findPlayable(url);
  if (existing) return { job: existing, started: false };
  return { job: await manager.add(newDownload({ url, referrer: request.referrer }, deps.mirrorsFor)), started: true };
}

async function bypass(request: { next?: unknown; site?: unknown }, deps: HandlerDeps): Promise<ReplyOf<'bypass'>> {
  if (!deps.bypass) throw new Error('leaving downloads to the browser is not available here');
  if (typeof request.next === 'boolean') await deps.bypass.setNext(request.next);
  if (request.site !== undefined) {
    const host = typeof request.site === 'string' ? request.site.trim().toLowerCase() : '';
    if (!/^[a-z0-9.-]+(:\d+)?$/.test(host)) throw new Error(t('errorNotSite', host));
    await deps.bypass.leaveSite(host.replace(/:\d+$/, ''));
  }
  return { next: await deps.bypass.nextArmed() };
}

/** The browser downloads the URL itself first (so nothing is lost if it refuses), then the job goes. */
async function handToBrowser(id: string, manager: JobManager, deps: HandlerDeps): Promise<ReplyOf<'hand-to-browser'>> {
  const job = manager.get(id);
  if (!job) throw new Error(t('errorNoSuchDownload'));
  if (!deps.bypass) throw new Error('handing downloads to the browser is not available here');
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
  const gid = await aria2.send(facts);
  await manager.forget(id);
  return { gid };
}

function requireAria2Action(action: unknown): Aria2Action {
  if (action !== 'pause' && action !== 'resume' && action !== 'remove' && action !== 'run-here')
    throw new Error(`unknown action ${String(action)}`);
  return action;
}

function newDownload(
  request: { url: unknown; filename?: unknown; referrer?: unknown; saveAs?: unknown },
  mirrorsFor: (url: string) => string[],
): NewDownload {
  const url = requireHttpUrl(request.url);
  const filename = typeof request.filename === 'string' && request.filename.trim() !== '' ? request.filename.trim() : undefined;
  const referrer = typeof request.referrer === 'string' ? request.referrer : undefined;
  return { url, filename, referrer, saveAs: request.saveAs === true, mirrors: mirrorsFor(url) };
}

function savedDownloadId(manager: JobManager, id: unknown): number {
  const view = manager.get(requireString(id, 'id'));
  if (!view) throw new Error(t('errorNoSuchDownload'));
  if (view.savedDownloadId === undefined) throw new Error(t('errorNotSavedYet'));
  return view.savedDownloadId;
}

function requireAction(action: unknown): JobAction {
  if (!ACTIONS.includes(action as JobAction)) throw new Error(`unknown action ${String(action)}`);
  return action as JobAction;
}

function requireDirection(direction: unknown): 'up' | 'down' {
  if (direction !== 'up' && direction !== 'down') throw new Error(`unknown direction ${String(direction)}`);
  return direction;
}

/** Bytes per second, or null for no limit. */
function requireRate(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new Error('a speed limit is a number above 0, or none');
  return value;
}

function requireString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`missing ${name}`);
  return value;
}

function requireHttpUrl(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(t('errorNotUrl', text));
  }
  if (!isHttpUrl(url)) throw new Error(t('errorNotHttp'));
  return url.href;
}
