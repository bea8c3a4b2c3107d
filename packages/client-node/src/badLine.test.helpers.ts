import { KinformerError } from '@kinformer/core';

/**
 * Asserts that `error` is the typed error of the bad third line of a pods watch: `code`, where it was
 * (resource, verb, line 3) and a short excerpt. Returns it for further checks.
 */
export function expectBadThirdLine(error: unknown, code: string): KinformerError {
  expect(error).toBeInstanceOf(KinformerError);
  const err = error as KinformerError;
  expect(err.code).toBe(code);
  expect(err.details).toMatchObject({ resource: 'pods.v1', verb: 'watch', line: 3 });
  expect(typeof err.details?.excerpt).toBe('string');
  return err;
}
