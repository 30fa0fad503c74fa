/**
 * The dependency rule of the layout (docs/architecture.md): the folders of
 * shared/ are layers, and a module imports only its own folder, core/, and the folders MAY_IMPORT
 * lists for its folder. Read top to bottom it is the pipeline's shape:
 *   functions → runtime → http, amp → heartbeat → pipeline → ack → escalation → metrics → routing
 *   → channels → store → render → chart → enrich → prometheus, alertmanager, alert-state → core
 * `npm test` runs it (`npm run lint:deps`): a cycle, an upward import, or development-only code
 * reaching the product fails the build.
 * @see https://github.com/sverweij/dependency-cruiser/blob/main/doc/rules-reference.md
 */
const MAY_IMPORT = {
  runtime: ['http', 'heartbeat', 'pipeline', 'ack', 'escalation', 'metrics', 'routing', 'channels', 'alert-state', 'store', 'render', 'chart', 'enrich', 'prometheus', 'alertmanager'],
  http: ['heartbeat', 'pipeline', 'ack', 'escalation', 'metrics', 'chart', 'alertmanager'],
  // AMP via SNS: an inbound source beside the webhook route, converting into the webhook's shape.
  amp: ['heartbeat', 'pipeline', 'metrics', 'alertmanager'],
  heartbeat: ['pipeline', 'metrics', 'store', 'render', 'enrich', 'alertmanager'],
  pipeline: ['ack', 'metrics', 'routing', 'channels', 'alert-state', 'store', 'render', 'chart', 'enrich', 'alertmanager'],
  ack: ['escalation', 'channels', 'store', 'render', 'chart', 'enrich', 'alertmanager'],
  escalation: ['metrics', 'channels', 'store', 'render', 'enrich', 'alert-state', 'alertmanager'],
  metrics: ['channels', 'store'],
  routing: ['channels', 'render', 'alertmanager'],
  channels: ['store', 'render', 'enrich', 'alertmanager'],
  store: ['render', 'enrich', 'alertmanager'],
  render: ['enrich', 'alertmanager'],
  // Chart images: the signed URL (pure), the GET route, and the renderer loaded lazily.
  chart: ['enrich', 'prometheus', 'alertmanager'],
  enrich: ['prometheus', 'alertmanager'],
  'alert-state': ['prometheus', 'alertmanager'],
  prometheus: [],
  alertmanager: [],
  core: [],
};

const layerRules = Object.entries(MAY_IMPORT).map(([folder, allowed]) => ({
  name: `layer-${folder}`,
  comment: `shared/${folder}/ may import only itself, core/${allowed.length ? ` and ${allowed.join(', ')}` : ''} (the layer order of .dependency-cruiser.cjs).`,
  severity: 'error',
  from: { path: `^shared/${folder}/` },
  to: { path: '^shared/', pathNot: [`^shared/(${[folder, 'core', ...allowed].join('|')})/`] },
}));

/** The embedded dynalite of `npm start` and the tests: the one product module that may use a devDependency (dynalite). */
const LOCAL_ADAPTER = '^shared/store/local-dynamodb\\.ts$';

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-unknown-folder',
      comment: 'Every product module lives in a folder of the layer map (loose files in shared/ hide where things belong; a new folder needs its place in MAY_IMPORT).',
      severity: 'error',
      from: { path: '^(shared|functions)/' },
      to: { path: '^shared/', pathNot: [`^shared/(${Object.keys(MAY_IMPORT).join('|')})/`] },
    },
    {
      name: 'no-circular',
      comment: 'No module cycles (a folder cycle is also caught by the layer rules).',
      severity: 'error',
      from: { path: '^(shared|functions)/' },
      to: { circular: true },
    },
    {
      name: 'nothing-imports-functions',
      comment: 'functions/ are the entry points: wiring only, imported by nothing in the product.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^functions/' },
    },
    {
      name: 'product-not-tests',
      comment: 'The product never imports tests, benchmarks or infrastructure code.',
      severity: 'error',
      from: { path: '^(shared|functions)/' },
      to: { path: '^(test|bench|infra|scripts)/' },
    },
    {
      name: 'no-dev-dependencies-in-product',
      comment: 'devDependencies are not in the Lambda bundle; only the local adapter (npm start) may use one (dynalite).',
      severity: 'error',
      from: { path: '^(shared|functions)/', pathNot: [LOCAL_ADAPTER] },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'local-adapter-only-from-local-runtime',
      comment: 'The embedded dynalite is reached only through shared/runtime/local.ts, which only functions/server.ts (npm start) imports.',
      severity: 'error',
      from: { path: '^(shared|functions)/', pathNot: ['^shared/runtime/local\\.ts$', LOCAL_ADAPTER] },
      to: { path: LOCAL_ADAPTER },
    },
    {
      name: 'local-runtime-only-from-server',
      comment: 'shared/runtime/local.ts is npm start\'s: no Lambda entry may reach it.',
      severity: 'error',
      from: { path: '^(shared|functions)/', pathNot: ['^functions/server\\.ts$'] },
      to: { path: '^shared/runtime/local\\.ts$' },
    },
    {
      name: 'lambdas-never-reach-dev-code',
      comment: 'Nothing a Lambda entry imports, directly or not, is development-only (test/infra/lambda-bundle-inputs.test.ts checks the bundle itself).',
      severity: 'error',
      from: { path: '^functions/(lambda|escalation)\\.ts$' },
      to: { path: [LOCAL_ADAPTER, '^shared/runtime/local\\.ts$', 'node_modules/dynalite/'], reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.cjs', '.mjs', '.d.ts'] },
    combinedDependencies: false,
  },
};
