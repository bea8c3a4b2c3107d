import { shardHash, type KubeObject, type ShardSelector } from '@kinformer/core';
import type { JsonObject } from '../api/json.js';
import { jsonClone } from '../api/jsonClone.js';
import type { ResourceType } from '../registry/resourceRegistry.js';

/** An object as the fake stores it: plain JSON without `kind`/`apiVersion`, `metadata` first. */
export type StoredObject = JsonObject & { metadata: JsonObject };

const PARTIAL_PREFIX = '{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":';

/**
 * One stored revision of one object. Immutable once built: its JSON forms are computed at most once
 * and shared by every list page and watch line that needs them.
 */
export class StoredEntry {
  /** Storage key: `namespace/name`, or `name` for cluster-scoped objects. */
  readonly key: string;
  /** `''` for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
  readonly type: ResourceType;
  readonly obj: StoredObject;
  /** Revision of the write that produced this state (its `metadata.resourceVersion`). */
  readonly rev: number;
  #json: string | undefined;
  #typed: string | undefined;
  #partial: string | undefined;
  #fields: Record<string, string> | undefined;
  #uidHash: string | undefined;
  #namespaceHash: string | undefined;

  constructor(type: ResourceType, namespace: string, name: string, obj: StoredObject, rev: number) {
    this.type = type;
    this.namespace = namespace;
    this.name = name;
    this.key = namespace === '' ? name : `${namespace}/${name}`;
    this.obj = obj;
    this.rev = rev;
  }

  /** Compact JSON without `kind`/`apiVersion` (a built-in list item). */
  json(): string {
    return (this.#json ??= JSON.stringify(this.obj));
  }

  /** Compact JSON with `kind`/`apiVersion` first (a GET body, a watch event object, a CRD list item). */
  typedJson(): string {
    return (this.#typed ??= `${this.type.typePrefix},${this.json().slice(1)}`);
  }

  /** The object with `kind`/`apiVersion` first, sharing the stored state: read it, never change it. */
  typed(): JsonObject {
    return { kind: this.type.kind, apiVersion: this.type.apiVersion, ...this.obj };
  }

  /** The JSON of this object as a list item of its type. */
  itemJson(): string {
    return this.type.customResource ? this.typedJson() : this.json();
  }

  /** `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{…}}`. */
  partialJson(): string {
    return (this.#partial ??= `${PARTIAL_PREFIX}${JSON.stringify(this.obj.metadata)}}`);
  }

  /** The object's labels. */
  labels(): Record<string, string> | undefined {
    const labels = this.obj.metadata.labels;
    return typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : undefined;
  }

  /** The object's selectable fields (computed once). */
  fields(): Record<string, string> {
    return (this.#fields ??= this.type.fieldSet.fields(this.obj));
  }

  /**
   * The shard hash (`shardHash`, FNV-1a 64) of `metadata.uid` or `metadata.namespace` (a missing
   * field hashes `''`), computed once per stored state: every sharded watcher reads it per event.
   */
  shardHash(field: ShardSelector['field']): string {
    const meta = this.obj.metadata;
    const value = (v: unknown): string => (typeof v === 'string' ? v : '');
    if (field === 'object.metadata.uid') return (this.#uidHash ??= shardHash(value(meta.uid)));
    return (this.#namespaceHash ??= shardHash(value(meta.namespace)));
  }

  /** The same state with `metadata.resourceVersion` set to `rev` (a DELETED event's object). */
  withResourceVersion(rev: number): StoredEntry {
    const obj = { ...this.obj, metadata: { ...this.obj.metadata, resourceVersion: String(rev) } };
    return new StoredEntry(this.type, this.namespace, this.name, obj, rev);
  }

  /** A fresh deep copy with `kind`/`apiVersion` first, owned by the caller. */
  toObject<T extends KubeObject = KubeObject>(): T {
    return { kind: this.type.kind, apiVersion: this.type.apiVersion, ...jsonClone(this.obj) } as unknown as T;
  }
}
