import type { OpfsDirectory } from '../../../src/storage/opfs-chunks';

const notFound = (name: string) => new DOMException(`${name} was not found`, 'NotFoundError');

/** An origin private directory in memory: files, their snapshots (File) and sync access handles. */
export class FakeOpfs implements OpfsDirectory {
  readonly files = new Map<string, Uint8Array>();

  async getFileHandle(name: string, options: { create?: boolean } = {}): Promise<FileSystemFileHandle> {
    if (!this.files.has(name)) {
      if (!options.create) throw notFound(name);
      this.files.set(name, new Uint8Array(0));
    }
    const files = this.files;
    const handle = {
      kind: 'file',
      name,
      getFile: async () => {
        const bytes = files.get(name);
        if (!bytes) throw notFound(name);
        return new File([bytes.slice()], name);
      },
      createSyncAccessHandle: async () => ({
        write(data: Uint8Array, { at }: { at: number }) {
          const have = files.get(name) ?? new Uint8Array(0);
          const grown = new Uint8Array(Math.max(have.length, at + data.byteLength));
          grown.set(have);
          grown.set(data, at);
          files.set(name, grown);
          return data.byteLength;
        },
        flush() {},
        close() {},
      }),
    };
    return handle as unknown as FileSystemFileHandle;
  }

  async removeEntry(name: string): Promise<void> {
    if (!this.files.delete(name)) throw notFound(name);
  }

  async *keys(): AsyncIterable<string> {
    yield* [...this.files.keys()];
  }

  /** Every file's name and size, sorted by name. */
  listing(): [string, number][] {
    return [...this.files].map(([name, bytes]): [string, number] => [name, bytes.length]).sort(([a], [b]) => a.localeCompare(b));
  }
}
