/**
 * `pnpm start [--kubeconfig PATH] [--identity ID] [--namespace NS] [--workers N] [--duration 15s]
 *  [--replicas N] [--pods N] [--nodes N] [--churn N]`
 *
 * Without `--kubeconfig` it runs against an embedded FakeApiServer: pods are seeded and churned,
 * several replicas campaign for one Lease, the leader is killed part-way, and the run ends with a
 * check that the ConfigMaps equal the pods per node. With `--kubeconfig` it runs one replica against
 * that cluster (writing ConfigMaps `pods-per-node-<node>` into `--namespace`) until Ctrl-C.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { runControllerDemo } from './controllerDemo.js';
import type { ControllerDemoOptions } from './controllerDemo.js';

const USAGE =
  'usage: pnpm start [--kubeconfig PATH] [--identity ID] [--namespace NS] [--workers N] [--duration 15s] [--replicas N] [--pods N] [--nodes N] [--churn N]';

function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (!m) throw new Error(`bad duration ${text} (use 500ms, 20s, 2m)`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function parsePositiveInt(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a whole number ≥ 1, got ${text}`);
  return n;
}

function loadKubeConfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** What each option sets, from the argument that follows it. */
const OPTIONS = new Map<string, (value: string, flag: string) => ControllerDemoOptions>([
  ['--kubeconfig', (path) => ({ kubeConfig: loadKubeConfig(path) })],
  ['--identity', (identity) => ({ identity })],
  ['--namespace', (namespace) => ({ namespace })],
  ['--workers', (n, flag) => ({ workers: parsePositiveInt(flag, n) })],
  ['--duration', (d) => ({ durationMs: parseDuration(d) })],
  ['--replicas', (n, flag) => ({ replicas: parsePositiveInt(flag, n) })],
  ['--pods', (n, flag) => ({ pods: parsePositiveInt(flag, n) })],
  ['--nodes', (n, flag) => ({ nodes: parsePositiveInt(flag, n) })],
  ['--churn', (n, flag) => ({ churnPerSecond: parsePositiveInt(flag, n) })],
]);

const args = process.argv.slice(2).filter((a) => a !== '--');
let options: ControllerDemoOptions = {};
for (let i = 0; i < args.length; i += 2) {
  const flag = args[i]!;
  if (flag === '--help') {
    console.log(USAGE);
    process.exit(0);
  }
  const option = OPTIONS.get(flag);
  if (option === undefined) {
    console.error(`unknown option ${flag}\n${USAGE}`);
    process.exit(2);
  }
  const value = args[i + 1];
  if (value === undefined) throw new Error(`${flag} needs a value`);
  options = { ...options, ...option(value, flag) };
}

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
const summary = await runControllerDemo({ ...options, signal: stop.signal });
process.exitCode = summary.matchesServer === false ? 1 : 0;
