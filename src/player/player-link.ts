import type { PlayerPageMessage, PlayerPortMessage } from '../messages';

/** The part of `runtime.Port` the player uses (a fake in tests). */
export interface PlayerPortLike {
  postMessage(message: PlayerPageMessage): void;
  onMessage: { addListener(listener: (message: unknown) => void): void };
  onDisconnect: { addListener(listener: () => void): void };
  disconnect(): void;
}

const RETRY_MS = [200, 500, 1000, 2000];

/**
 * The player's port to the background for one job: attaches (which keeps the stored bytes
 * while the page is open), receives the job's state and stored ranges, reports the playback
 * position. Reconnects when the background restarts (Chrome stops idle workers), attaching
 * again and repeating the last position.
 */
export class PlayerLink {
  private port: PlayerPortLike | undefined;
  private attempt = 0;
  private stopped = false;
  private lastPosition: number | undefined;
  private durationSeconds: number | undefined;

  constructor(
    private readonly connect: () => PlayerPortLike,
    private readonly jobId: string,
    private readonly onState: (state: PlayerPortMessage) => void,
  ) {
    this.open();
  }

  /** The byte the player needs next (undefined: unchanged) and the media duration, if known. */
  position(position: number | undefined, durationSeconds?: number): void {
    this.lastPosition = position ?? this.lastPosition;
    this.durationSeconds = durationSeconds ?? this.durationSeconds;
    this.post({ type: 'position', position, durationSeconds });
  }

  stop(): void {
    this.stopped = true;
    this.port?.disconnect();
  }

  private open(): void {
    try {
      this.port = this.connect();
    } catch {
      return this.retry();
    }
    this.port.onMessage.addListener((message) => {
      if ((message as { type?: unknown } | null)?.type !== 'player-state') return;
      this.attempt = 0;
      this.onState(message as PlayerPortMessage);
    });
    this.port.onDisconnect.addListener(() => {
      this.port = undefined;
      this.retry();
    });
    this.post({ type: 'attach', id: this.jobId });
    if (this.lastPosition !== undefined || this.durationSeconds !== undefined) {
      this.post({ type: 'position', position: this.lastPosition, durationSeconds: this.durationSeconds });
    }
  }

  private retry(): void {
    if (this.stopped) return;
    setTimeout(() => this.open(), RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)]);
  }

  private post(message: PlayerPageMessage): void {
    try {
      this.port?.postMessage(message);
    } catch {
      // Disconnected: the reconnect repeats attach and the last position.
    }
  }
}
