// `pnpm pack:all`: one tarball per public package (every packages/* without "private": true) in
// packs/, packed by pnpm, which replaces `workspace:*` with the real versions and adds the
// workspace's LICENSE. Run after `tsc -b` (the pack:all script builds first).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, 'packs');
// Inside a pnpm script npm_execpath is pnpm itself (pnpm 12: a native executable): pack with it.
const pnpm = process.env.npm_execpath;
if (!pnpm) throw new Error('run through pnpm: npx pnpm@12.4.2 pack:all');
const [command, ...prefix] = /\.[cm]?js$/.test(pnpm) ? [process.execPath, pnpm] : [pnpm];

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out);
for (const dir of publicPackageDirs(root)) {
  execFileSync(command, [...prefix, 'pack', '--pack-destination', out], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
for (const f of fs.readdirSync(out).sort()) {
  console.log(`packs/${f}  ${(fs.statSync(path.join(out, f)).size / 1024).toFixed(1)} KiB`);
}

/** The directories of the workspace packages that get published. */
export function publicPackageDirs(workspaceRoot) {
  const pkgs = path.join(workspaceRoot, 'packages');
  return fs
    .readdirSync(pkgs)
    .map((d) => path.join(pkgs, d))
    .filter((d) => {
      const file = path.join(d, 'package.json');
      return fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')).private !== true;
    });
}
