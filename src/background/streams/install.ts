import { planStream, readStreamOffer, sanitizeFilename, StreamRefusal, type HlsVariant, type HttpFetch, streamStem } from '../../engine';
import type { JobView, StreamRecordingView, StreamRow } from '../../messages';
import { LiveRecordings, type LiveRecordingsDeps } from './live-recordings';
import { t } from '../../words/i18n';
import { REFUSAL_WORDS } from '../../words/stream-words';
import type { BrowserApi } from '../browser-api';
import type { JobManager } from '../jobs/job-manager';
import type { LocalNetworkRules } from '../network/local-network-rules';
import { requester } from '../network/requester';
import { StreamFinder, type FoundStream, type StreamDescription } from './stream-finder';

/** Where the found streams are kept while the worker sleeps (cleared when the browser starts). */
const FOUND_STREAMS_KEY = 'foundStreams';

export interface StreamsDeps {
  api: BrowserApi;
  manager: Promise<JobManager>;
  /** Where a live recording's bytes go as they come, and what saves them. */
  store: LiveRecordingsDeps['store'];
  saver: LiveRecordingsDeps['saver'];
  notice: (message: string, url?: string) => Promise<unknown>;
  /** Lets Stitch's requests reach a stream on a local address (they are stopped there otherwise). */
  localNetwork: Pick<LocalNetworkRules, 'during'>;
  onChange: (rows: StreamRow[]) => void;
}

export interface Streams {
  /** The found streams, the newest first (those kept by a stopped worker once it read them: onChange follows). */
  rows(): StreamRow[];
  /**
   * Downloads a found stream (or any HLS playlist's) as one file, the quality its row lists at
   * `variant` (else the best); a refusal throws in the user's words.
   */
  download(url: string, variant?: number): Promise<JobView>;
  /** Downloads (records, when live) the stream a tab loaded last (not a refused one); false when it loaded none. */
  downloadTab(tabId: number): Promise<boolean>;
  /** Starts recording a live stream (found in a tab, or any live HLS playlist's), named after its page. */
  record(url: string): Promise<void>;
  /** Stops a recording: what it recorded is saved. */
  stopRecording(url: string): void;
}

/**
 * The video streams of the open tabs: their playlists are noticed as the tabs load them
 * (webRequest, no content script), read once to describe them, and downloaded on request as one
 * file through the engine (streams/stream-plan.ts). Registers its listeners synchronously.
 */
export function installStreams({ api, manager, localNetwork, store, saver, notice, onChange }: StreamsDeps): Streams {
  // The popup's rows: the finder's, with the recordings under way.
  const rows = () => finder.rows().map((row) => withRecording(row, recordings.view(row.url)));
  const finder = new StreamFinder({
    describe: (found) => localNetwork.during(found.url, [], () => describe(found)),
    tab: async (tabId) => (await api.tabs?.get?.(tabId)) ?? undefined,
    load: () => api.storage.get(FOUND_STREAMS_KEY),
    save: (found) => api.storage.set(FOUND_STREAMS_KEY, found),
    onChange: () => onChange(rows()),
    now: () => Date.now(),
  });
  const recordings = new LiveRecordings({
    store,
    saver,
    storage: api.storage,
    fetchFor: (url) => pageFetch(url, finder.get(url)),
    during: (url, work) => localNetwork.during(url, [], work),
    notice,
    onChange: () => onChange(rows()),
  });
  void recordings.restore().catch((error: unknown) => console.error('Stitch: saving the recordings of before failed', error));
  api.webRequest?.onPlaylist?.addListener(({ url, tabId }) => void finder.seen(url, tabId));
  api.webRequest?.onBeforeRequest.addListener((request) => {
    if (request.type === 'main_frame' && request.tabId !== undefined && request.tabId >= 0) void finder.navigated(request.tabId);
  });
  api.tabs?.onRemoved?.addListener((tabId) => void finder.navigated(tabId));
  api.runtime.onStartup.addListener(() => void finder.clear());
  void finder.restore().then(() => onChange(rows()));

  const download = async (url: string, variant?: number): Promise<JobView> => {
    await finder.restore();
    const found = finder.get(url);
    const wanted = variant === undefined ? undefined : found?.description?.variants?.[variant];
    const choose = wanted && ((variants: readonly HlsVariant[]) => variants.find((v) => sameVariant(v, wanted)));
    try {
      const { layout } = await localNetwork.during(url, [], () =>
        planStream(url, {
          fetch: pageFetch(url, found),
          name: found?.title?.trim() || undefined,
          pageUrl: found?.pageUrl,
          ...(choose ? { choose } : {}),
        }),
      );
      const [primary, ...others] = layout.sources;
      return await (
        await manager
      ).add({
        url: primary!.url,
        mirrors: others.map((source) => source.url),
        referrer: found?.pageUrl,
        filename: layout.filename,
        stream: layout,
      });
    } catch (error) {
      if (error instanceof StreamRefusal) throw new Error(t(REFUSAL_WORDS[error.reason]), { cause: error });
      throw error;
    }
  };
  const record = async (url: string): Promise<void> => {
    await finder.restore();
    const found = finder.get(url);
    const stem = sanitizeFilename(found?.title?.trim() || streamStem(url));
    await recordings.start(url, stem);
  };
  return {
    rows,
    download,
    record,
    stopRecording: (url) => recordings.stop(url),
    downloadTab: async (tabId) => {
      await finder.restore();
      const found = finder.lastOfTab(tabId);
      if (!found) return false;
      if (found.description?.live) await record(found.url);
      else await download(found.url);
      return true;
    },
  };
}

/** Best first: the order a row lists the qualities in. */
function byQuality(variants: readonly HlsVariant[]): HlsVariant[] {
  return [...variants].sort((a, b) => (b.bandwidth ?? 0) - (a.bandwidth ?? 0));
}

function sameVariant(variant: HlsVariant, view: { width?: number; height?: number; bandwidth?: number }): boolean {
  return variant.bandwidth === view.bandwidth && variant.resolution?.width === view.width && variant.resolution?.height === view.height;
}

/**
 * The requests of a stream the user asked for (Download, Record) as its page's: its cookies for
 * the playlist's origin, the page as referrer, each part and key checked by the door.
 */
function pageFetch(url: string, found: FoundStream | undefined): HttpFetch {
  return requester({ primaryUrl: url, credentials: 'include', credentialOrigins: [], referrer: found?.pageUrl });
}

/** The finder's reading of what a player loaded, which the user did not ask for: no cookies. */
function finderFetch(found: FoundStream): HttpFetch {
  return requester({ primaryUrl: found.url, credentials: 'omit', credentialOrigins: [], referrer: found.pageUrl });
}

function withRecording(row: StreamRow, recording: StreamRecordingView | undefined): StreamRow {
  return recording ? { ...row, recording } : row;
}

async function describe(found: FoundStream): Promise<StreamDescription> {
  try {
    const { variants, durationSeconds, covers, live } = await readStreamOffer(found.url, {
      fetch: finderFetch(found),
      pageUrl: found.pageUrl,
    });
    const chosen = variants[0];
    return {
      width: chosen?.resolution?.width,
      height: chosen?.resolution?.height,
      bandwidth: chosen?.bandwidth,
      variants: byQuality(variants).map((v) => ({ width: v.resolution?.width, height: v.resolution?.height, bandwidth: v.bandwidth })),
      durationSeconds,
      covers,
      ...(live && { live }),
    };
  } catch (error) {
    if (error instanceof StreamRefusal) return { refused: error.reason, covers: [] };
    throw error;
  }
}
