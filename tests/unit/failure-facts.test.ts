import { describe, expect, it } from 'vitest';
import { DownloadError } from '../../src/engine/errors';
import { StallError } from '../../src/engine/http/exchange';
import { failureFacts, gaveUp } from '../../src/engine/transfer-host';

describe('failureFacts', () => {
  it('keeps what a server answered as its status, without its words', () => {
    const busy = new DownloadError('http-status', 'the server answered 503 Service Unavailable', true, undefined, 503);
    expect(failureFacts(busy)).toEqual({ code: 'http-status', status: 503 });
  });

  it('tells a refused connection from a reset when the platform says (Node), and says only "not reached" when it does not (a browser)', () => {
    const node = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
    expect(failureFacts(node('ECONNREFUSED'))).toEqual({ code: 'network', network: 'refused' });
    expect(failureFacts(node('ECONNRESET'))).toEqual({ code: 'network', network: 'reset' });
    expect(failureFacts(new TypeError('Failed to fetch'))).toEqual({ code: 'network', network: 'unreached' });
    expect(failureFacts(new StallError(20_000, false))).toEqual({ code: 'network', network: 'silent' });
  });

  it('gives up with the last failure’s facts and the number of attempts', () => {
    const busy = new DownloadError('http-status', 'the server answered 503 Service Unavailable', true, undefined, 503);
    const given = gaveUp(8, busy);
    expect(given.facts).toEqual({ code: 'http-status', status: 503, attempts: 8 });
    expect(given.message).toBe('gave up after 8 attempts that received nothing; last: the server answered 503 Service Unavailable');
  });
});
