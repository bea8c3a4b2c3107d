import type { ReflectorStats } from './reflectorOptions.js';

/**
 * The reflector's list/watch cycle as one transition table (kube-rs `watcher::State` + `step`; client-go's
 * one switch in `ListAndWatch`/`watch`). Each phase performs its requests and ends with an
 * {@link Outcome}; {@link decide} maps (phase, outcome) to a {@link Transition}; the reflector applies it
 * in one place (`Reflector.apply`): counts, logs, reports to the watch error handler, waits, and moves on.
 * A new fault kind is one row here and one row in `transitions.test.ts`; `docs/reflector.md` shows the
 * same table.
 *
 * Phases:
 * - `list` — a LIST at the cached version (`"0"` first), the last synced version, or the latest (`""`)
 *   once the last one proved unavailable (`listState.ts`); a 410 or too-large answer is retried at once at
 *   `""` inside the phase, as client-go does;
 * - `stream` — a streaming list (`sendInitialEvents=true`, `useWatchList`);
 * - `watch` — a watch from the last synced version (or the stream a streaming list handed over); while
 *   its stream is open and feeding the store the reflector is `watching` (`isWatching()`);
 * - `backoff` — one step of the backoff (at least `Retry-After`), then the next phase.
 */
export type PhaseKind = 'list' | 'stream' | 'watch' | 'backoff';

/** How a phase ended. */
export type Outcome =
  // list
  | 'listed'
  | 'list-failed'
  | 'list-unavailable'
  // streaming list
  | 'stream-synced'
  | 'stream-throttled'
  | 'stream-unreachable'
  | 'stream-expired'
  | 'stream-too-large'
  | 'stream-stalled'
  | 'stream-ended-early'
  | 'stream-failed'
  // watch request
  | 'start-stalled'
  | 'start-throttled'
  | 'start-unreachable'
  | 'start-unavailable'
  | 'start-expired'
  | 'start-expired-after-progress'
  | 'start-expired-after-outage'
  | 'start-failed'
  // watch stream
  | 'ended'
  | 'stalled'
  | 'resync-failed'
  | 'expired'
  | 'expired-after-progress'
  | 'expired-after-outage'
  | 'throttled'
  | 'malformed'
  | 'malformed-again'
  | 'internal-retry'
  | 'very-short'
  | 'failed';

/**
 * What comes next: `relist` starts the list phase over (a streaming list when `useWatchList` is on,
 * else a LIST), ending the watch cycle; `list` is a LIST (the streaming list's fallback); `stream` a
 * streaming list again; `watch` another watch in the same cycle; `cycle` a new watch cycle after a
 * successful list (taking over the streaming list's stream, if any).
 */
export type Next = 'relist' | 'list' | 'stream' | 'watch' | 'cycle';

/**
 * How the transition is logged: `warn`/`debug` always at that level; `streak` at `warn` when it starts
 * a streak of failures and at `debug` while the streak goes on; `stall` the stall warning with its limit
 * and cadence.
 */
export type LogLevel = 'warn' | 'debug' | 'streak' | 'stall';

/** One row of the table. */
export interface Transition {
  /** The phase the outcome belongs to. */
  readonly from: PhaseKind;
  readonly next: Next;
  /** `step`: a failure — one backoff step (at least `Retry-After`) before `next`; `none`: at once. */
  readonly wait: 'none' | 'step';
  /** Passed to the `watchErrorHandler` (after the failure is counted). */
  readonly report: boolean;
  /** The counter of `stats()` it increments, if any. */
  readonly counter: keyof ReflectorStats | undefined;
  /** `listed`/`stream-synced`: progress, unless the last watch delivered nothing (`RecoveryPolicy`). */
  readonly progress: boolean;
  readonly log: { readonly level: LogLevel; readonly msg: string } | undefined;
}

interface RowOptions {
  readonly report?: boolean;
  readonly counter?: keyof ReflectorStats;
  readonly progress?: boolean;
  readonly log?: readonly [LogLevel, string];
}

function row(from: PhaseKind, next: Next, wait: 'none' | 'step', options: RowOptions = {}): Transition {
  return {
    from,
    next,
    wait,
    report: options.report ?? false,
    counter: options.counter,
    progress: options.progress ?? false,
    log: options.log === undefined ? undefined : { level: options.log[0], msg: options.log[1] },
  };
}

const RELISTING = 'watch ended with an error; relisting';
/** A 410 in the stream (logged with the wait, if any) and one to the watch request (reported). */
const EXPIRED = {
  counter: 'expired410',
  log: ['debug', 'watch closed: resourceVersion expired; relisting'],
} as const satisfies RowOptions;
const START_EXPIRED = { report: true, counter: 'expired410' } as const satisfies RowOptions;

/**
 * The table. Which request follows each fault is client-go 1.36's — except a 5xx to a watch request early
 * in a streak of failures (`start-unavailable`: rewatch, not relist) and a 5xx to the LIST that follows a
 * later one (`list-unavailable`: back to the watch), see `STORM_RETRY`; how long it waits is kinformer's:
 * unlike client-go, a 410 after the cycle's watches delivered something (`expired-after-progress`,
 * `start-expired-after-progress`) relists without a backoff step, and so does the first 410 of a streak
 * of other failures (`*-after-outage`: the server answers again, and the version is gone). That costs a
 * server at most one LIST per watch that delivered something since the previous LIST, plus one per
 * streak of failures; any other 410 before a delivery waits a step.
 */
export const TRANSITIONS: Readonly<Record<Outcome, Transition>> = Object.freeze({
  listed: row('list', 'cycle', 'none', { progress: true }),
  'list-failed': row('list', 'relist', 'step', { report: true }),
  // A LIST after a watch request answered with a 5xx (once the streak is past STORM_RETRY.flatMs) also
  // failed with a 5xx: rewatch from the last version, so that LIST and WATCH take turns.
  'list-unavailable': row('list', 'watch', 'step', { report: true }),

  'stream-synced': row('stream', 'cycle', 'none', { progress: true }),
  'stream-throttled': row('stream', 'stream', 'step', {
    log: ['debug', 'streaming list failed; backing off'],
  }),
  'stream-unreachable': row('stream', 'stream', 'step', { report: true }),
  'stream-expired': row('stream', 'stream', 'none', { counter: 'expired410' }),
  'stream-too-large': row('stream', 'stream', 'none'),
  'stream-stalled': row('stream', 'stream', 'none', { counter: 'stalls', log: ['stall', ''] }),
  'stream-ended-early': row('stream', 'stream', 'none'),
  'stream-failed': row('stream', 'list', 'none', {
    log: [
      'warn',
      'the streaming list failed; falling back to LIST/WATCH (making progress beats deadlocking)',
    ],
  }),

  'start-stalled': row('watch', 'watch', 'none', {
    counter: 'stalls',
    log: ['warn', 'the watch request got no answer; sending it again'],
  }),
  'start-throttled': row('watch', 'watch', 'step', {
    log: ['debug', 'could not start the watch; backing off and re-watching'],
  }),
  'start-unreachable': row('watch', 'watch', 'step', { report: true }),
  // A 5xx to the watch request in the first STORM_RETRY.flatMs of a streak: the version is still good.
  'start-unavailable': row('watch', 'watch', 'step', { report: true }),
  // A 410 says the version is gone, not that the server is failing: when a watch of this cycle delivered
  // something since the LIST, relist at once (client-go waits one step first, see the `*-after-progress`
  // rows); a 410 before any delivery waits, so a server that expires every watch sees the backoff grow.
  'start-expired': row('watch', 'relist', 'step', START_EXPIRED),
  'start-expired-after-progress': row('watch', 'relist', 'none', START_EXPIRED),
  // The first 410 after a streak of other failures (5xx, 429, unreachable…): the server answers again.
  // Waiting would sit out the outage's last step twice — 30–60 s after a long one (RecoveryPolicy.expired).
  'start-expired-after-outage': row('watch', 'relist', 'none', START_EXPIRED),
  'start-failed': row('watch', 'relist', 'step', { report: true }),

  ended: row('watch', 'watch', 'none'),
  stalled: row('watch', 'watch', 'none', { counter: 'stalls', log: ['stall', ''] }),
  'resync-failed': row('watch', 'relist', 'step', {
    log: ['streak', 'store resync failed; ending the watch and relisting'],
  }),
  expired: row('watch', 'relist', 'step', EXPIRED),
  'expired-after-progress': row('watch', 'relist', 'none', EXPIRED),
  'expired-after-outage': row('watch', 'relist', 'none', EXPIRED),
  throttled: row('watch', 'watch', 'step', {
    log: ['debug', 'watch answered 429; backing off and re-watching'],
  }),
  malformed: row('watch', 'watch', 'step', {
    counter: 'malformed',
    log: ['streak', 'bad watch event; ending this watch and resuming from the last good resourceVersion'],
  }),
  'malformed-again': row('watch', 'relist', 'step', {
    counter: 'malformed',
    log: ['warn', 'bad watch event again at the same resourceVersion; relisting'],
  }),
  'internal-retry': row('watch', 'watch', 'none', {
    log: ['debug', 'watch ended with an internal error; retrying the watch'],
  }),
  'very-short': row('watch', 'relist', 'step', { counter: 'veryShortWatches', log: ['streak', RELISTING] }),
  failed: row('watch', 'relist', 'step', { log: ['streak', RELISTING] }),
});

/**
 * The transition for `outcome` in phase `from`: a pure lookup in {@link TRANSITIONS}. Throws when the
 * outcome does not belong to the phase (a bug in the phase that reported it).
 */
export function decide(from: PhaseKind, outcome: Outcome): Transition {
  const transition = TRANSITIONS[outcome];
  if (transition.from !== from) {
    throw new Error(
      `reflector: outcome ${outcome} cannot end phase ${from} (it belongs to ${transition.from})`,
    );
  }
  return transition;
}
