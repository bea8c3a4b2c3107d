/** kinformer: placeholder until the informer lands. */
import type { Contender } from './types.js';

export function kinformer(_serverUrl: string): Contender {
  throw new Error('kinformer contender not wired yet');
}
