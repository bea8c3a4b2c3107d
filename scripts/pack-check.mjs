// `pnpm pack:check` (CI): what a user installs, tested as they install it. Packs every public
// package (scripts/pack-all.mjs), then
//   1. checks each tarball: LICENSE, metadata, no build info or tests, source maps that resolve,
//      no `workspace:` ranges, @kubernetes/client-node a peer wherever the code imports it;
//   2. runs publint and @arethetypeswrong/cli over each tarball;
//   3. installs the tarballs with plain npm into a scratch project outside the workspace, and
//      runs docs/getting-started.md's FakeApiServer program as an ES module and from CommonJS
//      (require of ESM), type-checks it and the README's first informer with TypeScript's node10
//      and nodenext resolution: first on the lowest @kubernetes/client-node the peer range allows,
//      then on the newest;
//   4. on a Node.js older than 22.19 (the system's, if it is one), checks that importing any
//      package fails with kinformer's one-line message and exit status 1.
// Run through pnpm (`npx pnpm@12.4.2 pack:check`) so that node is the workspace's Node 24.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packAll, pnpmCommand, publicPackageDirs } from './pack-all.mjs';
import { CONSUMER_COMPILER_OPTIONS, rehearsePublish } from './pack-registry.mjs';

const root = path.resolve(import.meta.dirname, '..');
const packs = path.join(root, 'packs');
const started = Date.now();
const failures = [];
const fail = (msg) => failures.push(msg);
const step = (msg) => console.log(`pack-check: ${msg} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

const tarballs = packAll();
if (tarballs.length !== publicPackageDirs().length) fail(`expected one tarball per public package in packs/`);
step(`packed ${tarballs.length} packages into ${path.relative(root, packs)}/`);

// 1. The tarballs' contents.
const license = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8');
if (!license.includes('Apache License') || !license.includes('END OF TERMS AND CONDITIONS')) {
  fail('LICENSE is not the Apache-2.0 text');
}
const unpacked = fs.mkdtempSync(path.join(os.tmpdir(), 'kinformer-unpacked-'));
const manifests = new Map(); // name → package.json of the tarball
const peerRange = new Set();
for (const tgz of tarballs) {
  const dir = path.join(unpacked, path.basename(tgz, '.tgz'));
  fs.mkdirSync(dir);
  execFileSync('tar', ['-xzf', tgz, '-C', dir]);
  const pkg = path.join(dir, 'package');
  const files = walk(pkg).map((f) => path.relative(pkg, f));
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
  const name = manifest.name;
  manifests.set(name, manifest);
  const where = `${path.basename(tgz)}:`;
  if (
    !fs.existsSync(path.join(pkg, 'LICENSE')) ||
    fs.readFileSync(path.join(pkg, 'LICENSE'), 'utf8') !== license
  ) {
    fail(`${where} LICENSE missing or not the workspace's Apache-2.0 text`);
  }
  for (const f of files) {
    if (f.endsWith('.tsbuildinfo')) fail(`${where} ships build info ${f}`);
    if (/\.test\.|\.test-helpers?\./.test(f)) fail(`${where} ships test file ${f}`);
  }
  for (const map of files.filter((f) => f.endsWith('.map'))) {
    const { sources = [] } = JSON.parse(fs.readFileSync(path.join(pkg, map), 'utf8'));
    for (const s of sources) {
      const target = path.resolve(path.dirname(path.join(pkg, map)), s);
      if (!target.startsWith(pkg + path.sep) || !fs.existsSync(target)) {
        fail(`${where} ${map} points at ${s}, which is not in the tarball`);
      }
    }
  }
  for (const field of ['description', 'homepage', 'author', 'main', 'types', 'exports', 'engines']) {
    if (!manifest[field]) fail(`${where} package.json has no ${field}`);
  }
  if (!manifest.keywords?.length) fail(`${where} package.json has no keywords`);
  if (!manifest.bugs?.url) fail(`${where} package.json has no bugs.url`);
  if (!manifest.repository?.url || !manifest.repository?.directory)
    fail(`${where} package.json has no repository`);
  if (manifest.license !== 'Apache-2.0') fail(`${where} license is ${manifest.license}, not Apache-2.0`);
  if (name.startsWith('@') && manifest.publishConfig?.access !== 'public') {
    fail(`${where} scoped package without publishConfig.access "public"`);
  }
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
      if (range.startsWith('workspace:')) fail(`${where} ${field}.${dep} is ${range}`);
    }
  }
  const importsClientNode = files.some(
    (f) =>
      f.startsWith('dist/') &&
      /from '@kubernetes\/client-node'/.test(fs.readFileSync(path.join(pkg, f), 'utf8')),
  );
  if (importsClientNode) {
    const range = manifest.peerDependencies?.['@kubernetes/client-node'];
    if (!range) fail(`${where} imports @kubernetes/client-node but has no peerDependency on it`);
    else peerRange.add(range);
    if (manifest.dependencies?.['@kubernetes/client-node']) {
      fail(`${where} @kubernetes/client-node is a dependency (a second copy for users): make it a peer only`);
    }
  }
}
const core = manifests.get('@kinformer/core');
if (!core?.sideEffects?.includes('./dist/nodeVersionCheck.js')) {
  fail('@kinformer/core: sideEffects must list ./dist/nodeVersionCheck.js (the Node version check)');
}
const documented = new Set(readJson(path.join(root, 'typedoc.json')).entryPoints);
for (const dir of publicPackageDirs()) {
  if (!documented.has(path.relative(root, dir)))
    fail(`typedoc.json: add ${path.relative(root, dir)} to entryPoints`);
}
if (peerRange.size !== 1)
  fail(`the packages disagree on the @kubernetes/client-node range: ${[...peerRange].join(', ')}`);
const [range = '^2.0.0'] = peerRange;
step(`${tarballs.length} tarballs checked`);

// 2. publint and arethetypeswrong. kinformer is ESM-only; CommonJS consumers load it with
// require(esm) (Node >= 22.12, TypeScript >= 5.8 with module nodenext), which step 3 runs and
// type-checks, so attw's "CJS resolves to ESM" is expected and ignored.
await pool(
  tarballs.flatMap((tgz) => [
    () => run(process.execPath, [bin('publint'), '--strict', tgz], { cwd: root }),
    () =>
      run(
        process.execPath,
        [bin('@arethetypeswrong/cli', 'attw'), tgz, '--ignore-rules', 'cjs-resolves-to-esm'],
        { cwd: root },
      ),
  ]),
);
step('publint and attw clean');

// 3. A scratch project outside the workspace, plain npm.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kinformer-consumer-'));
fs.writeFileSync(
  path.join(scratch, 'package.json'),
  JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
);
writeConsumers(scratch);
const lowest = range.replace(/^[\^~>=]+/, '');
for (const clientNode of [range, lowest]) {
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...tarballs,
      `@kubernetes/client-node@${clientNode}`,
      // client-node's .d.ts files import 'ws' types; with skipLibCheck off a user needs them.
      '@types/ws',
    ],
    { cwd: scratch, timeout: 300_000 },
  );
  if (!fs.existsSync(path.join(scratch, 'node_modules/@kubernetes/client-node/package.json'))) continue;
  const installed = readJson(path.join(scratch, 'node_modules/@kubernetes/client-node/package.json')).version;
  for (const [name, manifest] of manifests) {
    const got = readJson(path.join(scratch, 'node_modules', name, 'package.json'));
    if (got.version !== manifest.version || got.repository?.url !== manifest.repository?.url) {
      fail(`npm installed a ${name} that is not the packed one`);
    }
  }
  const nested = walk(path.join(scratch, 'node_modules')).filter((f) =>
    f.endsWith(path.join('node_modules', '@kubernetes', 'client-node', 'package.json')),
  );
  if (nested.length !== 1) fail(`npm installed ${nested.length} copies of @kubernetes/client-node`);
  const imports = [...manifests.values()].flatMap((m) =>
    Object.keys(m.exports).map((k) => m.name + k.slice(1)),
  );
  await pool([
    ...['consumer.mjs', 'consumer.cjs'].map((program) => async () => {
      const out = await run(process.execPath, [program], { cwd: scratch, timeout: 60_000 });
      if (!/pod web-1\n/.test(out) || !/pod web-2\n/.test(out))
        fail(`${program} printed ${JSON.stringify(out)}`);
    }),
    () =>
      run(
        process.execPath,
        ['--input-type=module', '-e', imports.map((i) => `await import('${i}');`).join('')],
        { cwd: scratch },
      ),
    () => run(process.execPath, ['-e', imports.map((i) => `require('${i}');`).join('')], { cwd: scratch }),
    ...['node10', 'nodenext'].map(
      (resolution) => () =>
        run(process.execPath, [bin('typescript', 'tsc'), '-p', `tsconfig.${resolution}.json`], {
          cwd: scratch,
        }),
    ),
  ]);
  step(
    `@kubernetes/client-node ${installed}: ESM and CJS consumers ran, every entry point imported and required, tsc node10 and nodenext passed`,
  );
}

// 4. An old Node: one line, exit status 1, before @kubernetes/client-node is loaded.
const oldNode = findOldNode();
if (oldNode === undefined) {
  console.log(
    'pack-check: SKIPPED the old-Node check: no Node.js < 22.19 found (tried /usr/bin/node, /usr/local/bin/node, PATH)',
  );
} else {
  const programs = [
    ['consumer.mjs'],
    ['consumer.cjs'],
    ...[...manifests.keys()].map((name) => ['--input-type=module', '-e', `import '${name}';`]),
  ];
  const expected = `kinformer requires Node.js >= 22.19 (this is Node.js v${oldNode.version}): upgrade Node.js.`;
  await pool(
    programs.map((args) => async () => {
      const r = await spawn(oldNode.file, args, { cwd: scratch, timeout: 30_000 });
      const lines = r.stderr.trim().split('\n');
      if (r.status !== 1 || lines.length !== 1 || lines[0] !== expected || r.stdout !== '') {
        fail(
          `Node ${oldNode.version} ${args.join(' ')}: exit ${r.status}, stderr ${JSON.stringify(r.stderr.slice(0, 400))}`,
        );
      }
    }),
  );
  step(`Node ${oldNode.version} (${oldNode.file}): ${programs.length} imports fail with one line`);
}

// 5. docs/publishing.md rehearsed: publish to a local registry, install by name, run, type-check.
await rehearsePublish({
  root,
  manifests,
  run,
  fail,
  step,
  pnpm: pnpmCommand(),
  verdaccioBin: bin('verdaccio'),
  writeProgram: writeConsumers,
  typeCheckFiles: ['gettingStarted.ts', 'readme.ts', 'subpaths.ts', 'consumer.cts'],
});

fs.rmSync(unpacked, { recursive: true, force: true });
if (failures.length > 0) {
  console.error(
    `pack-check: ${failures.length} problem(s):\n  ${failures.join('\n  ')}\n(scratch project: ${scratch})`,
  );
  process.exit(1);
}
fs.rmSync(scratch, { recursive: true, force: true });
step('all good');

/** Runs a command; resolves with its exit status and output. */
function spawn(command, args, { cwd, timeout = 120_000, env: extraEnv = {} }) {
  return new Promise((resolve) => {
    const env = { ...process.env, NO_COLOR: '1', ...extraEnv };
    execFile(
      command,
      args,
      { cwd, timeout, env, encoding: 'utf8', maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        resolve({
          status: err ? (typeof err.code === 'number' ? err.code : (err.signal ?? 'error')) : 0,
          stdout,
          stderr,
        });
      },
    );
  });
}

/** Runs a command; a non-zero exit is recorded as a failure with its output. Resolves with stdout. */
async function run(command, args, options) {
  const r = await spawn(command, args, options);
  if (r.status !== 0) {
    fail(
      `${path.basename(command)} ${args.join(' ').slice(0, 200)} (in ${options.cwd}) exited ${r.status}:\n${r.stdout}${r.stderr}`,
    );
  }
  return r.stdout;
}

/** Runs the tasks, a few at a time. */
async function pool(tasks, concurrency = Math.max(2, os.availableParallelism())) {
  const queue = [...tasks];
  const worker = async () => {
    for (let task = queue.shift(); task; task = queue.shift()) await task();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** The JS file of a workspace devDependency's executable. */
function bin(pkg, name = pkg) {
  const dir = path.join(root, 'node_modules', pkg);
  const { bin: b } = readJson(path.join(dir, 'package.json'));
  return path.join(dir, typeof b === 'string' ? b : b[name]);
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

function findOldNode() {
  const candidates = ['/usr/bin/node', '/usr/local/bin/node'];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) candidates.push(path.join(dir, 'node'));
  for (const file of candidates) {
    if (!fs.existsSync(file)) continue;
    const r = spawnSync(file, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    const version = r.stdout?.trim();
    if (r.status !== 0 || !version) continue;
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 19)) return { file, version };
  }
  return undefined;
}

/** The `ts` code block under `heading` in a Markdown file. */
function codeBlock(file, heading) {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  const m = at < 0 ? null : /```ts\n([\s\S]*?)```/.exec(text.slice(at));
  if (!m) throw new Error(`${file}: no ts block under "${heading}"`);
  return m[1];
}

/** Splits a program into its leading import statements and the rest. */
function splitImports(code) {
  const lines = code.split('\n');
  let i = 0;
  for (;;) {
    if (lines[i]?.trim() === '') i++;
    else if (lines[i]?.startsWith('import ')) {
      while (!lines[i].trimEnd().endsWith(';')) i++;
      i++;
    } else break;
  }
  return { imports: lines.slice(0, i).join('\n'), body: lines.slice(i).join('\n') };
}

/** `import { a, type B } from 'x';` → `const { a } = require('x');` */
function toRequire(imports) {
  return imports.replace(/import\s*\{([^}]*)\}\s*from\s*('[^']+');/g, (_, names, from) => {
    const values = names
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '));
    return `const { ${values.join(', ')} } = require(${from});`;
  });
}

function writeConsumers(dir) {
  // The getting-started program, unchanged, as an ES module (top-level await).
  const program = codeBlock('docs/getting-started.md', '## The same, against FakeApiServer');
  const { imports, body } = splitImports(program);
  const write = (file, text) => fs.writeFileSync(path.join(dir, file), text);
  write('consumer.mjs', program);
  // From CommonJS: require() of the ES modules, the body in an async function.
  write(
    'consumer.cjs',
    `${toRequire(imports)}\n(async () => {\n${body}\n})().catch((err) => {\n  console.error(err);\n  process.exitCode = 1;\n});\n`,
  );
  // Type-checked: the same program and the README's first informer (node10 forbids top-level
  // await, so the bodies become functions), and the reflector's ./testing subpath.
  const readme = splitImports(codeBlock('README.md', '## Your first informer'));
  write('gettingStarted.ts', `${imports}\nexport async function main(): Promise<void> {\n${body}\n}\n`);
  write('readme.ts', `${readme.imports}\nexport async function main(): Promise<void> {\n${readme.body}\n}\n`);
  write(
    'subpaths.ts',
    [
      "import { FakeListerWatcher } from '@kinformer/reflector/testing';",
      "import type { KubeObject } from 'kinformer';",
      'export const lw: FakeListerWatcher<KubeObject> = new FakeListerWatcher<KubeObject>();',
      '',
    ].join('\n'),
  );
  // CommonJS TypeScript (nodenext only: node10 has no require of ESM).
  write(
    'consumer.cts',
    [
      "import kinformer = require('kinformer');",
      "import testing = require('@kinformer/testing');",
      'export async function main(): Promise<number> {',
      '  const server = await testing.FakeApiServer.start();',
      '  const factory = new kinformer.SharedInformerFactory(server.kubeConfig());',
      '  const { lister } = factory.core.v1.pods();',
      '  await factory.shutdown();',
      '  await server.close();',
      '  return lister.list().length;',
      '}',
      '',
    ].join('\n'),
  );
  const compilerOptions = CONSUMER_COMPILER_OPTIONS;
  const ts = ['gettingStarted.ts', 'readme.ts', 'subpaths.ts'];
  write(
    'tsconfig.node10.json',
    JSON.stringify({
      compilerOptions: { ...compilerOptions, module: 'commonjs', moduleResolution: 'node10' },
      files: ts,
    }),
  );
  write(
    'tsconfig.nodenext.json',
    JSON.stringify({
      compilerOptions: { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext' },
      files: [...ts, 'consumer.cts'],
    }),
  );
}
