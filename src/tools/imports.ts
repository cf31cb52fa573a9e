// The packages a JavaScript or TypeScript source imports, by their bare specifiers: what a manifest's
// `dependencies` must name. Used by the kit's packer (src/tools/pack-kit.ts) and by
// test/runtime-deps.test.ts, which checks the service's own sources against package.json.

/**
 * Package names of `import … from`, `export … from`, `import()` and side-effect imports, comments
 * stripped; relative paths and `node:` builtins left out, deep imports cut to their package.
 */
export function importedPackages(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const pattern = /(?:(?:^|[\s}])from\s+|\bimport\s*\(\s*|^\s*import\s+)(['"])([\w@][^'"\s,]*)\1/gm;
  const specs = [...code.matchAll(pattern)].map((m) => m[2]!);
  return specs.filter((s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}
