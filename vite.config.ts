import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';

const src = resolve(import.meta.dirname, 'src');

/** Emits the one manifest both browsers load, with the package version. */
function manifest(): Plugin {
  return {
    name: 'stitch-manifest',
    generateBundle() {
      const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, 'package.json'), 'utf8')) as { version: string };
      const json = JSON.parse(readFileSync(resolve(import.meta.dirname, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      json.version = pkg.version;
      this.emitFile({ type: 'asset', fileName: 'manifest.json', source: `${JSON.stringify(json, null, 2)}\n` });
    },
  };
}

// The extension: one background module for Chrome's service worker and Firefox's event page,
// plus one HTML page per UI, all at the root of dist/extension.
export default defineConfig({
  root: src,
  publicDir: resolve(import.meta.dirname, 'public'),
  base: './',
  plugins: [manifest()],
  build: {
    outDir: resolve(import.meta.dirname, 'dist/extension'),
    emptyOutDir: true,
    target: ['chrome116', 'firefox128'],
    sourcemap: true,
    modulePreload: false,
    rollupOptions: {
      input: {
        background: resolve(src, 'background/main.ts'),
        // Firefox: the worker that writes downloads into the origin private file system.
        'opfs-worker': resolve(src, 'storage/opfs-worker.ts'),
        // Chrome only: makes blob URLs for saving (the worker cannot).
        offscreen: resolve(src, 'offscreen/offscreen.html'),
        // The toolbar popup and the options page (manifest: popup.html, options.html).
        popup: resolve(src, 'popup.html'),
        options: resolve(src, 'options.html'),
        // Plays a job while it downloads (player.html?id=… or ?url=…).
        player: resolve(src, 'player.html'),
      },
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: 'chunks/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
});
