import type { HttpFetch } from './fetch-port';
import { formatBytes } from '../format-bytes';

/** How much of a small document (a Metalink file) is read, and for how long. */
export interface TextLimits {
  maxBytes: number;
  /** For the whole exchange: headers and body. */
  timeoutMs: number;
}

/**
 * Fetches a small text document, reading at most `maxBytes` of it for at most `timeoutMs`: a
 * server that sends an endless body (chunked, no length) or drips it forever is cut off instead
 * of growing memory or holding the download. `what` names the document in errors.
 */
export async function fetchBoundedText(
  url: string,
  what: string,
  fetcher: HttpFetch,
  limits: TextLimits,
  signal?: AbortSignal,
): Promise<{ text: string; url: string }> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const tooLarge = () => new Error(`${what} is larger than ${formatBytes(limits.maxBytes)}`);
  try {
    const response = await fetcher(url, { signal: combined, cache: 'no-store' });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`${what} answered ${response.status}`);
    }
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > limits.maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    const decoder = new TextDecoder();
    let text = '';
    let bytes = 0;
    const reader = response.body?.getReader();
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      bytes += chunk.value.length;
      if (bytes > limits.maxBytes) {
        await reader!.cancel().catch(() => {});
        throw tooLarge();
      }
      text += decoder.decode(chunk.value, { stream: true });
    }
    return { text: text + decoder.decode(), url: response.url || url };
  } catch (error) {
    if (timeout.aborted && !signal?.aborted) {
      const limit = limits.timeoutMs >= 1000 ? `${Math.round(limits.timeoutMs / 1000)} s` : `${limits.timeoutMs} ms`;
      throw new Error(`${what} did not arrive within ${limit}`, { cause: error });
    }
    throw error;
  }
}
