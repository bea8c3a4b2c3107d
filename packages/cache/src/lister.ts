import { labelSelectorFromObject, parseLabelSelector } from '@kinformer/core';
import { componentLogger } from '@kinformer/core/internal';
import type { KubeObject, LabelSelector, LabelSelectorObject, Logger } from '@kinformer/core';
import { NAMESPACE_INDEX } from './namespaceIndex.js';
import type { Indexer } from './store.js';

/**
 * What `list` accepts as a label selector: a parsed {@link LabelSelector}, its text form
 * (`'app=web,tier in (a,b)'`, parsed with core's `parseLabelSelector`), or the
 * `matchLabels`/`matchExpressions` object form (converted with `labelSelectorFromObject`).
 * `undefined`, `''` and an empty selector all select everything.
 */
export type LabelSelectorInput = LabelSelector | LabelSelectorObject | string;

/** Options of {@link Lister}. */
export interface ListerOptions {
  /** pino logger (a child with `component: 'lister'` is derived). */
  logger?: Logger;
}

/**
 * A read-only, namespace-scoped view of a {@link Lister}'s indexer (client-go's
 * `GenericNamespaceLister`).
 */
export interface NamespaceLister<T extends KubeObject> {
  /** The namespace this lister reads (`''` = all namespaces). */
  readonly namespaceName: string;
  /**
   * The objects of the namespace whose labels match `selector` (all of them without one), in a new
   * array. Uses the `namespace` index when the indexer has one, a full scan otherwise.
   * Throws `ERR_INVALID_SELECTOR` for a selector that does not parse.
   */
  list(selector?: LabelSelectorInput): T[];
  /** The object named `name` in this namespace (key `namespace/name`), or `undefined`. */
  get(name: string): T | undefined;
}

/** The read-only part of an {@link Indexer} a {@link Lister} needs (an informer's read-only view has it). */
export type ListerSource<T> = Pick<Indexer<T>, 'list' | 'getByKey' | 'byIndex' | 'getIndexers'>;

/** State shared by a {@link Lister} and its namespace views. */
class ListerCore<T extends KubeObject> {
  readonly selectors = new SelectorCache();
  #warnedNoNamespaceIndex = false;

  constructor(
    readonly indexer: ListerSource<T>,
    readonly logger: Logger | undefined,
  ) {}

  list(selector: LabelSelectorInput | undefined): T[] {
    const sel = this.selectors.resolve(selector);
    const all = this.indexer.list();
    return sel === undefined ? all : filterByLabels(all, sel);
  }

  listNamespace(namespace: string, selector: LabelSelectorInput | undefined): T[] {
    if (namespace === '') return this.list(selector);
    const sel = this.selectors.resolve(selector);
    let objects: T[];
    if (Object.hasOwn(this.indexer.getIndexers(), NAMESPACE_INDEX)) {
      objects = this.indexer.byIndex(NAMESPACE_INDEX, namespace);
    } else {
      this.#warnNoNamespaceIndex();
      objects = filterInPlace(this.indexer.list(), (obj) => (obj.metadata?.namespace ?? '') === namespace);
    }
    return sel === undefined ? objects : filterByLabels(objects, sel);
  }

  #warnNoNamespaceIndex(): void {
    if (this.#warnedNoNamespaceIndex) return;
    this.#warnedNoNamespaceIndex = true;
    componentLogger(this.logger, { component: 'lister' }).warn(
      { index: NAMESPACE_INDEX },
      'the indexer has no namespace index: namespace lists scan every object (add metaNamespaceIndexFunc)',
    );
  }
}

/**
 * client-go's `GenericLister` over an {@link Indexer}: reads the cache, never writes it (it exposes
 * no write method and keeps the indexer private). The objects returned are the cached ones (not
 * copies; frozen in development mode): do not mutate them. Arrays returned are new and owned by
 * the caller.
 */
export class Lister<T extends KubeObject> {
  readonly #core: ListerCore<T>;

  constructor(indexer: ListerSource<T>, options: ListerOptions = {}) {
    this.#core = new ListerCore(indexer, options.logger);
  }

  /**
   * Every object (all namespaces) whose labels match `selector`, in a new array. An absent or empty
   * selector returns everything without evaluating labels (client-go's fast path).
   * Throws `ERR_INVALID_SELECTOR` for a selector that does not parse.
   */
  list(selector?: LabelSelectorInput): T[] {
    return this.#core.list(selector);
  }

  /** The cluster-scoped object named `name` (key `name`), or `undefined`. */
  get(name: string): T | undefined {
    return this.#core.indexer.getByKey(name);
  }

  /** A read-only view of namespace `namespace` (`''` means all namespaces). Cheap: no copy is made. */
  namespace(namespace: string): NamespaceLister<T> {
    return new NamespaceListerImpl(this.#core, namespace);
  }

  /** The objects indexed under `value` in index `indexName`. Throws `ERR_INDEX` for an unknown index. */
  byIndex(indexName: string, value: string): T[] {
    return this.#core.indexer.byIndex(indexName, value);
  }
}

class NamespaceListerImpl<T extends KubeObject> implements NamespaceLister<T> {
  readonly #core: ListerCore<T>;
  readonly namespaceName: string;

  constructor(core: ListerCore<T>, namespace: string) {
    this.#core = core;
    this.namespaceName = namespace;
  }

  list(selector?: LabelSelectorInput): T[] {
    return this.#core.listNamespace(this.namespaceName, selector);
  }

  get(name: string): T | undefined {
    return this.#core.indexer.getByKey(this.namespaceName === '' ? name : `${this.namespaceName}/${name}`);
  }
}

/** Turns a selector input into a selector, or `undefined` for "everything". Remembers the last text parsed. */
class SelectorCache {
  #text: string | undefined;
  #parsed: LabelSelector | undefined;

  resolve(input: LabelSelectorInput | undefined): LabelSelector | undefined {
    if (input === undefined) return undefined;
    let selector: LabelSelector;
    if (typeof input === 'string') {
      if (input.trim() === '') return undefined;
      if (input !== this.#text || this.#parsed === undefined) {
        this.#parsed = parseLabelSelector(input);
        this.#text = input;
      }
      selector = this.#parsed;
    } else if (isLabelSelector(input)) {
      selector = input;
    } else {
      selector = labelSelectorFromObject(input);
    }
    return selector.isEmpty() ? undefined : selector;
  }
}

function isLabelSelector(value: LabelSelector | LabelSelectorObject): value is LabelSelector {
  return typeof (value as Partial<LabelSelector>).matches === 'function';
}

function filterByLabels<T extends KubeObject>(objects: T[], selector: LabelSelector): T[] {
  return filterInPlace(objects, (obj) => selector.matches(obj.metadata?.labels));
}

/** Keeps the elements satisfying `keep`, compacting `array` in place (it is ours: a fresh snapshot). */
function filterInPlace<T>(array: T[], keep: (value: T) => boolean): T[] {
  let n = 0;
  for (let i = 0; i < array.length; i++) {
    const value = array[i]!;
    if (keep(value)) array[n++] = value;
  }
  array.length = n;
  return array;
}
