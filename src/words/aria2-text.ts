import type { Aria2Trouble } from '../messages';
import { t, type MessageKey } from './i18n';

const WORDS: Record<Aria2Trouble, MessageKey> = {
  'no-endpoint': 'aria2NoEndpoint',
  'endpoint-refused': 'aria2EndpointRefused',
  unreachable: 'aria2Unreachable',
  unauthorized: 'aria2Unauthorized',
  'not-aria2': 'aria2NotAria2',
  refused: 'aria2Refused',
  'disk-full': 'aria2DiskFull',
  checksum: 'aria2Checksum',
  'not-found': 'aria2NotFound',
  'refused-by-server': 'aria2RefusedByServer',
  network: 'aria2Network',
  'name-taken': 'aria2NameTaken',
  other: 'aria2Other',
};

/** What went wrong with aria2, or with a download in it, in the page's language and what to do. */
export function aria2ProblemText(problem: Aria2Trouble): string {
  return t(WORDS[problem]);
}
