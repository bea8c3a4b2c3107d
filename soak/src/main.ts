import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createLogger } from '@kinformer/core';
import { defaultMaxLagP99Ms, formatReport, runChaos } from './chaos.js';
import { formatBytes } from './memory.js';
import { parseDuration } from './parseDuration.js';

const USAGE = `usage: pnpm soak [--seed N] [--duration 30s|10m] [--objects N] [--rate N] [--fault-interval 250ms] [--history N] [--max-outage 30s] [--max-lag-p99 5s] [--json]

  --seed N             seed of every random choice (default: random; always printed)
  --duration D         how long churn and faults last (default 30s)
  --objects N          objects alive at once (default 2000)
  --rate N             writes per second while churning (default 1000)
  --fault-interval D   mean time between two faults (default 250ms)
  --history N          events the server keeps for watch resumption (default 10000)
  --max-outage D       longest time an informer may go without a watch while faults run (default 30s)
  --max-lag-p99 D      fail when the p99 write-to-handler delivery lag exceeds D (default 3s with a fault
                       every 1s or less often, 30s in a storm of faults)
  --json               print the report as JSON
  KINFORMER_LOG_LEVEL=warn|debug  show the library's logs (default silent)

exit code: 0 when every check passed, 1 on any mismatch, 2 on a usage error`;

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new RangeError(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return n;
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      // `pnpm soak -- --duration 2m` passes the `--` through: drop it.
      args: process.argv.slice(2).filter((a) => a !== '--'),
      options: {
        seed: { type: 'string' },
        duration: { type: 'string' },
        objects: { type: 'string' },
        rate: { type: 'string' },
        'fault-interval': { type: 'string' },
        history: { type: 'string' },
        'max-outage': { type: 'string' },
        'max-lag-p99': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  let seed: number;
  let durationMs: number;
  let objects: number;
  let writesPerSecond: number;
  let faultIntervalMs: number;
  let historySize: number;
  let maxOutageMs: number;
  let maxLagP99Ms: number;
  try {
    seed = positiveInt('seed', values.seed, randomInt(2 ** 31));
    if (seed > 0xffffffff) throw new RangeError('--seed must fit in 32 bits');
    durationMs = parseDuration(values.duration ?? '30s');
    objects = positiveInt('objects', values.objects, 2_000);
    writesPerSecond = positiveInt('rate', values.rate, 1_000);
    faultIntervalMs = parseDuration(values['fault-interval'] ?? '250ms');
    historySize = positiveInt('history', values.history, 10_000);
    maxOutageMs = parseDuration(values['max-outage'] ?? '30s');
    maxLagP99Ms =
      values['max-lag-p99'] === undefined
        ? defaultMaxLagP99Ms(faultIntervalMs)
        : parseDuration(values['max-lag-p99']);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }

  const json = values.json === true;
  const log = json ? (line: string): void => console.error(line) : (line: string): void => console.log(line);
  log(
    `kinformer chaos soak: seed ${seed}, ${durationMs / 1000} s, ${objects} objects, ${writesPerSecond} writes/s, a fault every ~${faultIntervalMs} ms`,
  );
  log(
    `replay: pnpm soak --seed ${seed} --duration ${durationMs / 1000}s --objects ${objects} --rate ${writesPerSecond} --fault-interval ${faultIntervalMs}ms --history ${historySize}`,
  );
  const level = process.env.KINFORMER_LOG_LEVEL;
  const report = await runChaos({
    seed,
    durationMs,
    objects,
    writesPerSecond,
    faultIntervalMs,
    historySize,
    maxOutageMs,
    maxLagP99Ms,
    // The soak's handlers fail on purpose: keep the library quiet unless asked.
    logger: createLogger({ level: level ?? 'silent' }),
    onProgress: (p) =>
      log(
        `  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.writes.toLocaleString('en-US')} writes, ${p.faults} faults, ` +
          `${p.events.toLocaleString('en-US')} handler events, heap ${formatBytes(p.heapUsedBytes)}, ` +
          `lag now ${Math.round(p.currentLagMs)} ms, last fault ${p.lastFault ?? '-'}`,
      ),
  });
  if (json) console.log(JSON.stringify(report, null, 2));
  else console.log(formatReport(report));
  return report.mismatches === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
