import type { MediaSegments } from './segments';
import type { StoredBytes } from './stored-bytes';

/** Stop appending this far ahead of the playhead (Firefox throws QuotaExceededError beyond ~30 s of HD). */
const AHEAD_SECONDS = 20;
/** On QuotaExceededError, media further behind the playhead than this is removed. */
const KEEP_BEHIND_SECONDS = 5;

/** Thrown into waiting reads when a seek makes them pointless. */
class Repositioned extends Error {}

/**
 * Feeds a MediaSource from the stored bytes, in segments (WebM Clusters, in pieces as their
 * blocks are stored; MP4 fragments), as docs/platform.md says it must be done: wait for
 * updateend between operations, mode 'segments', endOfStream once at the end; keep at most
 * AHEAD_SECONDS buffered ahead of the playhead (back-pressure), and on QuotaExceededError remove
 * what lies behind and retry. A seek outside what is buffered aborts the source buffer and
 * appends from the keyframe's segment, found in the file's index (WebM Cues, MP4 mfra); a
 * backward seek past what the browser evicted (Firefox keeps ~2 s behind) re-appends from the
 * store the same way.
 */
export class MseFeeder {
  private readonly source = new MediaSource();
  private buffer: SourceBuffer | undefined;
  private offset: number;
  private seekTo: number | undefined;
  private generation = 0;
  private ended = false;
  private stopped = false;
  private lastNeed = -1;

  constructor(
    private readonly video: HTMLVideoElement,
    private readonly segments: MediaSegments,
    private readonly reader: StoredBytes,
    private readonly need: (position: number) => void,
  ) {
    this.offset = segments.firstSegment;
  }

  /** Attaches the MediaSource to the element and feeds it until stopped; rejects on a fatal error. */
  async run(): Promise<void> {
    const url = URL.createObjectURL(this.source);
    this.video.src = url;
    performance.mark('stitch:src');
    await once(this.source, 'sourceopen');
    URL.revokeObjectURL(url);
    const buffer = (this.buffer = this.source.addSourceBuffer(this.segments.mime));
    buffer.mode = 'segments';
    if (this.segments.durationSeconds) this.source.duration = this.segments.durationSeconds;
    this.video.addEventListener('seeking', () => this.seeking());
    await this.append(this.segments.init);
    while (!this.stopped) {
      try {
        await this.step();
      } catch (error) {
        if (!(error instanceof Repositioned)) throw error;
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.reader.interrupt(new Repositioned());
  }

  private async step(): Promise<void> {
    if (this.seekTo !== undefined) return this.reposition();
    if (this.ended || this.bufferedAhead() > AHEAD_SECONDS) {
      await anyOf(this.video, ['timeupdate', 'seeking']);
      return;
    }
    const generation = this.generation;
    const segment = await this.segments.segmentAt(this.offset);
    if (generation !== this.generation) return; // a seek came while it was read
    if (!segment) {
      await this.idle();
      if (this.source.readyState === 'open') this.source.endOfStream();
      this.ended = true;
      return;
    }
    await this.append(segment.bytes);
    this.offset = segment.next;
    this.tellNeed(this.reader.nextGap(this.offset));
  }

  /** The element seeks: outside what is buffered, appending must restart near the target. */
  private seeking(): void {
    const time = this.video.currentTime;
    if (this.isBuffered(time)) return;
    this.seekTo = time;
    this.generation++;
    this.reader.interrupt(new Repositioned());
  }

  private async reposition(): Promise<void> {
    const target = this.seekTo!;
    const generation = this.generation;
    await this.idle();
    if (this.source.readyState === 'open') this.buffer!.abort();
    this.reader.resume();
    const offset = await this.segments.offsetFor(target);
    if (generation !== this.generation) return; // yet another seek meanwhile
    this.seekTo = undefined;
    // Without an index, appending goes on in order and reaches the target in time.
    this.offset = offset ?? this.segments.restartAt?.(this.offset) ?? this.offset;
    this.ended = false;
    this.tellNeed(this.reader.nextGap(this.offset));
  }

  private async append(bytes: Uint8Array): Promise<void> {
    for (;;) {
      await this.idle();
      try {
        this.buffer!.appendBuffer(bytes as Uint8Array<ArrayBuffer>);
        await once(this.buffer!, 'updateend');
        return;
      } catch (error) {
        if ((error as { name?: string }).name !== 'QuotaExceededError') throw error;
        // Full: drop what was played, or wait for playback to make room.
        const behind = this.video.currentTime - KEEP_BEHIND_SECONDS;
        const start = this.buffer!.buffered.length > 0 ? this.buffer!.buffered.start(0) : behind;
        if (behind > start) {
          this.buffer!.remove(start, behind);
          await once(this.buffer!, 'updateend');
        } else {
          await anyOf(this.video, ['timeupdate', 'seeking']);
        }
      }
    }
  }

  private idle(): Promise<void> {
    return this.buffer?.updating ? once(this.buffer, 'updateend') : Promise.resolve();
  }

  private bufferedAhead(): number {
    const time = this.video.currentTime;
    const ranges = this.video.buffered;
    for (let i = 0; i < ranges.length; i++) if (ranges.start(i) <= time + 0.1 && time < ranges.end(i)) return ranges.end(i) - time;
    return 0;
  }

  private isBuffered(time: number): boolean {
    const ranges = this.video.buffered;
    for (let i = 0; i < ranges.length; i++) if (ranges.start(i) <= time && time < ranges.end(i) - 0.5) return true;
    return false;
  }

  private tellNeed(position: number): void {
    if (position === this.lastNeed || position >= this.reader.size) return;
    this.lastNeed = position;
    this.need(position);
  }
}

function once(target: EventTarget, type: string): Promise<void> {
  return new Promise((resolve) => target.addEventListener(type, () => resolve(), { once: true }));
}

function anyOf(target: EventTarget, types: string[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const type of types) target.removeEventListener(type, done);
      resolve();
    };
    for (const type of types) target.addEventListener(type, done);
  });
}
