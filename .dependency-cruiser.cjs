/**
 * The direction of hermod's dependencies (checked by `npm run lint`):
 * bin/ is the composition root and may import anything; gateway/, core/ and
 * workers/ depend on lib/, proto/ and core's ports and domain; lib/ and proto/
 * import nothing above them; core never imports workers or the gateway; the
 * gateway and the workers never reach into each other or into core's
 * internals. Tests and test kits may wire anything (they stand in for bin/).
 */
const TESTS = '(\\.test\\.ts$|-test-kit\\.ts$|-contract\\.ts$|-suite\\.ts$|^test/|^bench/)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'lib-imports-nothing-above',
      comment: 'lib/ is the bottom layer: it may not import bin/, gateway/, core/ or workers/.',
      severity: 'error',
      from: { path: '^lib/', pathNot: TESTS },
      to: { path: '^(bin|gateway|core|workers)/' },
    },
    {
      name: 'proto-imports-nothing-above',
      severity: 'error',
      from: { path: '^proto/', pathNot: TESTS },
      to: { path: '^(bin|gateway|core|workers)/' },
    },
    {
      name: 'core-never-imports-workers-or-gateway',
      severity: 'error',
      from: { path: '^core/', pathNot: TESTS },
      to: { path: '^(workers|gateway|bin)/' },
    },
    {
      name: 'gateway-never-imports-workers',
      severity: 'error',
      from: { path: '^gateway/', pathNot: TESTS },
      to: { path: '^(workers|bin)/' },
    },
    {
      name: 'gateway-uses-only-core-ports-and-domain',
      comment: 'The gateway talks to core over gRPC; of core it may use only the ports and the domain.',
      severity: 'error',
      from: { path: '^gateway/', pathNot: TESTS },
      to: { path: '^core/', pathNot: '^core/(ports|domain)/' },
    },
    {
      name: 'workers-never-import-gateway',
      severity: 'error',
      from: { path: '^workers/', pathNot: TESTS },
      to: { path: '^(gateway|bin)/' },
    },
    {
      name: 'workers-use-only-core-ports-and-domain',
      comment: 'Workers meet core on the bus; of core they may use only the ports (the bus contract) and the domain.',
      severity: 'error',
      from: { path: '^workers/', pathNot: TESTS },
      to: { path: '^core/', pathNot: '^core/(ports|domain)/' },
    },
    {
      name: 'ports-and-domain-stand-alone',
      comment:
        "Core's ports and domain are what the gateway and the workers may use of core, so they import only each other and lib/: " +
        'through them nothing else of core reaches the other roles.',
      severity: 'error',
      from: { path: '^core/(ports|domain)/', pathNot: TESTS },
      to: { path: '^(core|gateway|workers|bin)/', pathNot: '^core/(ports|domain)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { pathNot: TESTS },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^node_modules/|^proto/gen/)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
