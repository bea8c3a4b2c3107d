/** Something that can wake a {@link waitFor} early: an emitter and the event names to listen to. */
export interface WakeSource {
  emitter: {
    on(event: string, listener: () => void): unknown;
    off(event: string, listener: () => void): unknown;
  };
  events: readonly string[];
}

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** What is awaited, for the error message. */
  what?: string;
  /** Give up after this many real milliseconds (default 5 000; generous for a loaded 2-core machine). */
  timeoutMs?: number;
  /** Re-check period in real milliseconds (default 2). The wait sleeps in between: no busy loop. */
  intervalMs?: number;
  /** Re-check at once whenever one of these emits (an informer's `change`, a server's `request`). */
  wakeOn?: readonly WakeSource[];
  /** Describes the state when the wait fails (appended to the error message as JSON). */
  describe?: () => unknown;
  /** Prefixed to the timeout message (`FakeListerWatcher: timed out …`). */
  label?: string;
}

/**
 * Resolves once `condition()` is true (or resolves to true). It is checked at once, then on every
 * wake event and every `intervalMs` on a real timer (never in a `setImmediate` spin, which would
 * take a whole core); an asynchronous condition is never checked twice at the same time. Rejects
 * after `timeoutMs` with what was awaited and the state `describe` gives, or as soon as `condition`
 * throws. Every timer and listener is removed when it settles.
 *
 * `waitFor(cond, 'what', 2000)` is short for `waitFor(cond, { what: 'what', timeoutMs: 2000 })`.
 * The one wait of the workspace: `@kinformer/test-tools` re-exports it, `FakeListerWatcher` uses it.
 */
export function waitFor(
  condition: () => boolean | Promise<boolean>,
  whatOrOptions: string | WaitForOptions = {},
  timeoutMs?: number,
): Promise<void> {
  const options: WaitForOptions =
    typeof whatOrOptions === 'string' ? { what: whatOrOptions } : { ...whatOrOptions };
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  const limit = options.timeoutMs ?? 5_000;
  const what = options.what ?? 'a condition';
  return new Promise<void>((resolve, reject) => {
    let done = false;
    let checking = false;
    const finish = (error?: unknown): void => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(deadline);
      for (const w of options.wakeOn ?? []) for (const e of w.events) w.emitter.off(e, check);
      if (error === undefined) resolve();
      else reject(error instanceof Error ? error : new Error('the condition threw', { cause: error }));
    };
    const settle = (met: boolean): void => {
      checking = false;
      if (met) finish();
    };
    function check(): void {
      if (done || checking) return;
      try {
        const met = condition();
        if (typeof met === 'boolean') settle(met);
        else {
          checking = true;
          met.then(settle, (err: unknown) => finish(err ?? new Error('the condition threw')));
        }
      } catch (err) {
        finish(err ?? new Error('the condition threw'));
      }
    }
    const poll = setInterval(check, options.intervalMs ?? 2);
    const deadline = setTimeout(() => {
      const state = options.describe === undefined ? '' : `: ${JSON.stringify(options.describe())}`;
      const label = options.label === undefined ? '' : `${options.label}: `;
      finish(new Error(`${label}timed out after ${limit} ms waiting for ${what}${state}`));
    }, limit);
    for (const w of options.wakeOn ?? []) for (const e of w.events) w.emitter.on(e, check);
    check();
  });
}
