import type { Aria2Row, Aria2Trouble } from '../../messages';
import type { Aria2Status } from './rpc';

// aria2's exit codes (its manual, "EXIT STATUS").
const PROBLEMS: Record<string, Aria2Trouble> = {
  '9': 'disk-full',
  '32': 'checksum',
  '3': 'not-found',
  '22': 'refused-by-server',
  '24': 'refused-by-server',
  '2': 'network',
  '6': 'network',
  '19': 'network',
  '13': 'name-taken',
};

const STATES: Record<Aria2Status['status'], Aria2Row['state']> = {
  active: 'running',
  waiting: 'waiting',
  paused: 'paused',
  error: 'failed',
  complete: 'done',
  removed: 'removed',
};

/** The row of one download from aria2's tellStatus. */
export function aria2Row(status: Aria2Status): Aria2Row {
  const path = status.files?.[0]?.path ?? '';
  const url = status.files?.[0]?.uris?.[0]?.uri ?? '';
  const name = path.split('/').pop() || url.split('/').pop()?.split('?')[0] || status.gid;
  const row: Aria2Row = {
    gid: status.gid,
    state: STATES[status.status],
    name,
    url,
    totalBytes: Number(status.totalLength) || 0,
    doneBytes: Number(status.completedLength) || 0,
    bytesPerSecond: Number(status.downloadSpeed) || 0,
  };
  if (status.status === 'error') row.problem = PROBLEMS[status.errorCode ?? ''] ?? 'other';
  return row;
}
