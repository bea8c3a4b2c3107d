import { inspect } from 'node:util';
import { KinformerError } from '@kinformer/core';

// Looking into errors a test caught.

/** What `promise` rejects with; throws (failing the test) when it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${inspect(value, { depth: 1 })}`);
    },
    (err: unknown) => err,
  );
}

/** The {@link KinformerError} `promise` rejects with; throws when it fulfils or rejects with another error. */
export async function kinformerRejection(promise: Promise<unknown>): Promise<KinformerError> {
  const err = await rejection(promise);
  if (err instanceof KinformerError) return err;
  throw new Error(`expected a KinformerError, got ${inspect(err, { depth: 1 })}`);
}

/**
 * The error and its `cause` chain, outermost first, at most ten deep (client-node wraps fetch's
 * TypeError around a TLS or socket error, which wraps Node's own).
 */
export function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (
    let e: unknown = err;
    e !== undefined && e !== null && out.length < 10;
    e = (e as { cause?: unknown }).cause
  )
    out.push(e);
  return out;
}
