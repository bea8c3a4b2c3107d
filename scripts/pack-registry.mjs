/* global fetch, AbortSignal, setTimeout */
// The publishing rehearsal of `pnpm pack:check`: docs/publishing.md's "Publish" step run for real
// against a local npm registry (verdaccio, a workspace devDependency), then a user's install by name.
//
//   1. starts verdaccio on 127.0.0.1 (a free port) with its storage in a temp directory: the
//      `kinformer` and `@kinformer/*` names are served only from there (never proxied), every other
//      package is proxied from the registry npm is configured with (`npm config get registry`);
//   2. creates a user on it and runs `pnpm -r publish` in the workspace, as the doc says;
//   3. in a scratch project outside the workspace, `npm install kinformer@<v> @kubernetes/client-node`
//      and `npm install -D @kinformer/testing@<v> typescript @types/ws` BY NAME from that registry,
//      checks that npm got the published packages, runs the getting-started program and type-checks
//      it with the newest TypeScript npm installs (`skipLibCheck: false`);
//   4. stops verdaccio and deletes its storage (also on failure).
import { spawn as spawnChild } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Config for a throwaway verdaccio: kinformer's names local only, everything else proxied. */
function verdaccioConfig(dir, upstream) {
  return [
    `storage: ${JSON.stringify(path.join(dir, 'storage'))}`,
    'auth:',
    '  htpasswd:',
    `    file: ${JSON.stringify(path.join(dir, 'htpasswd'))}`,
    '    max_users: 10',
    'uplinks:',
    '  upstream:',
    `    url: ${JSON.stringify(upstream)}`,
    '    timeout: 60s',
    '    max_fails: 10',
    'packages:',
    "  'kinformer':",
    '    access: $all',
    '    publish: $authenticated',
    "  '@kinformer/*':",
    '    access: $all',
    '    publish: $authenticated',
    "  '**':",
    '    access: $all',
    '    proxy: upstream',
    'server:',
    '  keepAliveTimeout: 60',
    'log: { type: stdout, format: json, level: warn }',
    '',
  ].join('\n');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts verdaccio; resolves with its URL and a `stop()` once it answers `/-/ping`. Its output is
 * kept and returned by `stop()` for failure messages.
 */
async function startVerdaccio(verdaccioBin, dir, upstream, fixedPort) {
  const config = path.join(dir, 'config.yaml');
  fs.writeFileSync(config, verdaccioConfig(dir, upstream));
  const port = fixedPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}/`;
  const child = spawnChild(
    process.execPath,
    [verdaccioBin, '--config', config, '--listen', `127.0.0.1:${port}`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    },
  );
  let output = '';
  child.stdout.on('data', (c) => (output = (output + c).slice(-20_000)));
  child.stderr.on('data', (c) => (output = (output + c).slice(-20_000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    // A throwaway registry: nothing to flush, and a graceful stop waits for idle keep-alive sockets.
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    return output;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}-/ping`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`verdaccio did not answer /-/ping within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, stop };
}

/** Creates a user (npm's `adduser` request) and returns its token. */
async function addUser(url) {
  const name = 'rehearsal';
  const res = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password: `pw-${process.pid}-${Date.now()}`, type: 'user', roles: [] }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || typeof body.token !== 'string') {
    throw new Error(`verdaccio refused to create a user: ${res.status} ${JSON.stringify(body)}`);
  }
  return body.token;
}

/** The compiler options of a user's project that type-checks against the packed packages (plus a `module`). */
export const CONSUMER_COMPILER_OPTIONS = Object.freeze({
  target: 'ES2022',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  noEmit: true,
  // A user's project checks kinformer's .d.ts files too (TS2420 in a packed .d.ts once hid here).
  skipLibCheck: false,
  // What `tsc --init` sets; @kubernetes/client-node's own .d.ts need it under module commonjs.
  esModuleInterop: true,
});

/**
 * Runs the rehearsal. `run(command, args, options)` records a failure and resolves with stdout;
 * `fail(message)` records one. Returns when verdaccio is stopped and its storage deleted.
 */
export async function rehearsePublish({
  root,
  manifests,
  run,
  fail,
  step,
  pnpm,
  verdaccioBin,
  writeProgram,
  typeCheckFiles,
}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinformer-registry-'));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kinformer-registry-consumer-'));
  const upstream =
    (await run('npm', ['config', 'get', 'registry'], { cwd: scratch })).trim() ||
    'https://registry.npmjs.org/';
  let registry;
  try {
    registry = await startVerdaccio(verdaccioBin, dir, upstream);
    const { url } = registry;
    const token = await addUser(url);
    // npm and pnpm read the registry and its token from a userconfig; nothing global is touched.
    const npmrc = path.join(dir, 'npmrc');
    const host = url.replace(/^http:/, '');
    fs.writeFileSync(npmrc, `registry=${url}\n${host}:_authToken=${token}\n`);
    const env = { npm_config_userconfig: npmrc, npm_config_registry: url };
    step(`verdaccio on ${url} (storage ${dir}, others proxied from ${upstream})`);

    // docs/publishing.md, "Publish" step 3, without --provenance (a laptop, not CI) and without git
    // checks (CI checks out a detached commit, a developer may have local changes).
    await run(
      pnpm[0],
      [...pnpm.slice(1), '-r', 'publish', '--access', 'public', '--no-git-checks', '--registry', url],
      {
        cwd: root,
        env,
        timeout: 180_000,
      },
    );
    const version = manifests.get('kinformer')?.version;
    for (const [name, manifest] of manifests) {
      const res = await fetch(`${url}${name.replace('/', '%2f')}`);
      const doc = res.ok ? await res.json() : undefined;
      if (!doc?.versions?.[manifest.version])
        fail(`the registry has no ${name}@${manifest.version} after pnpm -r publish`);
    }
    step(`pnpm -r publish: ${manifests.size} packages on the local registry`);

    // A user's project: install by name and version, as docs/getting-started.md says.
    fs.writeFileSync(
      path.join(scratch, 'package.json'),
      JSON.stringify({ name: 'registry-consumer', private: true, type: 'module' }),
    );
    const npm = (args) =>
      run('npm', ['--no-audit', '--no-fund', '--loglevel=error', ...args], {
        cwd: scratch,
        env,
        timeout: 240_000,
      });
    await npm(['install', `kinformer@${version}`, '@kubernetes/client-node']);
    await npm([
      'install',
      '--save-dev',
      `@kinformer/testing@${version}`,
      'typescript',
      '@types/ws',
      '@types/node',
    ]);
    const installed = (name) => {
      const file = path.join(scratch, 'node_modules', name, 'package.json');
      return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined;
    };
    for (const name of ['kinformer', '@kinformer/testing', '@kinformer/core', '@kinformer/events']) {
      const got = installed(name);
      if (got?.version !== manifests.get(name)?.version)
        fail(`npm installed ${name}@${got?.version} by name, expected ${manifests.get(name)?.version}`);
    }
    // npm leaves `resolved` out of the lock for the configured registry: compare the integrity with
    // the tarball the local registry serves (npmjs may hold an unrelated package of that name).
    const lock = JSON.parse(fs.readFileSync(path.join(scratch, 'package-lock.json'), 'utf8'));
    const locked = lock.packages?.['node_modules/kinformer']?.integrity;
    const served = (await (await fetch(`${url}kinformer`)).json()).versions?.[version]?.dist?.integrity;
    if (locked === undefined || locked !== served) {
      fail(`npm's kinformer (${locked}) is not the one on the local registry (${served})`);
    }
    const typescript = installed('typescript')?.version;

    writeProgram(scratch);
    const out = await run(process.execPath, ['consumer.mjs'], { cwd: scratch, timeout: 60_000 });
    if (!/pod web-1\n/.test(out) || !/pod web-2\n/.test(out))
      fail(`the registry install's program printed ${JSON.stringify(out)}`);
    fs.writeFileSync(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...CONSUMER_COMPILER_OPTIONS, module: 'nodenext', moduleResolution: 'nodenext' },
        files: typeCheckFiles,
      }),
    );
    await run(path.join(scratch, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], {
      cwd: scratch,
      timeout: 180_000,
    });
    step(
      `installed kinformer@${version} by name from the registry; the program ran; TypeScript ${typescript} (npm's newest), skipLibCheck false, passed`,
    );
  } catch (err) {
    fail(`publishing rehearsal: ${err?.stack ?? err}`);
  } finally {
    const output = registry ? await registry.stop() : '';
    if (/"level":\s*(50|60)/.test(output)) fail(`verdaccio logged errors:\n${output.slice(-4000)}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

// `pnpm registry:local`: the same registry for you, on 127.0.0.1:4873 (or PORT), with every package
// built and published to it, until Ctrl-C; then `npm install kinformer@<version> --registry …`.
if (process.argv[1] === import.meta.filename) {
  const { packAll, pnpmCommand } = await import('./pack-all.mjs');
  const root = path.resolve(import.meta.dirname, '..');
  packAll();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinformer-registry-'));
  const verdaccioBin = path.join(root, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  const upstream = 'https://registry.npmjs.org/';
  const registry = await startVerdaccio(verdaccioBin, dir, upstream, Number(process.env.PORT ?? 4873));
  const cleanUp = async () => {
    await registry.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGINT', cleanUp);
  process.once('SIGTERM', cleanUp);
  const token = await addUser(registry.url);
  const npmrc = path.join(dir, 'npmrc');
  fs.writeFileSync(
    npmrc,
    `registry=${registry.url}\n${registry.url.replace(/^http:/, '')}:_authToken=${token}\n`,
  );
  const [command, ...prefix] = pnpmCommand();
  const { execFileSync } = await import('node:child_process');
  execFileSync(
    command,
    [...prefix, '-r', 'publish', '--access', 'public', '--no-git-checks', '--registry', registry.url],
    { cwd: root, stdio: 'inherit', env: { ...process.env, npm_config_userconfig: npmrc } },
  );
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'packages/kinformer/package.json'), 'utf8'));
  console.log(
    `\nkinformer ${version} is on ${registry.url} (storage ${dir}; Ctrl-C stops it and deletes it). In your project:\n` +
      `  npm install kinformer@${version} @kubernetes/client-node --registry ${registry.url}\n` +
      `  npm install --save-dev @kinformer/testing@${version} @types/ws --registry ${registry.url}\n` +
      `A registry takes each version once: for the next build, restart this, or set a new prerelease version.`,
  );
}
