import { realClock, type Clock } from '@kinformer/core';

/**
 * One named check (kube's `healthz.HealthChecker`). `check()` returns `undefined` when healthy and
 * a short reason when not; a check that throws fails with the error's message. Checks run when a
 * probe asks, so keep them cheap and synchronous.
 */
export interface HealthCheck {
  /** Shown as `[+]name ok` / `[-]name failed` and addressable as `/readyz/<name>`. */
  readonly name: string;
  check(): string | undefined;
}

/** The outcome of one check in a {@link HealthReport}. */
export interface HealthCheckResult {
  name: string;
  ok: boolean;
  /** Why it failed (absent when ok). Not shown on the HTTP endpoints, which withhold reasons. */
  reason?: string;
  /** True when the caller excluded this check (it then counts as ok). */
  excluded?: boolean;
}

/** What {@link runHealthChecks} returns: `ok` when every check that ran is ok. */
export interface HealthReport {
  ok: boolean;
  checks: HealthCheckResult[];
  /** Names given in `exclude` that match no check. */
  unknownExcludes: string[];
}

/** What the informer checks read (a `SharedIndexInformer` has it). */
export interface CheckedInformer {
  readonly name: string;
  hasSynced(): boolean;
  isWatching(): boolean;
}

/** What {@link leaderCheck} reads (a `LeaderElector` has it): an error while it is stuck leading. */
export interface CheckedLeaderElector {
  check(maxTolerableExpiredMs?: number): Error | undefined;
}

/** Runs `checks` in order (skipping `exclude`d names) and collects the results. */
export function runHealthChecks(
  checks: readonly HealthCheck[],
  options: { exclude?: Iterable<string> } = {},
): HealthReport {
  const exclude = new Set(options.exclude ?? []);
  const results: HealthCheckResult[] = [];
  for (const c of checks) {
    if (exclude.delete(c.name)) {
      results.push({ name: c.name, ok: true, excluded: true });
      continue;
    }
    let reason: string | undefined;
    try {
      reason = c.check();
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
    }
    results.push(reason === undefined ? { name: c.name, ok: true } : { name: c.name, ok: false, reason });
  }
  return { ok: results.every((r) => r.ok), checks: results, unknownExcludes: [...exclude] };
}

/** Always healthy: kube's `ping` check, which shows the process answers at all. */
export const pingCheck: HealthCheck = { name: 'ping', check: () => undefined };

/**
 * Fails until every informer has synced (kube's `informer-sync` readiness check); the reason names
 * the ones that have not. For `/readyz`: a replica whose caches are still filling should not get
 * traffic, but is not broken.
 */
export function syncedCheck(informers: Iterable<CheckedInformer>, name = 'informer-sync'): HealthCheck {
  const list = [...informers];
  return {
    name,
    check: () => {
      const pending = list.filter((i) => !i.hasSynced()).map((i) => i.name);
      return pending.length === 0
        ? undefined
        : `${pending.length} informers not synced: ${pending.join(', ')}`;
    },
  };
}

/** Options of {@link watchingCheck}. */
export interface WatchingCheckOptions {
  /** The check's name. Default `'informer-watch'`. */
  name?: string;
  /**
   * How long an informer may be seen without an open watch before the check fails, ms. Default
   * 30 s: a rewatch after a clean close or a relist after a 410 takes well under that, a server
   * that is down or refusing takes longer.
   */
  graceMs?: number;
  clock?: Clock;
}

/**
 * Fails when an informer has been seen without an open watch for longer than `graceMs`, counting
 * from the first check that found it not watching (the check keeps no timer: it compares what it
 * saw on earlier calls). A probe every few seconds is what makes it precise.
 */
export function watchingCheck(
  informers: Iterable<CheckedInformer>,
  options: WatchingCheckOptions = {},
): HealthCheck {
  const list = [...informers];
  const graceMs = options.graceMs ?? 30_000;
  const clock = options.clock ?? realClock;
  const notWatchingSince = new Map<CheckedInformer, number>();
  return {
    name: options.name ?? 'informer-watch',
    check: () => {
      const now = clock.now();
      const down: string[] = [];
      for (const informer of list) {
        if (informer.isWatching()) {
          notWatchingSince.delete(informer);
          continue;
        }
        const since = notWatchingSince.get(informer) ?? now;
        notWatchingSince.set(informer, since);
        if (now - since > graceMs) down.push(`${informer.name} (${Math.round((now - since) / 1000)} s)`);
      }
      return down.length === 0 ? undefined : `not watching: ${down.join(', ')}`;
    },
  };
}

/**
 * client-go's `leaderelection.HealthzAdaptor`: fails while the elector believes it leads but has not
 * renewed for longer than the lease duration plus `maxTolerableExpiredMs` (its renew loop is stuck).
 * A candidate that does not lead is healthy. For `/healthz` (restart a stuck leader), not `/readyz`.
 */
export function leaderCheck(
  elector: CheckedLeaderElector,
  options: { name?: string; maxTolerableExpiredMs?: number } = {},
): HealthCheck {
  return {
    name: options.name ?? 'leader-election',
    check: () => elector.check(options.maxTolerableExpiredMs ?? 0)?.message,
  };
}
