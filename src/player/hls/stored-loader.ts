import type { HlsConfig, Loader, LoaderCallbacks, LoaderContext, LoaderStats } from 'hls.js';

/** Reads bytes [start, end) of the stored file, waiting for them while the download goes on. */
export type ReadRange = (start: number, end: number, signal: AbortSignal) => Promise<ArrayBuffer>;

export interface StoredSource {
  /** The playlist's URL, as hls.js is given it: the loader answers it with `playlist`. */
  playlistUrl: string;
  playlist: string;
  /** Every other request is a segment's byte range of the stored file. */
  read: ReadRange;
  /** hls.js's own stats object (its LoadStats class, from the lazily loaded module). */
  newStats: () => LoaderStats;
}

/**
 * An hls.js loader (config.loader) that reads nothing from the network: the playlist is made from
 * the job's layout (stored-playlist.ts) and each segment is a range of the stored file. It has no
 * time-outs of its own: a segment still downloading is waited for, and the download going on is
 * what the page's state line says; a download that stops for good fails the read.
 */
export function storedLoader(source: StoredSource): new (config: HlsConfig) => Loader<LoaderContext> {
  return class StoredLoader implements Loader<LoaderContext> {
    context: LoaderContext | null = null;
    stats: LoaderStats = source.newStats();
    private callbacks: LoaderCallbacks<LoaderContext> | null = null;
    private controller = new AbortController();

    load(context: LoaderContext, _config: unknown, callbacks: LoaderCallbacks<LoaderContext>): void {
      this.context = context;
      this.callbacks = callbacks;
      const stats = this.stats;
      stats.loading.start = performance.now();
      const signal = this.controller.signal;
      void this.answer(context, signal).then(
        (data) => {
          if (signal.aborted || this.callbacks !== callbacks) return;
          const size = typeof data === 'string' ? data.length : data.byteLength;
          stats.loading.first = stats.loading.end = performance.now();
          stats.loaded = stats.total = size;
          callbacks.onSuccess({ url: context.url, data }, stats, context, null);
        },
        (error: unknown) => {
          if (signal.aborted || this.callbacks !== callbacks) return;
          callbacks.onError({ code: 0, text: error instanceof Error ? error.message : String(error) }, context, null, stats);
        },
      );
    }

    abort(): void {
      const callbacks = this.callbacks;
      this.stop();
      this.stats.aborted = true;
      if (this.context) callbacks?.onAbort?.(this.stats, this.context, null);
    }

    destroy(): void {
      this.stop();
      this.context = null;
    }

    private stop(): void {
      this.callbacks = null;
      this.controller.abort(new DOMException('the player no longer needs these bytes', 'AbortError'));
      this.controller = new AbortController();
    }

    private async answer(context: LoaderContext, signal: AbortSignal): Promise<string | ArrayBuffer> {
      if (context.url === source.playlistUrl) return source.playlist;
      const { rangeStart, rangeEnd } = context;
      if (rangeStart === undefined || rangeEnd === undefined) throw new Error(`${context.url} is not a range of the stored stream`);
      return source.read(rangeStart, rangeEnd, signal);
    }
  };
}
