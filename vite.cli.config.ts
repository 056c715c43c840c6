import { defineConfig } from 'vite';

// The `stitch` command: the engine plus file storage, bundled into one CommonJS file. Its dependencies
// are bundled too: resolving and reading them as separate modules cost ~25 ms of start-up, and loading
// Node's built-in modules through ES module facades another ~25 ms. scripts/build-cli-snapshot.sh then
// makes a V8 start-up snapshot of it, which the launcher (bin/stitch) runs when it fits this Node.
export default defineConfig({
  ssr: { noExternal: true },
  build: {
    ssr: 'src/cli/main.ts',
    outDir: 'dist/cli',
    emptyOutDir: true,
    target: 'node20',
    sourcemap: true,
    rollupOptions: { output: { entryFileNames: 'stitch.cjs', format: 'cjs' } },
  },
});
