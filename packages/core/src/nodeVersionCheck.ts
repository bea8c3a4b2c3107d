/**
 * Fails fast, with one line, on a Node.js too old for kinformer.
 *
 * `@kubernetes/client-node` 2.x (through undici) needs Node.js ≥ 22.19; on Node 20 importing it
 * crashes inside undici with `Cannot read properties of undefined (reading 'bind')`. This module is
 * the first import of `@kinformer/core`'s index, and every kinformer package imports
 * `@kinformer/core` before `@kubernetes/client-node`: ES modules evaluate their imports depth-first
 * in order, so on an old Node this runs before client-node is evaluated, prints one line to stderr
 * and exits with status 1. (A program that imports `@kubernetes/client-node` itself before any
 * kinformer package still gets undici's crash first.) `package.json` lists this file in
 * `sideEffects`, so bundlers keep it.
 */

/** The oldest Node.js kinformer runs on (`engines.node` of every package). */
export const REQUIRED_NODE_VERSION = '22.19.0';

/**
 * The one-line message for a Node.js older than {@link REQUIRED_NODE_VERSION}, or `undefined` when
 * `version` (as in `process.versions.node`, e.g. `'20.20.2'`) is new enough or cannot be parsed.
 */
export function unsupportedNodeMessage(version: string): string | undefined {
  const have = version.replace(/^v/, '').split('.').map(Number);
  const need = REQUIRED_NODE_VERSION.split('.').map(Number);
  if (have.length < 2 || have.some((n) => !Number.isInteger(n))) return undefined;
  for (let i = 0; i < need.length; i++) {
    const h = have[i] ?? 0;
    const n = need[i] ?? 0;
    if (h !== n) {
      if (h > n) return undefined;
      return `kinformer requires Node.js >= ${REQUIRED_NODE_VERSION.replace(/\.0$/, '')} (this is Node.js v${version.replace(/^v/, '')}): upgrade Node.js.`;
    }
  }
  return undefined;
}

const nodeVersion = typeof process === 'object' ? process.versions?.node : undefined;
const message = nodeVersion === undefined ? undefined : unsupportedNodeMessage(nodeVersion);
if (message !== undefined) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
