import type { PlayerPageMessage, PlayerPortMessage } from '../messages';
import { openReconnectingPort, type PortLike, type ReconnectingPort } from '../pages-shared/reconnecting-port';

export type PlayerPortLike = PortLike<PlayerPageMessage>;

/**
 * The player's port to the background for one job: attaches (which keeps the stored bytes
 * while the page is open), receives the job's state and stored ranges, reports the playback
 * position. Reconnects when the background restarts (Chrome stops idle workers), attaching
 * again and repeating the last position.
 */
export class PlayerLink {
  private readonly port: ReconnectingPort<PlayerPageMessage>;
  private lastPosition: number | undefined;
  private durationSeconds: number | undefined;

  constructor(connect: () => PlayerPortLike, jobId: string, onState: (state: PlayerPortMessage) => void) {
    this.port = openReconnectingPort<PlayerPortMessage, PlayerPageMessage>(connect, {
      accepts: { 'player-state': true },
      liveOn: 'player-state',
      onMessage: onState,
      greeting: () => [
        { type: 'attach', id: jobId },
        ...(this.lastPosition !== undefined || this.durationSeconds !== undefined
          ? [{ type: 'position' as const, position: this.lastPosition, durationSeconds: this.durationSeconds }]
          : []),
      ],
    });
  }

  /** The byte the player needs next (undefined: unchanged) and the media duration, if known. */
  position(position: number | undefined, durationSeconds?: number): void {
    this.lastPosition = position ?? this.lastPosition;
    this.durationSeconds = durationSeconds ?? this.durationSeconds;
    this.port.post({ type: 'position', position, durationSeconds });
  }

  stop(): void {
    this.port.stop();
  }
}
