/** The demo's command line: options, kubeconfig loading, and errors as one line each. */
import { KubeConfig } from '@kubernetes/client-node';
import type { DemoOptions } from './demo.js';
import { firstLine } from './firstLine.js';

export const USAGE =
  'usage: pnpm demo [--kubeconfig PATH] [--pods N] [--duration 20s] [--churn 400] [--no-chaos] [--sync-timeout 30s]';

/** A mistake on the command line or in the kubeconfig: printed as its message alone. */
export class DemoUsageError extends Error {
  override readonly name = 'DemoUsageError';
}

function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (!m) throw new DemoUsageError(`bad duration ${text} (use 500ms, 20s, 2m)`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function parseCount(arg: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new DemoUsageError(`${arg} needs a whole number, got ${text}`);
  return n;
}

/**
 * Loads a kubeconfig (a file, or the default chain when `path` is undefined) and checks it names a
 * cluster. Throws {@link DemoUsageError} with one line: a missing file, unreadable YAML, no cluster.
 */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  const where = path ?? process.env.KUBECONFIG ?? '~/.kube/config';
  try {
    if (path === undefined) kc.loadFromDefault();
    else kc.loadFromFile(path);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT') throw new DemoUsageError(`cannot read kubeconfig ${where}: no such file`);
    if (code === 'EACCES') throw new DemoUsageError(`cannot read kubeconfig ${where}: permission denied`);
    throw new DemoUsageError(`cannot load kubeconfig ${where}: ${firstLine(err)}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server)
    throw new DemoUsageError(
      `kubeconfig ${where} has no cluster for its current context (${kc.getCurrentContext() || 'none'})`,
    );
  return kc;
}

type Setter = (options: DemoOptions, value: () => string, arg: string) => void;

/** What each option sets; `value()` takes the argument that follows it. */
const OPTIONS = new Map<string, Setter>([
  ['--kubeconfig', (o, value) => void (o.kubeConfig = loadKubeConfig(value()))],
  ['--pods', (o, value, arg) => void (o.pods = parseCount(arg, value()))],
  ['--duration', (o, value) => void (o.durationMs = parseDuration(value()))],
  ['--churn', (o, value, arg) => void (o.churnPerSecond = parseCount(arg, value()))],
  ['--sync-timeout', (o, value) => void (o.syncTimeoutMs = parseDuration(value()))],
  ['--chaos', (o) => void (o.chaos = true)],
  ['--no-chaos', (o) => void (o.chaos = false)],
]);

function usageError(message: string): never {
  throw new DemoUsageError(`${message}\n${USAGE}`);
}

/** Parses `pnpm demo` arguments; `'help'` for `--help`. Throws {@link DemoUsageError}. */
export function parseArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): DemoOptions | 'help' {
  const args = argv.filter((a) => a !== '--');
  const options: DemoOptions = { chaos: true };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    const set = OPTIONS.get(arg) ?? usageError(`unknown option ${arg}`);
    set(options, () => args[++i] ?? usageError(`${arg} needs a value`), arg);
  }
  if (!options.kubeConfig && env.KUBECONFIG) options.kubeConfig = loadKubeConfig(undefined);
  if (options.kubeConfig && options.durationMs === undefined) options.durationMs = 24 * 3600_000;
  return options;
}
