import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/cli/args';

const url = 'https://example.org/big.iso';

describe('stitch get --max-connections', () => {
  it('passes the most connections per server on to the engine', () => {
    expect(parseCommand(['get', url, '--max-connections', '1'])).toMatchObject({ maxConnectionsPerServer: 1 });
    expect(parseCommand(['get', url, '--max-connections', '64'])).toMatchObject({ maxConnectionsPerServer: 64 });
    expect(parseCommand(['get', url])).toMatchObject({ maxConnectionsPerServer: undefined });
  });

  it('refuses anything but a whole number from 1 to 64, saying what it needs', () => {
    for (const bad of ['0', '65', '2.5', 'many', '']) {
      expect(() => parseCommand(['get', url, '--max-connections', bad])).toThrow(
        `--max-connections needs a whole number from 1 to 64, not "${bad}"`,
      );
    }
  });
});

describe('stitch get -d', () => {
  it('passes the folder to save in, long or short, and nothing without it', () => {
    expect(parseCommand(['get', url, '-d', 'downloads'])).toMatchObject({ dir: 'downloads' });
    expect(parseCommand(['get', 'files.meta4', '--dir', '/tmp/files'])).toMatchObject({ dir: '/tmp/files' });
    expect(parseCommand(['get', url])).toMatchObject({ dir: undefined });
  });
});
