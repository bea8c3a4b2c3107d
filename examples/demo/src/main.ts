/**
 * `pnpm demo [--kubeconfig PATH] [--pods N] [--duration 20s] [--churn 400] [--no-chaos] [--sync-timeout 30s]`
 *
 * Without a kubeconfig (and with KUBECONFIG unset) it runs against the embedded FakeApiServer, with
 * churn and, every two seconds, a fault (a dropped watch, a 410 after compaction, a 429).
 *
 * Ctrl-C once: before the first sync it stops at once ("not synced"); later it ends the run (and, on
 * the embedded server, still checks the cache). Ctrl-C twice: exits at once. Errors are one line.
 */
import { DemoUsageError, parseArgs, USAGE } from './cli.js';
import { firstLine } from './firstLine.js';
import { runDemo } from './demo.js';

const stop = new AbortController();
let firstInterrupt: number | undefined;
process.on('SIGINT', () => {
  // Under `pnpm demo` one Ctrl-C can arrive twice (the terminal signals the process group and pnpm
  // forwards it too): a second one within half a second is the same keypress.
  if (firstInterrupt !== undefined) {
    if (Date.now() - firstInterrupt > 500) process.exit(130);
    return;
  }
  firstInterrupt = Date.now();
  process.stderr.write('\nstopping (Ctrl-C again to quit at once)\n');
  stop.abort();
});

try {
  const options = parseArgs(process.argv.slice(2));
  if (options === 'help') {
    console.log(USAGE);
  } else {
    const summary = await runDemo({ ...options, signal: stop.signal });
    process.exitCode = !summary.synced
      ? summary.interrupted
        ? 130
        : 1
      : summary.matchesServer === false
        ? 1
        : 0;
  }
} catch (err) {
  process.stderr.write(`demo: ${err instanceof DemoUsageError ? err.message : firstLine(err)}\n`);
  process.exitCode = 1;
}
// Whatever still holds the event loop (a socket closing slowly) must not keep a finished demo alive.
setTimeout(() => process.exit(), 2_000).unref();
