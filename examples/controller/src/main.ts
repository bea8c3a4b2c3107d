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

const args = process.argv.slice(2).filter((a) => a !== '--');
const options: ControllerDemoOptions = {};
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  const value = (): string => {
    const v = args[++i];
    if (v === undefined) throw new Error(`${arg} needs a value`);
    return v;
  };
  switch (arg) {
    case '--kubeconfig': {
      const kc = new KubeConfig();
      kc.loadFromFile(value());
      options.kubeConfig = kc;
      break;
    }
    case '--identity':
      options.identity = value();
      break;
    case '--namespace':
      options.namespace = value();
      break;
    case '--workers':
      options.workers = parsePositiveInt(arg, value());
      break;
    case '--duration':
      options.durationMs = parseDuration(value());
      break;
    case '--replicas':
      options.replicas = parsePositiveInt(arg, value());
      break;
    case '--pods':
      options.pods = parsePositiveInt(arg, value());
      break;
    case '--nodes':
      options.nodes = parsePositiveInt(arg, value());
      break;
    case '--churn':
      options.churnPerSecond = parsePositiveInt(arg, value());
      break;
    case '--help':
      console.log(USAGE);
      process.exit(0);
      break;
    default:
      console.error(`unknown option ${arg}\n${USAGE}`);
      process.exit(2);
  }
}

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
const summary = await runControllerDemo({ ...options, signal: stop.signal });
process.exitCode = summary.matchesServer === false ? 1 : 0;
