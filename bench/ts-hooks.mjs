// Module hooks for register.mjs: resolve `./x` to `./x.ts`, and strip types from `.ts` files.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transformWithOxc } from 'vite';

export async function resolve(specifier, context, next) {
  const relative = specifier.startsWith('.') && context.parentURL?.endsWith('.ts');
  if (relative && !/\.[cm]?[jt]s$/.test(specifier)) {
    try {
      return await next(`${specifier}.ts`, context);
    } catch {
      // not a .ts file: let Node report it
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const path = fileURLToPath(url);
  const { code, map } = await transformWithOxc(await readFile(path, 'utf8'), path, { sourcemap: true });
  const inline = map ? `\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}` : '';
  return { format: 'module', source: code + inline, shortCircuit: true };
}
