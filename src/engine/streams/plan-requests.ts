import type { Clock } from '../clock';
import { realClock } from '../clock';
import type { HttpFetch, HttpResponse } from '../http/fetch-port';
import { fetchBoundedText } from '../http/bounded-text';
import { sleep } from '../retry';
import { shown } from './stream-bounds';
import type { HlsVariant } from './hls-playlist';

/** Playlists are small text; a hostile one must not grow memory or hold the plan. */
const PLAYLIST_LIMITS = { maxBytes: 16 * 1024 * 1024, timeoutMs: 30_000 };
/**
 * Segments whose size is asked at once of each host (one small request each, before the
 * download): each segment of the host `index % hosts`, so redundant hosts share the round trips.
 */
export const PROBE_CONCURRENCY_PER_HOST = 6;
/** A probe (or a key) that does not answer within this is an error, not a wait for ever. */
const PROBE_TIMEOUT_MS = 30_000;
/**
 * A probe or a key is asked again after a failure that may pass (a network error, a 404 of a
 * segment a CDN is still filling, a 5xx), this many times in all, waiting 0.5, 1, 2, 4 s between.
 */
const PROBE_ATTEMPTS = 5;
const PROBE_RETRY_MS = 500;

export interface PlanOptions {
  /** Every request of the plan (the job's trusted fetch). */
  fetch: HttpFetch;
  /** Picks the variant of a master playlist; the highest bandwidth by default. */
  choose?: (variants: readonly HlsVariant[]) => HlsVariant | undefined;
  signal?: AbortSignal;
  /** The waits between a probe's attempts. */
  clock?: Clock;
  /** The page that plays the stream, when known: a refused site's page refuses its streams. */
  pageUrl?: string;
  /** A live stream is read (to record it) instead of refused. */
  live?: boolean;
}

/** A failure worth another attempt: the request failed, or answered a status that may pass. */
class MayPass extends Error {}

const MAY_PASS = (status: number) => status === 404 || status === 408 || status === 425 || status === 429 || status >= 500;

/**
 * The plan's requests. Each has a signal of its own, aborted once its answer was read: a fetch
 * port may count a request as open until its signal aborts (the extension's shares six
 * connections per host that way, host-connections.ts), so a probe must free its connection when
 * done, not at its timeout. Probes and keys are asked again after a failure that may pass (a
 * network error, a CDN's 404 for a segment it is still filling, a 5xx), waiting 0.5, 1, 2, 4 s.
 */
export class PlanRequests {
  private readonly clock: Clock;

  constructor(private readonly options: PlanOptions) {
    this.clock = options.clock ?? realClock;
  }

  /** A playlist's text: one attempt (a playlist that is not there is the user's to know at once). */
  playlist(url: string): Promise<string> {
    return this.scoped(
      async (signal) => (await fetchBoundedText(url, `the playlist ${shown(url)}`, this.options.fetch, PLAYLIST_LIMITS, signal)).text,
    );
  }

  /** What `read` makes of the answer to a GET of `url`; `read` runs while the request's connection is held. */
  async read<T>(url: string, headers: Record<string, string>, read: (response: HttpResponse) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= PROBE_ATTEMPTS;
      try {
        return await this.scoped(async (signal) => {
          let response: HttpResponse;
          try {
            response = await this.options.fetch(url, { headers, signal, cache: 'no-store' });
          } catch (error) {
            throw new MayPass('no answer', { cause: error });
          }
          if (!last && MAY_PASS(response.status)) {
            await response.body?.cancel().catch(() => {});
            throw new MayPass(`answered ${response.status}`);
          }
          return read(response);
        });
      } catch (error) {
        if (!(error instanceof MayPass)) throw error;
        if (last || this.options.signal?.aborted) throw error.cause instanceof Error ? error.cause : error;
      }
      await sleep(this.clock, PROBE_RETRY_MS * 2 ** (attempt - 1), this.options.signal);
    }
  }

  private async scoped<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const done = new AbortController();
    const signals = [done.signal, AbortSignal.timeout(PROBE_TIMEOUT_MS), ...(this.options.signal ? [this.options.signal] : [])];
    try {
      return await work(AbortSignal.any(signals));
    } finally {
      done.abort(new Error('the request is done'));
    }
  }
}

/** `work` over every item, at most `limit` at once, results in order; after a failure no more item is started. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const index = next++;
      try {
        results[index] = await work(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The first `max` bytes of a body (one more when there are more, so a caller can tell), its request then ended. */
export async function readAtMost(response: HttpResponse, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(max + 1);
  let length = 0;
  const reader = response.body?.getReader();
  try {
    while (reader && length <= max) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes.set(value.subarray(0, max + 1 - length), length);
      length += Math.min(value.length, max + 1 - length);
    }
  } finally {
    await reader?.cancel().catch(() => {});
  }
  return bytes.slice(0, Math.min(length, max + 1));
}
