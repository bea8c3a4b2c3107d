// `pnpm pack:all`: builds every public package (every packages/* without "private": true) and packs
// one tarball per package into packs/ with pnpm, which replaces `workspace:*` with the real
// versions and adds the workspace's LICENSE. scripts/pack-check.mjs tests the result.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** The directories of the workspace packages that get published. */
export function publicPackageDirs() {
  const pkgs = path.join(root, 'packages');
  return fs
    .readdirSync(pkgs)
    .map((d) => path.join(pkgs, d))
    .filter((d) => {
      const file = path.join(d, 'package.json');
      return fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')).private !== true;
    });
}

/** The pnpm running this script, as `[command, ...args]` (pnpm 12 is a native executable). */
export function pnpmCommand() {
  // Inside a pnpm script npm_execpath is pnpm itself.
  const pnpm = process.env.npm_execpath;
  if (!pnpm) throw new Error('run through pnpm: npx pnpm@12.4.2 pack:all');
  return /\.[cm]?js$/.test(pnpm) ? [process.execPath, pnpm] : [pnpm];
}

/** Builds and packs; returns the tarballs' paths. */
export function packAll() {
  const [command, ...prefix] = pnpmCommand();
  const dirs = publicPackageDirs();
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', ...dirs], { stdio: 'inherit' });
  for (const dir of dirs) removeStaleOutputs(dir);
  const out = path.join(root, 'packs');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out);
  for (const dir of dirs) {
    execFileSync(command, [...prefix, 'pack', '--pack-destination', out], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return fs
    .readdirSync(out)
    .sort()
    .map((f) => path.join(out, f));
}

/**
 * Deletes dist/ files whose source is gone (tsc -b never deletes the outputs of a removed or moved
 * file, so a local dist/ can hold modules that no longer exist; a fresh clone has none).
 */
function removeStaleOutputs(dir) {
  const dist = path.join(dir, 'dist');
  for (const entry of fs.readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const base = path.relative(dist, file).replace(/(\.d)?\.[cm]?js(\.map)?$|\.d\.[cm]?ts(\.map)?$/, '');
    if (base === path.relative(dist, file)) continue; // not a compiler output (e.g. .tsbuildinfo)
    if (!['.ts', '.mts', '.cts'].some((ext) => fs.existsSync(path.join(dir, 'src', base + ext))))
      fs.rmSync(file);
  }
}

if (process.argv[1] === import.meta.filename) {
  for (const f of packAll()) {
    console.log(`${path.relative(root, f)}  ${(fs.statSync(f).size / 1024).toFixed(1)} KiB`);
  }
}
