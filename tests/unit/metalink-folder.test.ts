import { describe, expect, it } from 'vitest';
import { metalinkFolderName, numberedName } from '../../src/cli/metalink-folder';

describe('metalinkFolderName', () => {
  it("is the Metalink's file name without .meta4 or .metalink, from a path or a URL", () => {
    expect(metalinkFolderName('files.meta4')).toBe('files');
    expect(metalinkFolderName('/home/me/Downloads/ubuntu.iso.metalink')).toBe('ubuntu.iso');
    expect(metalinkFolderName('FILES.META4')).toBe('FILES');
    expect(metalinkFolderName('https://example.org/dl/Library.meta4')).toBe('Library');
    expect(metalinkFolderName('https://example.org/dl/my%20files.meta4')).toBe('my files');
  });

  it('is made safe like any file name', () => {
    expect(metalinkFolderName('https://example.org/..%2F..%2Fetc.meta4')).toBe('etc');
    expect(metalinkFolderName('https://example.org/.ssh.meta4')).toBe('ssh');
    expect(metalinkFolderName('https://example.org/CON.meta4')).toBe('_CON');
    expect(metalinkFolderName('https://example.org/bidi\u202egpj.meta4')).toBe('bidigpj');
    expect(metalinkFolderName('https://example.org/.meta4')).toBe('meta4');
    expect(metalinkFolderName('https://example.org/%20.meta4')).toBe('metalink');
  });
});

describe('numberedName', () => {
  const free = (taken: string[]) => (name: string) => !taken.includes(name);

  it('is the name itself when it fits', () => {
    expect(numberedName('update', '', free([]))).toBe('update');
    expect(numberedName('data', '.bin', free([]))).toBe('data.bin');
  });

  it('numbers the name, before the extension, until one fits', () => {
    expect(numberedName('update', '', free(['update']))).toBe('update (1)');
    expect(numberedName('data', '.bin', free(['data.bin', 'data (1).bin']))).toBe('data (2).bin');
    expect(numberedName('update', '', free(['update (1)']))).toBe('update');
  });
});
