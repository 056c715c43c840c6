/** What the MSE feeder needs of a container (WebM, fragmented MP4, plain MP4 remuxed), independent of its format. */
import { t, type MessageKey } from '../../words/i18n';

/**
 * Samples per MP4 fragment appended, per track (video at 24–30 fps: about 0.5 s; AAC: about 0.3 s),
 * plain MP4 remuxed (plain-mp4.ts) or a fragmented one's video cut smaller (mp4.ts). A fragment is
 * appended once all its samples are stored, so the one holding a seek's target holds back the seek
 * by its length at the download's rate: 12 against 50 played Firefox's seeks on ffmpeg's MP4s
 * 0.4–1.7 s sooner, and on its fragmented MP4 0.4–1.0 s (docs/playback.md).
 */
export const FRAGMENT_SAMPLES = 12;

/** The job's stored bytes, as far as a container parser needs them. */
export interface StoredReader {
  readonly size: number;
  /** Waits until [start, end) is stored (end clamped to the size), then returns those bytes. */
  read(start: number, end: number): Promise<Uint8Array>;
  /** Waits until byte `start` is stored, then returns the stored bytes from it on, up to `end`: what can be parsed now. */
  readAvailable(start: number, end: number): Promise<Uint8Array>;
}

export interface MediaSegments {
  /** For MediaSource.isTypeSupported / addSourceBuffer: `video/webm; codecs="vp8,opus"`. */
  readonly mime: string;
  /** The initialization segment (WebM: everything before the first Cluster; MP4: ftyp + moov). */
  readonly init: Uint8Array;
  /** Set as the MediaSource's duration (fragmented MP4 may have none in its header). */
  readonly durationSeconds: number | undefined;
  /** Byte offset of the first media segment. */
  readonly firstSegment: number;
  /**
   * The bytes to append from `offset` (a WebM Cluster or the piece of one stored so far; moof +
   * mdat), and the offset of what follows; undefined past the last.
   */
  segmentAt(offset: number): Promise<{ bytes: Uint8Array; next: number } | undefined>;
  /**
   * Where appending starts again after the source buffer was reset (a seek without an index):
   * `offset` inside a WebM Cluster goes back to the Cluster's start; by default `offset` itself.
   */
  restartAt?(offset: number): number;
  /** Offset of the segment to append from to play at `seconds` (from the index), or undefined without one. */
  offsetFor(seconds: number): Promise<number | undefined>;
}

/**
 * Why a file cannot play while it downloads, as the player says it: its container or type is
 * not one MSE takes, its codec, its layout (the index or the first media too far, sizes left
 * open as a live stream's), or it cannot be read at all.
 */
export type UnsupportedKind = 'format' | 'type' | 'codec' | 'layout' | 'unreadable';

/** A container the player cannot feed to MSE: `kind` for the page's words, the message (English) for logs. */
export class Unsupported extends Error {
  override readonly name = 'Unsupported';
  constructor(
    readonly kind: UnsupportedKind,
    message: string,
    /** The MIME type or codec it names, for 'type' and 'codec'. */
    readonly what = '',
  ) {
    super(message);
  }
}

const WHY: Record<UnsupportedKind, MessageKey> = {
  format: 'playerWhyFormat',
  type: 'playerWhyType',
  codec: 'playerWhyCodec',
  layout: 'playerWhyLayout',
  unreadable: 'playerWhyUnreadable',
};

/** Why the file cannot play while it downloads, in the page's words. */
export function unsupportedText(error: Unsupported): string {
  return t(WHY[error.kind], error.what);
}
