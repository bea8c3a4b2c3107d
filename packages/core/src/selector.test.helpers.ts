import { ErrorCodes, KinformerError } from './errors.js';

/** What `fn` threw, checked to be a `KinformerError` (fails the test when it throws nothing). */
export function thrown(fn: () => unknown): KinformerError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KinformerError);
    return err as KinformerError;
  }
  throw new Error('expected a KinformerError');
}

/** What `fn` threw, checked to be a `KinformerError` with code `ERR_INVALID_SELECTOR`. */
export function invalidSelector(fn: () => unknown): KinformerError {
  const err = thrown(fn);
  expect(err.code).toBe(ErrorCodes.INVALID_SELECTOR);
  return err;
}

/** Asserts that `parse(selector.toString())` equals `selector` and that the canonical text is a fixed point. */
export function expectRoundTrip<S extends { readonly requirements: unknown; toString(): string }>(
  parse: (text: string) => S,
  selector: S,
): void {
  const again = parse(selector.toString());
  expect(again).toEqual(selector);
  expect(again.requirements).toEqual(selector.requirements);
  expect(again.toString()).toBe(selector.toString());
}
