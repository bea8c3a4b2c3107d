/**
 * Child processes of the end-to-end benchmarks: the list/watch server and one contender per process,
 * so that their CPU and RSS figures are independent.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContenderResult } from './contender.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts a bench server script (it sends `{ url }` over IPC once it listens). */
export async function startServer(script = 'server.js'): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, script), [], {
    execArgv: ['--max-old-space-size=8192'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(m.url));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { child, url };
}

/** Options for {@link runContender}. */
export interface RunOptions {
  /** Kill the contender after this long and reject. Default: no limit. */
  timeoutMs?: number;
}

/**
 * Runs one contender (bench/src/contender.ts) in a fresh `node --expose-gc` process. Rejects with the
 * last line it printed to stderr when it fails (exits without a result) or times out.
 */
export function runContender(
  name: string,
  url: string,
  pods: number,
  events: number,
  options: RunOptions = {},
): Promise<ContenderResult> {
  const child = fork(path.join(here, 'contender.js'), [name, url, String(pods), String(events)], {
    execArgv: ['--expose-gc', '--max-old-space-size=8192'],
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    let result: ContenderResult | undefined;
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.on('message', (m: ContenderResult) => (result = m));
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result) {
        resolve(result);
        return;
      }
      const why = timedOut
        ? `timed out after ${options.timeoutMs} ms`
        : (stderr
            .split('\n')
            .map((l) => l.trim())
            .find((l) => /Error|error:/.test(l)) ?? `exited with ${code}`);
      reject(new Error(`${name}: ${why}`));
    });
  });
}
