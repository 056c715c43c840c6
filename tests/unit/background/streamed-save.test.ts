import { describe, expect, it } from 'vitest';
import { attachmentDisposition } from '../../../src/background/saving/content-disposition';
import { HOLD_BACK, sendableEnd } from '../../../src/background/saving/save-hold-back';

describe('attachmentDisposition', () => {
  it('gives a plain ASCII name as a quoted filename only', () => {
    expect(attachmentDisposition('report-2026.pdf')).toBe('attachment; filename="report-2026.pdf"');
  });

  it('adds the exact name as UTF-8 filename* (RFC 8187) beside an ASCII fallback', () => {
    expect(attachmentDisposition('Bericht über März.bin')).toBe(
      `attachment; filename="Bericht uber Marz.bin"; filename*=UTF-8''Bericht%20%C3%BCber%20M%C3%A4rz.bin`,
    );
  });

  it('keeps quotes, backslashes and controls out of the quoted fallback', () => {
    const header = attachmentDisposition('a "b"\\c.txt');
    expect(header).toBe(`attachment; filename="a _b__c.txt"; filename*=UTF-8''a%20%22b%22%5Cc.txt`);
  });

  it('percent-encodes what RFC 8187 does not allow as is, including characters outside the BMP', () => {
    const header = attachmentDisposition('😀;%.bin');
    expect(header).toContain(`filename*=UTF-8''%F0%9F%98%80%3B%25.bin`);
    expect(decodeURIComponent(/filename\*=UTF-8''(.*)$/.exec(header)![1]!)).toBe('😀;%.bin');
  });
});

describe('sendableEnd', () => {
  it('holds the last bytes back until the job is verified', () => {
    expect(sendableEnd(100 * HOLD_BACK, false)).toBe(99 * HOLD_BACK);
    expect(sendableEnd(100 * HOLD_BACK, true)).toBe(100 * HOLD_BACK);
  });

  it('holds a small file back whole, and at least one byte whatever the setting', () => {
    expect(sendableEnd(1000, false)).toBe(0);
    expect(sendableEnd(1000, false, 0)).toBe(999);
    expect(sendableEnd(0, true)).toBe(0);
  });
});
