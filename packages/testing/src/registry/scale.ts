import { labelSelectorFromObject } from '@kinformer/core';
import { rec, type JsonObject } from '../api/json.js';
import type { RegistryStore } from './registryStore.js';
import type { ResourceType } from './resourceRegistry.js';
import { conflictError, invalidError, invalidField } from '../api/statusErrors.js';
import type { StoredEntry } from '../storage/storedEntry.js';
import { text } from '../storage/storedForm.js';
import type { WriteOptions } from '../endpoints/writeOptions.js';

/**
 * The `scale` subresource (`autoscaling/v1` `Scale`), as kube-apiserver serves it for deployments,
 * replicasets and statefulsets (`pkg/registry/apps/deployment/storage/storage.go` `ScaleREST`,
 * `scaleFromDeployment`, `scaleUpdatedObjectInfo`) and for custom resources that declare it
 * (apiextensions-apiserver `pkg/registry/customresource/etcd.go` `ScaleREST`, `scaleFromCustomResource`,
 * with the CRD's `specReplicasPath`, `statusReplicasPath` and `labelSelectorPath`).
 */

function pathOf(jsonPath: string): string[] {
  return jsonPath
    .replace(/^\./, '')
    .split('.')
    .filter((s) => s !== '');
}

function readPath(obj: JsonObject, jsonPath: string): unknown {
  let node: unknown = obj;
  for (const step of pathOf(jsonPath)) node = rec(node)[step];
  return node;
}

function writePath(obj: JsonObject, jsonPath: string, value: unknown): JsonObject {
  const steps = pathOf(jsonPath);
  const out: JsonObject = { ...obj };
  let node = out;
  steps.forEach((step, i) => {
    if (i === steps.length - 1) node[step] = value;
    else {
      const child = { ...rec(node[step]) };
      node[step] = child;
      node = child;
    }
  });
  return out;
}

/**
 * `metav1.LabelSelectorAsSelector(selector).String()` (core's {@link labelSelectorFromObject}):
 * `a=b,c in (x,y),!d`, requirements sorted by key; `''` for no selector.
 * @throws KinformerError `ERR_INVALID_SELECTOR` for a malformed selector (kube: an error too).
 */
export function selectorString(selector: unknown): string {
  if (typeof selector !== 'object' || selector === null) return '';
  return labelSelectorFromObject(selector).toString();
}

/** The `Scale` of a stored object of a type with the `scale` subresource. */
export function scaleOf(type: ResourceType, entry: StoredEntry): JsonObject {
  const scale = type.subresources.scale!;
  const obj = entry.obj;
  const meta = obj.metadata;
  const specReplicas = readPath(obj, scale.specReplicasPath);
  const statusReplicas = readPath(obj, scale.statusReplicasPath);
  let selector = '';
  if (scale.labelSelectorPath !== undefined) {
    const raw = readPath(obj, scale.labelSelectorPath);
    selector = type.customResource ? text(raw) : selectorString(raw);
  }
  // autoscaling/v1: spec.replicas is omitempty, status.replicas is not; a built-in's unset
  // spec.replicas is defaulted to 1 by its API defaults.
  const replicas = typeof specReplicas === 'number' ? specReplicas : type.customResource ? 0 : 1;
  const status: JsonObject = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  if (selector !== '') status.selector = selector;
  const scaleMeta: JsonObject = { name: meta.name };
  if (meta.namespace !== undefined) scaleMeta.namespace = meta.namespace;
  scaleMeta.uid = meta.uid;
  scaleMeta.resourceVersion = String(entry.rev);
  scaleMeta.creationTimestamp = meta.creationTimestamp;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: scaleMeta,
    spec: replicas === 0 ? {} : { replicas },
    status,
  };
}

/**
 * Writes a `Scale` (PUT, or a patched one): a set `metadata.resourceVersion` must be the object's
 * (else 409), `spec.replicas` must be ≥ 0 (else 422 as `ValidateScale`); the object's replicas are
 * set and it is updated through the main resource (the status is kept; the generation moves).
 */
export function updateScale(
  store: RegistryStore,
  type: ResourceType,
  namespace: string,
  name: string,
  body: unknown,
  options: WriteOptions,
): StoredEntry {
  const existing = store.get(type, namespace, name);
  const scale = rec(body);
  const requested = text(rec(scale.metadata).resourceVersion);
  if (requested !== '' && requested !== String(existing.rev)) throw conflictError(type, name);
  const replicas = rec(scale.spec).replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalidError('autoscaling', 'Scale', name, [
      invalidField('spec.replicas', JSON.stringify(replicas), 'must be greater than or equal to 0'),
    ]);
  }
  const next = writePath(existing.obj, type.subresources.scale!.specReplicasPath, replicas);
  return store.update(type, type.namespaced ? namespace : undefined, name, next, {
    ...options,
    allowUnconditional: true,
    subresource: 'scale',
  });
}
