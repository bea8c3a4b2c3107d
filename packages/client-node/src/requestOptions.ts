import { Observable } from '@kubernetes/client-node';
import type {
  ConfigurationOptions,
  ObservableMiddleware,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';

/**
 * Per-request options for a `@kubernetes/client-node` API call (its last argument) that abort the
 * HTTP request when `signal` aborts; the call then rejects (turn it into `ERR_ABORTED` with
 * `apiError(err, { signal })`). The middleware is appended after client-node's own, so
 * authentication and the configured server stay as they are. Pass a controller's run signal, so a
 * write in flight when leadership ends is cancelled instead of landing late. `undefined` gives
 * `undefined` (no options).
 */
export function requestOptions(signal: AbortSignal): ConfigurationOptions;
export function requestOptions(signal: AbortSignal | undefined): ConfigurationOptions | undefined;
export function requestOptions(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (signal === undefined) return undefined;
  const middleware: ObservableMiddleware = {
    pre: (context: RequestContext) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}
