import type { KinformerError } from '@kinformer/core';
import { notAcceptableError } from '../api/statusErrors.js';

/** What a response carries: full objects, `PartialObjectMetadata(List)`, or a server-side `Table` (§8). */
export type Representation = 'full' | 'partial' | 'table';

/** What is being answered: one object, a list, or a watch stream. */
export type ResponseTarget = 'object' | 'list' | 'watch';

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(accept: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const clause of accept.split(',')) {
    const [typePart, ...paramParts] = clause.split(';');
    const type = (typePart ?? '').trim().toLowerCase();
    if (type === '') continue;
    const params: Record<string, string> = {};
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq === -1) continue;
      params[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
    out.push({ type, params });
  }
  return out;
}

const JSON_TYPES = new Set(['application/json', 'application/*', '*/*']);

/**
 * Chooses the representation from the `Accept` header as kube-apiserver does for JSON: the first
 * JSON media range the server can serve wins. `as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
 * (or `v1beta1`) gives metadata-only lists, `as=PartialObjectMetadata` metadata-only objects and watch
 * events; asking for the list form of a single object (or the reverse on a list) is 406, as on the
 * real server. `as=Table` gives a server-side Table (`table.ts`). Other transformations are not
 * served: such ranges are skipped, and when nothing else is acceptable the answer is 406.
 */
export function negotiate(
  accept: string | undefined,
  target: ResponseTarget,
): Representation | KinformerError {
  if (accept === undefined || accept.trim() === '') return 'full';
  for (const range of parseAccept(accept)) {
    if (!JSON_TYPES.has(range.type)) continue;
    const as = range.params.as;
    if (as === undefined) return 'full';
    const group = range.params.g;
    const version = range.params.v;
    if (group !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1')) continue;
    // handlers/response.go `doTransformObject`: a Table of one object, a list or each watch event.
    if (as === 'Table') return 'table';
    if (as === 'PartialObjectMetadataList') {
      if (target === 'object')
        return notAcceptableError(
          'you requested PartialObjectMetadataList, but the requested object is not a list',
        );
      return 'partial';
    }
    if (as === 'PartialObjectMetadata') {
      if (target === 'list')
        return notAcceptableError('you requested PartialObjectMetadata, but the requested object is a list');
      return 'partial';
    }
  }
  return notAcceptableError('only the following media types are accepted: application/json');
}
