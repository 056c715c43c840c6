// The architecture's import zones as one ESLint rule (issue 29). A zone names the folders its files live in and the
// folders they may not import (`forbid`), or the only ones they may (`only`). Relative specifiers are resolved against
// the importing file, so the rule needs no module resolver: a folder prefix decides, with or without `.ts`.
import path from 'node:path';

/** The folder-relative path of a specifier, `src/engine/x` (no extension needed), or undefined for a package. */
function resolveSpecifier(root, filename, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  return path
    .relative(root, path.resolve(path.dirname(filename), specifier))
    .split(path.sep)
    .join('/');
}

const inside = (file, folder) => `${file}/`.startsWith(folder.endsWith('/') ? folder : `${folder}/`);

/** @type {import('eslint').Rule.RuleModule} */
export const importZones = {
  meta: {
    type: 'problem',
    docs: { description: 'Folders import only what their zone allows (the layout in the README).' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          zones: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                from: { type: 'array', items: { type: 'string' } },
                forbid: { type: 'array', items: { type: 'string' } },
                only: { type: 'array', items: { type: 'string' } },
                message: { type: 'string' },
              },
              required: ['from', 'message'],
              additionalProperties: false,
            },
          },
        },
        required: ['root', 'zones'],
        additionalProperties: false,
      },
    ],
    messages: { crossing: "'{{specifier}}' ({{target}}) crosses a zone: {{message}}" },
  },
  create(context) {
    const [{ root, zones }] = context.options;
    const file = path.relative(root, context.filename).split(path.sep).join('/');
    const own = zones.filter((zone) => zone.from.some((folder) => inside(file, folder)));
    if (own.length === 0) return {};

    function check(source) {
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      const target = resolveSpecifier(root, context.filename, source.value);
      if (target === undefined) return;
      for (const zone of own) {
        const refused =
          (zone.forbid ?? []).some((folder) => inside(target, folder)) ||
          (zone.only !== undefined && !zone.only.some((folder) => inside(target, folder)));
        if (refused) {
          context.report({
            node: source,
            messageId: 'crossing',
            data: { specifier: source.value, target, message: zone.message },
          });
        }
      }
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.source),
    };
  },
};
