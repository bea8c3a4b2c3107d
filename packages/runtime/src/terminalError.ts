import { ErrorCodes, KinformerError } from '@kinformer/core';

/**
 * Throw it from a reconcile when retrying cannot help (an invalid spec, a missing dependency that
 * only a person can create): the runtime logs it, counts it in
 * `controller_runtime_terminal_reconcile_errors_total` and does not retry the key until the object
 * changes again (controller-runtime's `reconcile.TerminalError`).
 */
export class TerminalError extends KinformerError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCodes.TERMINAL, message, options.cause === undefined ? {} : { cause: options.cause });
  }
}

/** True for a {@link TerminalError} (or any `KinformerError` with code `ERR_TERMINAL`). */
export function isTerminalError(err: unknown): err is KinformerError {
  return err instanceof KinformerError && err.code === ErrorCodes.TERMINAL;
}
