import { defineConfig } from 'vite';

// The `stitch` command: the engine plus file storage, bundled into one Node ESM file.
export default defineConfig({
  build: {
    ssr: 'src/cli/main.ts',
    outDir: 'dist/cli',
    emptyOutDir: true,
    target: 'node20',
    sourcemap: true,
    rollupOptions: { output: { entryFileNames: 'stitch.js' } },
  },
});
