import { isKinformerError, parseShardSelector, type ShardSelector } from '@kinformer/core';
import { badRequestError } from '../api/statusErrors.js';
import type { StoredEntry } from '../storage/storedEntry.js';

/**
 * KEP-5866 `shardSelector` on LIST, WATCH and watch-list (alpha in 1.36, gate `ShardedListAndWatch`).
 *
 * - Decoding: the parameter is parsed while the query is converted to internal `ListOptions`
 *   (`k8s.io/apimachinery/pkg/apis/meta/internalversion/conversion.go`,
 *   `Convert_v1_ListOptions_To_internalversion_ListOptions`: `invalid shard selector: <parser error>`),
 *   so a bad selector is a 400 BadRequest (`handlers/get.go` `ListResource`: a parameter-decoding error
 *   is `errors.NewBadRequest(err.Error())`) before any other validation. The parser is
 *   `k8s.io/apiserver/pkg/sharding.Parse` (see `parseShardSelector` in `@kinformer/core`).
 * - With the gate off (or an older server) the parameter is an unknown query parameter: ignored, the
 *   full collection is served, and no `shardInfo` is written.
 * - Filtering: `shardSelector.Matches` hashes `metadata.uid` or `metadata.namespace` (FNV-1a 64) and
 *   keeps objects in one of the ranges; LIST pages, watch events and watch-list initial events alike.
 * - Echo: `ListMeta.shardInfo.selector` is the applied selector's `String()`.
 */
export function decodeShardSelector(text: string | null, enabled: boolean): ShardSelector | undefined {
  // The conversion parses only a non-empty value (`if in.ShardSelector != ""`): an empty parameter is absent.
  if (!enabled || text === null || text === '') return undefined;
  try {
    return parseShardSelector(text);
  } catch (err) {
    if (isKinformerError(err)) throw badRequestError(`invalid shard selector: ${err.message}`);
    throw err;
  }
}

/** True when the stored object falls in the selector's ranges. */
export function shardMatches(selector: ShardSelector, entry: StoredEntry): boolean {
  return selector.matchesHash(entry.shardHash(selector.field));
}
