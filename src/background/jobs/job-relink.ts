import { checkRelink, type DownloadStore, type RemoteFile } from '../../engine';
import type { JobViewState, ReplyOf } from '../../messages';
import type { Settings } from '../../settings/schema';
import { t } from '../../words/i18n';
import type { LocalNetworkRules } from '../network/local-network-rules';
import type { JobEntry } from '../saving/job-saving';
import { requestContext, sourceForNewLink } from './create-job';
import type { JobMeta } from './job-meta';

export interface RelinkDeps {
  store: DownloadStore;
  settings: () => Settings;
  localNetwork?: Pick<LocalNetworkRules, 'during'>;
  /** The job's state as the pages show it. */
  state(): JobViewState;
  updateMeta(change: Partial<JobMeta>): Promise<void>;
}

/** Why a new link was not taken: the new address serves another file. */
type Mismatch = Pick<ReplyOf<'relink'>, 'mismatch' | 'mismatchFacts'>;

/**
 * Gives a paused or failed job a new URL (an expired link renewed). The stored bytes are kept
 * when the new address serves the same file (see checkRelink); otherwise nothing changes and the
 * answer says why (`mismatch` in English, `mismatchFacts` for the pages), unless `startOver`: then
 * they are dropped and it downloads anew from the new address. The check and the job's requests
 * from then on carry what the new address may get (sourceForNewLink), not what the old one got.
 * Resolves undefined once the job has its new URL (the caller resumes it).
 */
export async function relinkJob(entry: JobEntry, url: string, startOver: boolean, deps: RelinkDeps): Promise<Mismatch | undefined> {
  const id = entry.job.id;
  const state = deps.state();
  if (entry.running || (state !== 'paused' && state !== 'failed') || entry.job.state.status === 'complete') {
    throw new Error(t('errorRelinkState'));
  }
  const { file, url: oldUrl } = entry.job.state;
  const source = sourceForNewLink(entry.meta, oldUrl, url, deps.settings().mirrorRules);
  const request = requestContext(source);
  let kept: RemoteFile | undefined;
  if (startOver || !file || entry.storedBytes === 0) {
    await deps.store.clearBytes(id);
    entry.storedBytes = 0;
  } else {
    const check = () =>
      checkRelink({
        store: deps.store,
        jobId: id,
        file,
        knownUrl: oldUrl,
        newUrl: url,
        options: entry.job.optionsAt(url, request),
        signal: AbortSignal.timeout(30_000),
      });
    const verdict = await (deps.localNetwork?.during(url, [], check) ?? check());
    if (!verdict.same) return { mismatch: verdict.reason, mismatchFacts: verdict.mismatch };
    kept = verdict.file;
  }
  // Before the job's state: a worker dying in between must not reopen the new address with the old page's Referer.
  await deps.updateMeta({ referrer: source.referrer, cookieOrigins: [...source.cookieOrigins] });
  await entry.job.relink(url, kept, request);
  return undefined;
}
