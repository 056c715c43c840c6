import type { MirrorTestResult } from '../../messages';
import { formatCount, t } from '../../words/i18n';
import { mirrorUrlsFor } from '../../settings/mirror-rules';
import { normalizeMirrorRule, type MirrorRule } from '../../settings/schema';
import type { LocalNetworkRules } from '../network/local-network-rules';
import { probeUrl, type ProbeResult } from '../takeover/probe';

type Probe = (url: string, credentials: RequestCredentials) => Promise<ProbeResult>;

/**
 * The options page's "test" button: asks the sample URL and each mirror's rewrite of it for the
 * first byte and compares sizes. A mirror passes when it serves the same size. The mirrors are
 * asked as downloads will ask them: with cookies only if the rule sends them, and on a local
 * address only if the sample URL is on one too (`localNetwork` lets them through meanwhile).
 */
export async function testMirrorRule(
  rule: MirrorRule,
  sampleUrl: string,
  probe: Probe = (url, credentials) => probeUrl(url, { credentials }),
  localNetwork?: Pick<LocalNetworkRules, 'during'>,
): Promise<{ original: MirrorTestResult; mirrors: MirrorTestResult[] }> {
  const normal = normalizeMirrorRule(rule);
  if (!normal) throw new Error(t('mirrorTestInvalidRule'));
  const mirrorUrls = mirrorUrlsFor(sampleUrl, [normal]);
  if (mirrorUrls.length === 0) throw new Error(t('mirrorTestNoMatch', normal.pattern));
  const mirrorCredentials = normal.sendCookies ? 'include' : 'omit';
  const probeAll = () => Promise.all([probe(sampleUrl, 'include'), ...mirrorUrls.map((url) => probe(url, mirrorCredentials))]);
  const [original, ...answers] = await (localNetwork?.during(sampleUrl, mirrorUrls, probeAll) ?? probeAll());
  const originalResult = describe(sampleUrl, original, undefined);
  return {
    original: originalResult,
    mirrors: mirrorUrls.map((url, i) => describe(url, answers[i]!, originalResult.ok ? original.size : undefined)),
  };
}

/** One answer in the user's words (the options page shows them as they are); the status code alone, not its English text. */
function describe(url: string, probe: ProbeResult, expectedSize: number | undefined): MirrorTestResult {
  if (probe.status === 0) return { url, ok: false, message: t('mirrorTestNoAnswer') };
  if (probe.status !== 200 && probe.status !== 206) return { url, ok: false, message: t('mirrorTestStatus', String(probe.status)) };
  if (probe.size === undefined) return { url, ok: false, message: t('mirrorTestNoSize') };
  const size = formatCount(probe.size);
  if (expectedSize !== undefined && probe.size !== expectedSize) {
    return { url, ok: false, size: probe.size, message: t('mirrorTestOtherSize', size, formatCount(expectedSize)) };
  }
  const message = t(expectedSize === undefined ? 'mirrorTestSize' : 'mirrorTestSameSize', size);
  return { url, ok: true, size: probe.size, message: probe.status === 206 ? message : `${message} ${t('mirrorTestNoRanges')}` };
}
