import { describe, expect, it } from 'vitest';
import { parseSpeedLimit, speedLimitField } from '../../../src/popup/speed-limit';

describe('parseSpeedLimit', () => {
  it('reads KB/s', () => {
    expect(parseSpeedLimit('100')).toEqual({ kind: 'limit', bytesPerSecond: 102_400 });
    expect(parseSpeedLimit(' 1.5 ')).toEqual({ kind: 'limit', bytesPerSecond: 1_536 });
    expect(parseSpeedLimit('.5e0')).toEqual({ kind: 'refused' });
    expect(parseSpeedLimit('1')).toEqual({ kind: 'limit', bytesPerSecond: 1_024 });
    expect(parseSpeedLimit('976562500')).toEqual({ kind: 'limit', bytesPerSecond: 1e12 });
  });

  it('takes an empty field as no limit', () => {
    expect(parseSpeedLimit('')).toEqual({ kind: 'none' });
    expect(parseSpeedLimit('   ')).toEqual({ kind: 'none' });
  });

  it.each(['-5', '0', '0.0', '0.5', 'abc', '5 KB', '1e20', '976562501', 'Infinity', 'NaN', '1,000', '+5', '--5', '5-'])(
    'refuses %j',
    (text) => {
      expect(parseSpeedLimit(text)).toEqual({ kind: 'refused' });
    },
  );

  it("reads the language's decimal point and Persian or Arabic digits", () => {
    expect(parseSpeedLimit('2,5', ',')).toEqual({ kind: 'limit', bytesPerSecond: 2_560 });
    expect(parseSpeedLimit('2.5', ',')).toEqual({ kind: 'limit', bytesPerSecond: 2_560 });
    expect(parseSpeedLimit('۱۰۰')).toEqual({ kind: 'limit', bytesPerSecond: 102_400 });
    expect(parseSpeedLimit('٢٫٥', '٫')).toEqual({ kind: 'limit', bytesPerSecond: 2_560 });
    expect(parseSpeedLimit('-۵')).toEqual({ kind: 'refused' });
  });

  it('writes a limit back as the field shows it', () => {
    expect(speedLimitField(undefined)).toBe('');
    expect(speedLimitField(102_400)).toBe('100');
    expect(speedLimitField(2_560, ',')).toBe('2,5');
    expect(parseSpeedLimit(speedLimitField(123_456, ','), ',')).toEqual({ kind: 'limit', bytesPerSecond: 123_453 });
  });
});
