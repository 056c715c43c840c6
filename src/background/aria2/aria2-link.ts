import type { Aria2Action, Aria2Check, Aria2Row, Aria2Trouble, PortMessage } from '../../messages';
import { judgeEndpoint } from '../../settings/aria2-endpoint';
import type { Settings } from '../../settings/schema';
import { aria2ProblemText } from '../../words/aria2-text';
import { t } from '../../words/i18n';
import type { BrowserApi } from '../browser-api';
import type { NewDownload } from '../jobs/job-manager';
import type { LocalNetworkRules } from '../network/local-network-rules';
import { goesToAria2 } from './aria2-rule';
import { planHandoff, type HandoffFacts, type HandoffPurpose } from './handoff';
import { Aria2Client, Aria2Failure, STATUS_KEYS, type Aria2Status } from './rpc';
import { aria2Row } from './status';

/** The downloads Stitch handed to aria2 (their gids and URLs), kept across restarts of the background. */
const HANDED_KEY = 'aria2Handed';
/** How often the rows are read again while a page shows them. */
export const ARIA2_REFRESH_MS = 1_000;
/** Who holds the endpoint's way through the block of local addresses. */
const ENDPOINT_OWNER = 'aria2-endpoint';
/** The most handed downloads remembered: the oldest are forgotten first. */
const MAX_HANDED = 200;

/** aria2 could not take or act on a download; `trouble` says why, for the page to put in words. */
export class Aria2Unavailable extends Error {
  constructor(readonly trouble: Aria2Trouble) {
    super(`aria2: ${trouble}`);
    this.name = 'Aria2Unavailable';
  }
}

interface Handed {
  gid: string;
  url: string;
  name: string;
}

/**
 * Stitch's side of the aria2 hand-off: one client for the endpoint in the settings, the list of the
 * downloads handed to it, and their rows for the popup. Rows are read from aria2 while a page shows
 * them (every ARIA2_REFRESH_MS) and, over a WebSocket, whenever aria2 says a download started,
 * paused, stopped, completed or failed; nothing polls while no page is open.
 */
export class Aria2Link {
  /** `ready`: the endpoint is reachable (Stitch's requests to local addresses are stopped unless allowed). */
  private connection: { key: string; client: Aria2Client; ready: Promise<void> } | undefined;
  private readonly rows = new Map<string, Aria2Row>();
  private trouble: Aria2Trouble | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private viewerCount = 0;

  constructor(
    private readonly api: BrowserApi,
    private readonly settings: () => Settings,
    private readonly broadcast: (message: PortMessage) => void,
    /** The endpoint is the user's own choice: on a local address, Stitch's block of local addresses lets it through. */
    private readonly localNetwork?: Pick<LocalNetworkRules, 'allow' | 'release' | 'during'>,
  ) {}

  /** _Test_ in the options page: the version of the aria2 at that address, or why there is none. */
  async check(url: string, secret: string, plainConfirmed: boolean): Promise<Aria2Check> {
    const verdict = judgeEndpoint(url, plainConfirmed);
    if (!verdict.ok) return { problem: 'endpoint-refused' };
    const client = new Aria2Client({ url: verdict.url, secret });
    const ask = () => client.call<{ version: string }>('aria2.getVersion');
    try {
      const { version } = await (this.localNetwork ? this.localNetwork.during(verdict.url, [], ask) : ask());
      return { version };
    } catch (error) {
      return { problem: troubleOf(error) };
    } finally {
      client.close();
    }
  }

  /** Whether downloads can be handed over at all (an endpoint is set). */
  get configured(): boolean {
    return this.settings().aria2Url.trim() !== '';
  }

  /** Hands one download to aria2 as the user asked (Send to aria2); its row appears in the list. */
  send(facts: HandoffFacts): Promise<string> {
    return this.hand(facts, 'user');
  }

  private async hand(facts: HandoffFacts, purpose: HandoffPurpose): Promise<string> {
    const plan = planHandoff(facts, this.settings().connectionsPerServer, purpose);
    const gid = await this.call<string>('aria2.addUri', plan.uris, plan.options);
    const handed = await this.handed();
    handed.push({ gid, url: facts.url, name: plan.options.out?.toString() ?? '' });
    await this.api.storage.set(HANDED_KEY, handed.slice(-MAX_HANDED));
    await this.refresh();
    return gid;
  }

  /**
   * A download being taken over goes to aria2 instead when the options page's rules say so; false when
   * they do not, or when aria2 did not take it (`notice` says why, and Stitch downloads it itself).
   */
  async sendByRule(download: NewDownload, notice: (message: string) => Promise<unknown>): Promise<boolean> {
    const size = download.probed?.size;
    if (!goesToAria2({ url: download.url, referrer: download.referrer, size }, this.settings())) return false;
    const name = download.filename ?? download.probed?.filename;
    try {
      await this.hand(
        {
          url: download.url,
          mirrors: [...(download.mirrors ?? []), ...(download.announced?.mirrors ?? [])],
          digests: download.announced?.digests ?? [],
          ...(name ? { name } : {}),
          ...(download.referrer ? { referrer: download.referrer } : {}),
        },
        'rule',
      );
    } catch (error) {
      await notice(t('noticeAria2Fallback', aria2TroubleText(error)));
      return false;
    }
    await notice(t('noticeSentToAria2', name ?? download.url));
    return true;
  }

  /** Pause, resume or remove one handed download; `run-here` removes it from aria2 and returns its URL for Stitch. */
  async act(gid: string, action: Aria2Action): Promise<string | undefined> {
    const handed = await this.handed();
    const entry = handed.find((h) => h.gid === gid);
    if (!entry) throw new Aria2Unavailable('other');
    const state = this.rows.get(gid)?.state;
    const finished = state === 'done' || state === 'failed' || state === 'removed';
    if (action === 'pause') await this.call('aria2.pause', gid);
    else if (action === 'resume') await this.call('aria2.unpause', gid);
    else {
      // Run in Stitch is offered when aria2 does not answer too: the download must not wait for it.
      const tolerated = action === 'run-here' ? ignoreGoneOrDown : ignoreGone;
      if (!finished) await this.call('aria2.remove', gid).catch(tolerated);
      await this.call('aria2.removeDownloadResult', gid).catch(tolerated);
      await this.api.storage.set(
        HANDED_KEY,
        handed.filter((h) => h.gid !== gid),
      );
      this.rows.delete(gid);
    }
    await this.refresh();
    return action === 'run-here' ? entry.url : undefined;
  }

  /** What the popup shows: a message for the port. */
  message(): PortMessage {
    const rows = [...this.rows.values()];
    return { type: 'aria2', configured: this.configured, rows, ...(this.trouble ? { trouble: this.trouble } : {}) };
  }

  /** Pages that show the rows: with one or more open, the rows are read again every ARIA2_REFRESH_MS. */
  viewers(count: number): void {
    this.viewerCount = count;
    this.schedule();
    if (count > 0) void this.refresh();
  }

  /** The settings changed: the rows (and whether rows offer Send to aria2) follow the endpoint now set. */
  settingsChanged(): void {
    this.schedule();
    void this.refresh();
  }

  private schedule(): void {
    const wanted = this.viewerCount > 0 && this.configured;
    if (wanted && this.timer === undefined) this.timer = setInterval(() => void this.refresh(), ARIA2_REFRESH_MS);
    if (wanted || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    // With no page to show them, only aria2's own notices (WebSocket) keep the rows current.
    if (!this.connection?.client.usesWebSocket) this.disconnect();
  }

  /** Reads every handed download's status from aria2 and posts the rows. */
  async refresh(): Promise<void> {
    const handed = await this.handed();
    if (handed.length === 0 || !this.configured) {
      this.rows.clear();
      this.trouble = undefined;
      this.broadcast(this.message());
      return;
    }
    try {
      const statuses = await Promise.all(
        handed.map((h) =>
          // aria2 refuses a gid it no longer has (it restarted, or its result was removed): that row is removed.
          this.call<Aria2Status>('aria2.tellStatus', h.gid, STATUS_KEYS).catch((error: unknown) => ignoreGone(error)),
        ),
      );
      this.trouble = undefined;
      handed.forEach((h, i) => {
        const status = statuses[i];
        const row: Aria2Row = status
          ? aria2Row(status)
          : { gid: h.gid, state: 'removed', name: h.name, url: h.url, totalBytes: 0, doneBytes: 0, bytesPerSecond: 0 };
        this.rows.set(h.gid, { ...row, url: row.url || h.url, name: row.name === h.gid ? h.name || h.gid : row.name });
      });
    } catch (error) {
      this.trouble = troubleOf(error);
      for (const h of handed)
        if (!this.rows.has(h.gid))
          this.rows.set(h.gid, {
            gid: h.gid,
            state: 'waiting',
            name: h.name || h.gid,
            url: h.url,
            totalBytes: 0,
            doneBytes: 0,
            bytesPerSecond: 0,
          });
    }
    this.broadcast(this.message());
  }

  private async call<T>(method: string, ...params: unknown[]): Promise<T> {
    try {
      const { client, ready } = this.client();
      await ready;
      return await client.call<T>(method, ...params);
    } catch (error) {
      throw error instanceof Aria2Unavailable ? error : new Aria2Unavailable(troubleOf(error));
    }
  }

  /** The client for the endpoint in the settings, made again when they change. */
  private client(): { client: Aria2Client; ready: Promise<void> } {
    const { aria2Url, aria2Secret, aria2PlainConfirmed } = this.settings();
    if (aria2Url.trim() === '') throw new Aria2Unavailable('no-endpoint');
    const verdict = judgeEndpoint(aria2Url, aria2PlainConfirmed);
    if (!verdict.ok) throw new Aria2Unavailable('endpoint-refused');
    const key = `${verdict.url}\n${aria2Secret}`;
    if (this.connection?.key !== key) {
      this.disconnect();
      const client = new Aria2Client({ url: verdict.url, secret: aria2Secret }, () => void this.refresh());
      this.connection = { key, client, ready: this.localNetwork?.allow(ENDPOINT_OWNER, verdict.url) ?? Promise.resolve() };
    }
    return this.connection;
  }

  private disconnect(): void {
    this.connection?.client.close();
    if (this.connection) void this.localNetwork?.release(ENDPOINT_OWNER);
    this.connection = undefined;
  }

  private async handed(): Promise<Handed[]> {
    const stored = await this.api.storage.get(HANDED_KEY);
    return Array.isArray(stored) ? (stored as Handed[]).filter((h) => typeof h?.gid === 'string' && typeof h.url === 'string') : [];
  }
}

/** Why aria2 did not take or act on a download, in the user's language. */
export function aria2TroubleText(error: unknown): string {
  return aria2ProblemText(troubleOf(error));
}

function troubleOf(error: unknown): Aria2Trouble {
  if (error instanceof Aria2Unavailable) return error.trouble;
  if (error instanceof Aria2Failure) return error.kind;
  return 'other';
}

/** aria2 does not answer, or no longer has the download: either way Stitch may run it. */
function ignoreGoneOrDown(error: unknown): void {
  if (error instanceof Aria2Unavailable && error.trouble === 'unreachable') return;
  ignoreGone(error);
}

/** aria2 answers "GID … is not found" for a download it no longer has: nothing is left to remove. */
function ignoreGone(error: unknown): void {
  if (error instanceof Aria2Unavailable && error.trouble === 'refused') return;
  throw error;
}
