import { defineConfig } from 'vite';

// The `stitch` command: the engine plus file storage, bundled into one Node ESM file. Its
// dependencies are bundled too: resolving and reading them as separate modules cost ~25 ms of start-up.
export default defineConfig({
  ssr: { noExternal: true },
  build: {
    ssr: 'src/cli/main.ts',
    outDir: 'dist/cli',
    emptyOutDir: true,
    target: 'node20',
    sourcemap: true,
    rollupOptions: { output: { entryFileNames: 'stitch.js' } },
  },
});
