/**
 * `pnpm demo [--kubeconfig PATH] [--pods N] [--duration 20s] [--churn 400] [--no-chaos]`
 *
 * Without a kubeconfig (and with KUBECONFIG unset) it runs against the embedded FakeApiServer, with
 * churn and, every two seconds, a fault (a dropped watch, a 410 after compaction, a 429).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { runDemo, type DemoOptions } from './demo.js';

function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (!m) throw new Error(`bad duration ${text} (use 500ms, 20s, 2m)`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

const args = process.argv.slice(2).filter((a) => a !== '--');
const options: DemoOptions = { chaos: true };
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
    case '--pods':
      options.pods = Number(value());
      break;
    case '--duration':
      options.durationMs = parseDuration(value());
      break;
    case '--churn':
      options.churnPerSecond = Number(value());
      break;
    case '--chaos':
      options.chaos = true;
      break;
    case '--no-chaos':
      options.chaos = false;
      break;
    case '--help':
      console.log(
        'usage: pnpm demo [--kubeconfig PATH] [--pods N] [--duration 20s] [--churn 400] [--no-chaos]',
      );
      process.exit(0);
      break;
    default:
      throw new Error(`unknown option ${arg}`);
  }
}
if (!options.kubeConfig && process.env.KUBECONFIG) {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  options.kubeConfig = kc;
}
if (options.kubeConfig && options.durationMs === undefined) options.durationMs = 24 * 3600_000;

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
const summary = await runDemo({ ...options, signal: stop.signal });
process.exitCode = summary.matchesServer === false ? 1 : 0;
