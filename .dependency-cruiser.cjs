/**
 * The layer order (lowest first), checked by `npm run check:layers` as part of `npm test`.
 * A folder of src/ may import only folders of a lower layer; folders that share a layer do not
 * import each other. The entry files at the top of src/ (index.ts, bench.ts, ...) sit above
 * every layer and nothing imports them. Tests may reach across layers (an end-to-end test of
 * the runtime drives the mock tools), so they are left out. See DESIGN.md, "Layers".
 */
const LAYERS = [
  ['core'],
  ['io', 'net', 'stats', 'predict'],
  ['store'],
  ['record'],
  ['runtime'],
  ['llm'],
  ['faults'],
  ['tools'],
  ['trajectory'],
  ['annotate'],
  ['dataset'],
  ['failbench'],
  ['monitor'],
  ['integrations'],
  ['cli'],
];

const TESTS = '\\.test\\.ts$|\\.test-helpers\\.ts$';
const folders = (names) => `^src/(${names.join('|')})/`;

const layerRules = LAYERS.flatMap((layer, rank) => {
  const above = LAYERS.slice(rank + 1).flat();
  return layer.map((name) => {
    const forbidden = [...above, ...layer.filter((peer) => peer !== name)];
    return {
      name: `layer-${name}`,
      comment: `${name} may import only lower layers (${LAYERS.slice(0, rank).flat().join(', ') || 'none'})`,
      severity: 'error',
      from: { path: `^src/${name}/` },
      to: forbidden.length === 0 ? { path: '^$' } : { path: folders(forbidden) },
    };
  });
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-import-of-entries',
      comment: 'the entry files at the top of src/ are for users; modules import what they need directly',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'no-folder-cycle',
      comment: 'folders of src/ must not import each other in a cycle',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    exclude: { path: TESTS },
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
