import { hasObjectMeta, validateResourceVersion } from '@kinformer/core/internal';

/**
 * Checks the resourceVersions of a decoded LIST response: the list's `metadata.resourceVersion`
 * and every item's. Throws `ERR_BAD_RESOURCE_VERSION` (see `validateResourceVersion` in
 * `@kinformer/core`) for the first one that is present but not a string, so a number, `null` or raw
 * `1e309` never reaches the cache or the next watch's `resourceVersion=`. `details` (resource, verb)
 * go on the error, with the item's index when an item is at fault.
 */
export function validateListResourceVersions(
  list: { metadata?: unknown; items: unknown[] },
  details: Record<string, unknown>,
): void {
  const meta = list.metadata;
  if (typeof meta === 'object' && meta !== null) {
    validateResourceVersion(
      (meta as { resourceVersion?: unknown }).resourceVersion,
      'list metadata',
      details,
    );
  }
  const items = list.items;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (hasObjectMeta(item)) {
      const rv: unknown = item.metadata.resourceVersion;
      // Details only for a bad one: this runs for every item of every LIST.
      if (rv !== undefined && typeof rv !== 'string')
        validateResourceVersion(rv, `list item ${i}`, { ...details, item: i });
    }
  }
}
