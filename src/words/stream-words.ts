import type { RefusalReason } from '../engine/streams/hls-playlist';
import type { MessageKey } from './i18n';

/** Why a video stream cannot be downloaded, in the user's words: the popup's rows and the background's errors. */
export const REFUSAL_WORDS: Record<RefusalReason, MessageKey> = {
  drm: 'streamRefusedDrm',
  live: 'streamRefusedLive',
  'live-dash': 'streamRefusedLiveDash',
  'separate-audio': 'streamRefusedSeparateAudio',
  'not-a-playlist': 'streamRefusedNotPlaylist',
  empty: 'streamRefusedEmpty',
  site: 'streamRefusedSite',
  'unsafe-source': 'streamRefusedUnsafeSource',
  'too-large': 'streamRefusedTooLarge',
};
