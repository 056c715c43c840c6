import { filenameFromUrl, isLocalHost, parseHttpUrl, type RefusalReason } from '../../engine';
import type { StreamRow } from '../../messages';

/** What reading a stream's playlists told: the variant a download takes, or why it cannot. */
export interface StreamDescription {
  width?: number;
  height?: number;
  bandwidth?: number;
  durationSeconds?: number;
  /** A master playlist's qualities, the best (width, height, bandwidth above) first. */
  variants?: { width?: number; height?: number; bandwidth?: number }[];
  refused?: RefusalReason;
  /** A live stream (its playlist has no end): recorded, not downloaded. */
  live?: boolean;
  /** The media playlists a master playlist names: a tab's player loads them too, and they are not other streams. */
  covers: string[];
}

/** A playlist a tab loaded, with the page it was on. */
export interface FoundStream {
  url: string;
  tabId: number;
  /** The tab's title and address when the playlist was seen. */
  title?: string;
  pageUrl?: string;
  seenAt: number;
  description?: StreamDescription;
  /** Reading its playlists failed. */
  unread?: boolean;
}

export interface StreamFinderDeps {
  describe(found: FoundStream): Promise<StreamDescription>;
  tab(tabId: number): Promise<{ title?: string; url?: string } | undefined>;
  /** Keeps the list across the worker's restarts (an idle worker stops long before a user opens the popup). */
  load(): Promise<unknown>;
  save(found: FoundStream[]): Promise<void>;
  onChange(rows: StreamRow[]): void;
  now(): number;
}

/** A page with a player loads a few playlists; a hostile one must not grow the list without end. */
const MAX_PER_TAB = 10;
const MAX_FOUND = 50;

/**
 * The HLS streams the open tabs loaded (their players asked for the playlists), for the popup:
 * each read once to say its picture size, duration and estimated size, or why Stitch cannot
 * download it. Only what a player loaded itself is read (a master's qualities from the master, its
 * length from the media playlist the player picks), never a URL a playlist merely names, and
 * nothing on the user's network after a public page: a page cannot make Stitch request what it
 * chooses without the user asking. A master playlist's own media playlists are not listed apart.
 * A tab's list is forgotten when it loads another page or closes.
 */
export class StreamFinder {
  private found: FoundStream[] = [];
  private loading: Promise<void> | undefined;

  constructor(private readonly deps: StreamFinderDeps) {}

  /** Reads the list the worker kept before it stopped; safe to call often. */
  restore(): Promise<void> {
    this.loading ??= this.deps.load().then((stored) => {
      const kept = Array.isArray(stored) ? stored.filter(isFoundStream) : [];
      // Seen while loading comes after what was kept.
      this.found = [...kept.filter((k) => !this.found.some((f) => f.url === k.url && f.tabId === k.tabId)), ...this.found];
    });
    return this.loading;
  }

  async seen(url: string, tabId: number): Promise<void> {
    await this.restore();
    // A live player asks for its playlist again every few seconds, often with a new query (a token,
    // LL-HLS's _HLS_msn): the same path in the same tab is the same stream.
    const path = withoutQuery(url);
    if (this.found.some((f) => f.tabId === tabId && withoutQuery(f.url) === path)) return;
    const master = this.masterOf({ url, tabId, seenAt: 0 });
    if (master) return this.completeMaster(master, url);
    const tab = await this.deps.tab(tabId);
    // A public page's player may load from the user's network; Stitch does not read it after it.
    if (isLocalUrl(url) && !(tab?.url !== undefined && isLocalUrl(tab.url))) return;
    const found: FoundStream = { url, tabId, title: tab?.title, pageUrl: tab?.url, seenAt: this.deps.now() };
    this.found.push(found);
    const ofTab = this.found.filter((f) => f.tabId === tabId);
    if (ofTab.length > MAX_PER_TAB) this.forget((f) => f === ofTab[0]);
    if (this.found.length > MAX_FOUND) this.forget((f) => f === this.found[0]);
    this.changed();
    try {
      found.description = await this.deps.describe(found);
      // The two reads of a master and its media playlist end in either order: the media's length is the stream's.
      const master = this.masterOf(found);
      if (master) {
        mergeMedia(master.description!, found.description);
        this.forget((f) => f === found);
      } else {
        const covered = new Set(found.description.covers.map(withoutQuery));
        const isCovered = (f: FoundStream) => f.tabId === tabId && f !== found && covered.has(withoutQuery(f.url));
        const media = this.found.find((f) => isCovered(f) && f.description);
        if (media) mergeMedia(found.description, media.description!);
        this.forget(isCovered);
      }
    } catch {
      found.unread = true;
    }
    this.changed();
  }

  /** The master playlist of the same tab, already read, that lists `media` among its own. */
  private masterOf(media: FoundStream): FoundStream | undefined {
    const path = withoutQuery(media.url);
    return this.found.find((f) => f !== media && f.tabId === media.tabId && f.description?.covers.some((c) => withoutQuery(c) === path));
  }

  /**
   * A master playlist lists its qualities but not the stream's length: that is in the media
   * playlist its player loads (`url`), read once, as the player asked for it, to complete the row.
   */
  private async completeMaster(master: FoundStream, url: string): Promise<void> {
    const description = master.description!;
    if (description.durationSeconds !== undefined || description.live || description.refused) return;
    let media: StreamDescription;
    try {
      media = await this.deps.describe({ ...master, url });
    } catch {
      return;
    }
    mergeMedia(description, media);
    this.changed();
  }

  /** The tab loads another page: its streams are gone with the old one. */
  async navigated(tabId: number): Promise<void> {
    await this.restore();
    if (this.forget((f) => f.tabId === tabId)) this.changed();
  }

  /** The browser started: no tab of before is open. */
  async clear(): Promise<void> {
    await this.restore();
    if (this.forget(() => true)) this.changed();
  }

  get(url: string): FoundStream | undefined {
    return this.found.findLast((f) => f.url === url);
  }

  /** The stream a tab loaded last that can be downloaded: what "Download video with Stitch" takes. */
  lastOfTab(tabId: number): FoundStream | undefined {
    return this.found.findLast((f) => f.tabId === tabId && !f.description?.refused);
  }

  rows(): StreamRow[] {
    return this.found.toReversed().map(rowOf);
  }

  private forget(which: (found: FoundStream) => boolean): boolean {
    const before = this.found.length;
    this.found = this.found.filter((f) => !which(f));
    return this.found.length !== before;
  }

  private changed(): void {
    void this.deps.save(this.found).catch(() => {});
    this.deps.onChange(this.rows());
  }
}

function rowOf(found: FoundStream): StreamRow {
  const { description } = found;
  const estimate = (bandwidth: number | undefined) =>
    bandwidth !== undefined && description?.durationSeconds !== undefined
      ? Math.round((bandwidth / 8) * description.durationSeconds)
      : undefined;
  const estimatedBytes = estimate(description?.bandwidth);
  const variants = description?.variants?.map((variant) => ({ ...variant, estimatedBytes: estimate(variant.bandwidth) }));
  const page = found.pageUrl ? parseHttpUrl(found.pageUrl) : undefined;
  return {
    url: found.url,
    title: found.title?.trim() || (filenameFromUrl(found.url) ?? found.url),
    host: (page ?? parseHttpUrl(found.url))?.host ?? '',
    ...(description?.width !== undefined ? { width: description.width, height: description.height } : {}),
    ...(description?.bandwidth !== undefined ? { bandwidth: description.bandwidth } : {}),
    ...(description?.durationSeconds !== undefined ? { durationSeconds: description.durationSeconds } : {}),
    ...(estimatedBytes !== undefined ? { estimatedBytes } : {}),
    ...(description?.refused ? { refused: description.refused } : {}),
    ...(description?.live ? { live: true } : {}),
    ...(variants && variants.length > 1 ? { variants } : {}),
    ...(found.unread ? { unread: true } : {}),
  };
}

/** A master's row takes its length, liveness and any refusal from its media playlist's. */
function mergeMedia(master: StreamDescription, media: StreamDescription): void {
  if (media.durationSeconds !== undefined) master.durationSeconds = media.durationSeconds;
  if (media.live) master.live = true;
  if (media.refused) master.refused = media.refused;
}

function isLocalUrl(url: string): boolean {
  const parsed = parseHttpUrl(url);
  return parsed !== undefined && isLocalHost(parsed.hostname);
}

function withoutQuery(url: string): string {
  return url.split(/[?#]/)[0]!;
}

function isFoundStream(value: unknown): value is FoundStream {
  const found = value as Partial<FoundStream> | null;
  return typeof found?.url === 'string' && typeof found.tabId === 'number' && typeof found.seenAt === 'number';
}
