import { formatBytes, recordLiveStream, type HttpFetch, type LiveRecording } from '../../engine';
import type { StreamRecordingView } from '../../messages';
import type { BrowserStore } from '../../storage/stored-blob-url';
import { formatDuration } from '../../words/format';
import { t } from '../../words/i18n';
import type { JobSaver } from '../saving/job-saver';

/** Where the recordings under way are kept, so a worker that restarts saves what they had recorded. */
export const RECORDINGS_KEY = 'liveRecordings';

/** A recording under way, as kept in storage: its bytes are the job `id`'s in the store, [0, bytes). */
interface RecordingRecord {
  url: string;
  id: string;
  /** The file's name (the page's title), without its extension: the container's comes once known. */
  stem: string;
  extension?: string;
  contentType?: string;
  bytes: number;
  seconds: number;
}

export interface LiveRecordingsDeps {
  store: () => Promise<Pick<BrowserStore, 'writeBlock' | 'deleteJob'>>;
  saver: Pick<JobSaver, 'start' | 'finished'>;
  storage: { get(key: string): Promise<unknown>; set(key: string, value: unknown): Promise<void> };
  /** The stream's requests (its page's cookies and Referer), reaching local addresses while it records. */
  fetchFor: (url: string) => HttpFetch;
  during: <T>(url: string, work: () => Promise<T>) => Promise<T>;
  notice: (message: string, url?: string) => Promise<unknown>;
  onChange: () => void;
  newId?: () => string;
}

/**
 * Live streams recorded in the extension (recordLiveStream, the CLI's recorder): each segment,
 * in order, is written to the store as it comes, and the recording is kept in storage after each
 * one (which is also an API call that keeps Chrome's worker awake between segments). Stop, or the
 * stream's end, saves the file through the browser's downloads and frees the stored bytes. A worker
 * that stopped mid-recording saves on its next start what was recorded until then, and says so.
 */
export class LiveRecordings {
  private readonly running = new Map<string, { record: RecordingRecord; stop: AbortController; saving: boolean }>();

  constructor(private readonly deps: LiveRecordingsDeps) {}

  /** What the popup shows of `url`'s recording, if one is under way. */
  view(url: string): StreamRecordingView | undefined {
    const recording = this.running.get(url);
    return recording && { seconds: recording.record.seconds, bytes: recording.record.bytes, saving: recording.saving };
  }

  /** Starts recording `url` (named `stem`); resolves once it is under way. */
  async start(url: string, stem: string): Promise<void> {
    if (this.running.has(url)) return;
    const record: RecordingRecord = { url, id: this.deps.newId?.() ?? crypto.randomUUID(), stem, bytes: 0, seconds: 0 };
    const recording = { record, stop: new AbortController(), saving: false };
    this.running.set(url, recording);
    await this.keep();
    this.deps.onChange();
    void this.record(recording).catch((error: unknown) => console.error('Stitch: a recording failed', error));
  }

  /** Stops `url`'s recording: what was recorded is saved. */
  stop(url: string): void {
    this.running.get(url)?.stop.abort(new Error('stopped by the user'));
  }

  /** Saves what the recordings of a worker that stopped had recorded (call once, at start). */
  async restore(): Promise<void> {
    const kept = await this.deps.storage.get(RECORDINGS_KEY);
    const records = Array.isArray(kept) ? kept.filter(isRecord) : [];
    for (const record of records.filter((r) => !this.running.has(r.url))) {
      await this.save(record, t('recordingBrokeWorker'));
    }
    await this.keep();
  }

  private async record(recording: { record: RecordingRecord; stop: AbortController; saving: boolean }): Promise<void> {
    const { record, stop } = recording;
    const store = await this.deps.store();
    let failure: string | undefined;
    let ended = false;
    try {
      const result: LiveRecording = await this.deps.during(record.url, () =>
        recordLiveStream(record.url, {
          fetch: this.deps.fetchFor(record.url),
          signal: stop.signal,
          write: async (bytes) => {
            // The store may take the buffer: a copy is given.
            await store.writeBlock(record.id, record.bytes, bytes.slice());
            record.bytes += bytes.length;
          },
          onProgress: (progress) => {
            record.extension = progress.container.extension;
            record.contentType = progress.container.contentType;
            record.seconds = progress.seconds;
            void this.keep();
            this.deps.onChange();
          },
        }),
      );
      ended = result.ended;
    } catch (error) {
      if (!stop.signal.aborted) failure = error instanceof Error ? error.message : String(error);
    }
    recording.saving = true;
    this.deps.onChange();
    await this.save(record, failure, ended);
  }

  /** Saves a recording's stored bytes as its file (nothing when none were recorded), then forgets it. */
  private async save(record: RecordingRecord, broke?: string, ended = false): Promise<void> {
    const store = await this.deps.store();
    const name = `${record.stem}.${record.extension ?? 'ts'}`;
    try {
      if (record.bytes > 0) {
        const { id } = await this.deps.saver.start({
          jobId: record.id,
          filename: name,
          size: record.bytes,
          contentType: record.contentType,
          saveAs: false,
        });
        const end = await this.deps.saver.finished(id);
        if (!end.ok) throw new Error(end.error);
        const what = t('recordingWhat', formatDuration(record.seconds), formatBytes(record.bytes));
        await this.deps.notice(
          broke ? t('noticeRecordingBroke', name, broke, what) : t(ended ? 'noticeRecordingEnded' : 'noticeRecordingSaved', name, what),
          record.url,
        );
      } else if (broke) {
        await this.deps.notice(t('noticeRecordingNothing', name, broke), record.url);
      }
    } catch (error) {
      await this.deps.notice(t('noticeRecordingNotSaved', name, error instanceof Error ? error.message : String(error)), record.url);
    } finally {
      await store.deleteJob(record.id).catch(() => {});
      this.running.delete(record.url);
      await this.keep();
      this.deps.onChange();
    }
  }

  /** Keeps the recordings under way (and being saved: a save cut by a restart is made again) in storage. */
  private keep(): Promise<void> {
    return this.deps.storage.set(
      RECORDINGS_KEY,
      [...this.running.values()].map((r) => ({ ...r.record })),
    );
  }
}

function isRecord(value: unknown): value is RecordingRecord {
  const record = value as Partial<RecordingRecord> | null;
  return (
    typeof record?.url === 'string' &&
    typeof record.id === 'string' &&
    typeof record.stem === 'string' &&
    Number.isSafeInteger(record.bytes) &&
    typeof record.seconds === 'number'
  );
}
