import type { MirrorTestResult } from '../messages';
import { mirrorUrlsFor } from '../settings/mirror-rules';
import { normalizeMirrorRule, type MirrorRule } from '../settings/schema';
import type { LocalNetworkRules } from './local-network-rules';
import { probeUrl, type ProbeResult } from './probe';

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
  if (!normal) throw new Error('the rule is not valid; fix the pattern and mirror prefixes first');
  const mirrorUrls = mirrorUrlsFor(sampleUrl, [normal]);
  if (mirrorUrls.length === 0) throw new Error(`the sample URL does not match the pattern ${normal.pattern}`);
  const mirrorCredentials = normal.sendCookies ? 'include' : 'omit';
  const probeAll = () => Promise.all([probe(sampleUrl, 'include'), ...mirrorUrls.map((url) => probe(url, mirrorCredentials))]);
  const [original, ...answers] = await (localNetwork?.during(sampleUrl, mirrorUrls, probeAll) ?? probeAll());
  const originalResult = describe(sampleUrl, original, undefined);
  return {
    original: originalResult,
    mirrors: mirrorUrls.map((url, i) => describe(url, answers[i]!, originalResult.ok ? original.size : undefined)),
  };
}

function describe(url: string, probe: ProbeResult, expectedSize: number | undefined): MirrorTestResult {
  if (probe.status === 0) return { url, ok: false, message: `no answer: ${probe.error ?? 'network error'}` };
  if (probe.status !== 200 && probe.status !== 206) return { url, ok: false, message: `${probe.status} ${probe.statusText}`.trim() };
  if (probe.size === undefined) return { url, ok: false, message: 'answered, but did not say the file size' };
  if (expectedSize !== undefined && probe.size !== expectedSize) {
    return { url, ok: false, size: probe.size, message: `size differs: ${probe.size} bytes instead of ${expectedSize}` };
  }
  const ranges = probe.status === 206 ? '' : ' (but no range support)';
  return { url, ok: true, size: probe.size, message: `${expectedSize === undefined ? 'size' : 'same size'}: ${probe.size} bytes${ranges}` };
}
