import { isExpiredError, isKinformerError, type KubeObject } from '@kinformer/core';
import type { Reflector } from './reflector.js';

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
export type WatchErrorHandler<T extends KubeObject = KubeObject> = (
  reflector: Reflector<T>,
  error: unknown,
) => void;

/**
 * client-go's `DefaultWatchErrorHandler`: a 410 Expired/Gone is logged at `debug` ("watch closed",
 * the reflector relists), anything else at `error` ("failed to list/watch").
 */
export function defaultWatchErrorHandler<T extends KubeObject>(
  reflector: Reflector<T>,
  error: unknown,
): void {
  const code = isKinformerError(error) ? error.code : undefined;
  if (isExpiredError(error)) {
    reflector.logger.debug({ err: error, code }, 'watch closed: the resourceVersion expired; relisting');
    return;
  }
  reflector.logger.error({ err: error, code }, 'failed to list and watch; retrying after backoff');
}
