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
 * What `fn` throws, checked to be a `type` (default {@link KinformerError}); fails the test when `fn`
 * returns, and rethrows an error of another type.
 */
export function thrown(fn: () => unknown): KinformerError;
export function thrown<E>(fn: () => unknown, type: new (...args: never[]) => E): E;
export function thrown(fn: () => unknown, type: new (...args: never[]) => unknown = KinformerError): unknown {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}, nothing was thrown`);
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
