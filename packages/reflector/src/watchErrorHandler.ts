import { isKinformerError, type KubeObject, type Logger } from '@kinformer/core';
import { isExpiredError } from '@kinformer/core/internal';
import { faultSummary } from './reflectorErrors.js';

/** What a {@link WatchErrorHandler} can see of the reflector that calls it. */
export interface ReflectorInfo {
  /** The name used in logs. */
  readonly name: string;
  /** `"apiVersion, Kind=kind"` of the expected type, or `"<unspecified>"`. */
  readonly typeDescription: string;
  /** The reflector's logger. */
  readonly logger: Logger;
  /** The resourceVersion of the last LIST or watch event. */
  lastSyncResourceVersion(): string;
  /** True while a watch stream is open and feeding the store. */
  isWatching(): boolean;
  /** Failures since the reflector last made progress, this one included (1 for the first of a streak). */
  consecutiveFailures(): number;
}

/**
 * Called with every error that ends a list-and-watch cycle (client-go's `WatchErrorHandler`): a failed
 * LIST, a watch that could not be started for a reason other than a connection failure or 429, a store
 * `replace` that threw. After the handler returns, the reflector waits one backoff step and relists.
 *
 * Unlike client-go, it is also called with every `ERR_CONNECTION` that prevents a watch (or streaming
 * list) from starting, e.g. an exec credential plugin that stopped working after the first LIST. Those
 * do not end the cycle: the reflector backs off and starts the watch again from the same
 * resourceVersion, without relisting; the handler only makes the failure visible.
 *
 * Errors *during* a watch (410, internal errors, malformed lines, stalls) are handled and logged by the
 * reflector itself and never reach the handler. The handler must return quickly; anything it throws is
 * logged and ignored. It is never called after the run signal aborted.
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- T names the reflector's object type for callers
export type WatchErrorHandler<T extends KubeObject = KubeObject> = (
  reflector: ReflectorInfo,
  error: unknown,
) => void;

/** The last failure the default handler logged at error, per reflector. */
const lastLogged = new WeakMap<ReflectorInfo, string>();

/**
 * client-go's `DefaultWatchErrorHandler`, without its repetition: a 410 Expired/Gone is logged at
 * `debug` (the reflector relists); any other failure at `error` once — the first of a streak of
 * failures, or one whose code or message differs from the last one logged — and at `debug` while the
 * same failure repeats. The reflector logs one `info` line when it recovers.
 */
export function defaultWatchErrorHandler(reflector: ReflectorInfo, error: unknown): void {
  const code = isKinformerError(error) ? error.code : undefined;
  if (isExpiredError(error)) {
    reflector.logger.debug(
      { err: faultSummary(error), code },
      'watch closed: the resourceVersion expired; relisting',
    );
    return;
  }
  const key = `${code ?? ''}\u0000${error instanceof Error ? error.message : String(error)}`;
  const failures = reflector.consecutiveFailures();
  if (failures <= 1 || lastLogged.get(reflector) !== key) {
    lastLogged.set(reflector, key);
    reflector.logger.error(
      { err: faultSummary(error), code, failures },
      'failed to list and watch; retrying after backoff',
    );
    return;
  }
  reflector.logger.debug(
    { err: faultSummary(error), code, failures },
    'failed to list and watch again (same failure); retrying after backoff',
  );
}
