import { Observable } from '@kubernetes/client-node';
import type {
  ConfigurationOptions,
  ObservableMiddleware,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';

/**
 * Per-request options for `@kubernetes/client-node` API calls that abort the HTTP request when
 * `signal` aborts (appended after client-node's own middleware). A controller passes its run
 * signal, so a write in flight when leadership ends is cancelled instead of landing late.
 */
export function requestOptions(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context: RequestContext) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}
