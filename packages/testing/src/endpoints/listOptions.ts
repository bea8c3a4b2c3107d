import {
  parseFieldSelector,
  parseLabelSelector,
  type FieldSelector,
  type LabelSelector,
  type ShardSelector,
} from '@kinformer/core';
import { fieldSelectorSyntaxError } from '../registry/fieldSets.js';
import { labelSelectorError } from '../api/labelSelectorErrors.js';
import type { ResourceType } from '../registry/resourceRegistry.js';
import { decodeShardSelector, shardMatches } from './shardSelectorParam.js';
import {
  badRequestError,
  forbiddenField,
  listOptionsInvalidError,
  notSupportedField,
  type FieldError,
} from '../api/statusErrors.js';
import type { StoredEntry } from '../storage/storedEntry.js';

/** `ListOptions` of one LIST or WATCH request, decoded, defaulted and validated. */
export interface ListOptionsQuery {
  watch: boolean;
  /** `''` when unset. */
  resourceVersion: string;
  /** `''` when unset; after watch-list defaulting `NotOlderThan`. */
  resourceVersionMatch: string;
  /** 0 = no limit. */
  limit: number;
  /** `''` when unset. */
  continueToken: string;
  /** `undefined` when the parameter was absent (after watch-list defaulting `true` for legacy watches). */
  sendInitialEvents: boolean | undefined;
  /** True when `sendInitialEvents` was set by the server's defaulting, not by the client. */
  defaultedInitialEvents: boolean;
  allowWatchBookmarks: boolean;
  /** 0 = none. */
  timeoutSeconds: number;
  labelSelector: LabelSelector | undefined;
  fieldSelector: FieldSelector | undefined;
  /** KEP-5866 `shardSelector`; undefined when absent or ignored (gate off). */
  shardSelector: ShardSelector | undefined;
  pretty: boolean;
}

/** apimachinery's boolean query parsing: `0` or `false` (any case) is false, anything else (even `''`) true. */
export function parseQueryBool(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}

function parseInt64(value: string | null): number {
  if (value === null || value === '') return 0;
  if (!/^[+-]?\d+$/.test(value))
    throw badRequestError(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  return Number(value);
}

/** Matches an object against the request's selectors (namespace scope is checked by the caller). */
export type EntryFilter = (entry: StoredEntry) => boolean;

/** The filter of `query`'s selectors, or undefined when there are none. */
export function selectorFilter(query: ListOptionsQuery): EntryFilter | undefined {
  const label = query.labelSelector;
  const field = query.fieldSelector;
  const shard = query.shardSelector;
  if (!label && !field && !shard) return undefined;
  return (entry) =>
    (!label || label.matches(entry.labels())) &&
    (!field || field.matches(entry.fields())) &&
    (!shard || shardMatches(shard, entry));
}

/**
 * A label or field selector parameter: the server's syntax error, else the parser's error, as 400
 * BadRequest; an empty selector (selects everything) is undefined.
 */
function parseSelector<S extends { isEmpty(): boolean }>(
  text: string,
  syntaxError: (text: string) => string | undefined,
  parse: (text: string) => S,
): S | undefined {
  const syntax = syntaxError(text);
  if (syntax !== undefined) throw badRequestError(syntax);
  let selector: S;
  try {
    selector = parse(text);
  } catch (err) {
    throw badRequestError(err instanceof Error ? err.message : String(err));
  }
  return selector.isEmpty() ? undefined : selector;
}

/**
 * Decodes, defaults and validates the query of a LIST/WATCH request the way kube-apiserver's
 * `ListResource` does, in the same order: parameter decoding (400 for a bad selector or integer),
 * watch-list defaulting, `ValidateListOptions` (422, §3.3/§4.1), then the field-label conversion of
 * the kind (400 `field label not supported: …`).
 */
export function decodeListOptions(
  params: URLSearchParams,
  type: ResourceType,
  options: { forceWatch: boolean; watchList: boolean; shardedListAndWatch?: boolean },
): ListOptionsQuery {
  const labelText = params.get('labelSelector') ?? '';
  const labelSelector: LabelSelector | undefined =
    labelText.trim() === '' ? undefined : parseSelector(labelText, labelSelectorError, parseLabelSelector);
  const fieldText = params.get('fieldSelector') ?? '';
  const fieldSelector: FieldSelector | undefined =
    fieldText === '' ? undefined : parseSelector(fieldText, fieldSelectorSyntaxError, parseFieldSelector);
  const shardSelector = decodeShardSelector(
    params.get('shardSelector'),
    options.shardedListAndWatch ?? false,
  );
  const watch = options.forceWatch || parseQueryBool(params.get('watch')) === true;
  const timeoutSeconds = parseInt64(params.get('timeoutSeconds'));
  const limit = parseInt64(params.get('limit'));
  const query: ListOptionsQuery = {
    watch,
    resourceVersion: params.get('resourceVersion') ?? '',
    resourceVersionMatch: params.get('resourceVersionMatch') ?? '',
    limit: limit > 0 ? limit : 0,
    continueToken: params.get('continue') ?? '',
    sendInitialEvents: parseQueryBool(params.get('sendInitialEvents')),
    defaultedInitialEvents: false,
    allowWatchBookmarks: parseQueryBool(params.get('allowWatchBookmarks')) === true,
    timeoutSeconds: timeoutSeconds > 0 ? timeoutSeconds : 0,
    labelSelector,
    fieldSelector,
    shardSelector,
    pretty: parseQueryBool(params.get('pretty')) === true,
  };
  // SetListOptionsDefaults: a legacy watch from "" or "0" becomes a watch-list (WatchList gate on).
  if (
    options.watchList &&
    watch &&
    query.sendInitialEvents === undefined &&
    query.resourceVersionMatch === '' &&
    (query.resourceVersion === '' || query.resourceVersion === '0')
  ) {
    query.sendInitialEvents = true;
    query.resourceVersionMatch = 'NotOlderThan';
    query.defaultedInitialEvents = true;
  }
  const errors = watch ? validateWatch(query, options.watchList) : validateList(query);
  if (errors.length > 0) throw listOptionsInvalidError(errors);
  if (fieldSelector) {
    for (const requirement of [...fieldSelector.requirements].sort((a, b) => (a.field < b.field ? -1 : 1))) {
      const message = type.fieldSet.unsupported(requirement.field);
      if (message !== undefined) throw badRequestError(message);
    }
  }
  return query;
}

function validateList(q: ListOptionsQuery): FieldError[] {
  const errors: FieldError[] = [];
  const match = q.resourceVersionMatch;
  if (match !== '') {
    if (q.resourceVersion === '') {
      errors.push(
        forbiddenField(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    }
    if (q.continueToken !== '') {
      errors.push(
        forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errors.push(notSupportedField('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && q.resourceVersion === '0') {
      errors.push(
        forbiddenField(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    }
  }
  if (q.sendInitialEvents !== undefined) {
    errors.push(forbiddenField('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  return errors;
}

function validateWatch(q: ListOptionsQuery, watchList: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const match = q.resourceVersionMatch;
  if (q.sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan') {
      errors.push(
        forbiddenField(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (!watchList) {
      errors.push(
        forbiddenField(
          'sendInitialEvents',
          'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        ),
      );
    }
  }
  if (match !== '') {
    if (q.sendInitialEvents === undefined) {
      errors.push(
        forbiddenField(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan')
      errors.push(notSupportedField('resourceVersionMatch', match, ['NotOlderThan']));
    if (q.continueToken !== '') {
      errors.push(
        forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
  }
  return errors;
}

/**
 * Parses a resourceVersion as `strconv.ParseUint` does; `undefined` when it does not parse. `''`
 * is not accepted here (callers treat it separately).
 */
export function parseResourceVersion(value: string): number | undefined {
  if (!/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The message of a resourceVersion that does not parse (`resourceVersion: Invalid value: "abc": …`). */
export function invalidResourceVersionMessage(value: string): string {
  const reason = /^\d+$/.test(value) ? 'value out of range' : 'invalid syntax';
  return `resourceVersion: Invalid value: ${JSON.stringify(value)}: strconv.ParseUint: parsing ${JSON.stringify(value)}: ${reason}`;
}
