import { ErrorCodes, KinformerError } from './errors.js';

/**
 * Throws `ERR_INVALID_SELECTOR` (position 0) unless `text` is a string: JavaScript callers can pass
 * anything to `parseLabelSelector` / `parseFieldSelector`.
 */
export function assertSelectorText(text: unknown, kind: 'label' | 'field'): asserts text is string {
  if (typeof text !== 'string') {
    throw new KinformerError(
      ErrorCodes.INVALID_SELECTOR,
      `invalid ${kind} selector: expected a string, got ${typeof text}`,
      { details: { selector: text, position: 0 } },
    );
  }
}
