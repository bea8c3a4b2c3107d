import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeObject, OwnerReference } from '@kinformer/core';
import type { Kind } from './kinds.js';

/** The owner reference marked `controller: true`, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}

/** The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → `''`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Makes `owner` the controller of `obj` (controller-runtime's `SetControllerReference`): adds (or
 * updates) an owner reference with `controller: true` and `blockOwnerDeletion: true`, so the garbage
 * collector deletes `obj` with its owner and `owns()` maps `obj`'s events to the owner's key.
 * Changes and returns `obj`: call it on an object you are building, never on a cached one (they are
 * frozen). Throws `ERR_INVALID_OPTION` when `obj` already has another controller, when the owner has
 * no name or uid, when a namespaced owner is in another namespace than `obj`, or when a namespaced
 * owner would own a cluster-scoped object (the garbage collector would delete it at once).
 */
export function setControllerReference<T extends KubeObject>(
  owner: KubeObject,
  obj: T,
  ownerKind?: Pick<Kind, 'apiVersion' | 'kind' | 'namespaced'>,
): T {
  const apiVersion = ownerKind?.apiVersion ?? owner.apiVersion;
  const kind = ownerKind?.kind ?? owner.kind;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  const invalid = (message: string): KinformerError =>
    new KinformerError(ErrorCodes.INVALID_OPTION, message, {
      details: { owner: `${kind ?? '?'} ${owner.metadata?.namespace ?? ''}/${name ?? ''}` },
    });
  if (!apiVersion || !kind) throw invalid('the owner needs apiVersion and kind (pass its Kind)');
  if (!name || !uid) throw invalid('the owner needs metadata.name and metadata.uid (use the stored object)');
  const ownerNamespace = owner.metadata?.namespace ?? '';
  const namespaced = ownerKind?.namespaced ?? ownerNamespace !== '';
  const objNamespace = obj.metadata?.namespace ?? '';
  if (namespaced) {
    if (objNamespace === '') throw invalid('a namespaced owner cannot own a cluster-scoped object');
    if (ownerNamespace !== '' && ownerNamespace !== objNamespace)
      throw invalid(`cross-namespace owner references are not allowed (${ownerNamespace} ≠ ${objNamespace})`);
  }
  const ref: OwnerReference = { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
  const metadata = (obj.metadata ??= {});
  const refs = (metadata.ownerReferences ??= []);
  const existing = controllerOf(obj);
  if (existing !== undefined && !sameOwner(existing, ref)) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `${obj.metadata?.name ?? 'object'} is already controlled by ${existing.kind} ${existing.name}`,
      { details: { controller: existing.uid } },
    );
  }
  const at = refs.findIndex((r) => sameOwner(r, ref));
  if (at >= 0) refs[at] = ref;
  else refs.push(ref);
  return obj;
}

/** Same owner: same group, kind and name (controller-runtime's `referSameObject`). */
function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

/**
 * The key of `obj`'s controller owner when that owner is of kind `primary` (what `owns()` queues),
 * with the owner reference; `undefined` when `obj` has no controller of that kind.
 */
export function controllerOfKind(
  primary: Pick<Kind, 'group' | 'kind' | 'namespaced'>,
  obj: KubeObject,
): { ref: OwnerReference; key: string } | undefined {
  const ref = controllerOf(obj);
  if (ref === undefined || ref.kind !== primary.kind || groupOf(ref.apiVersion) !== primary.group)
    return undefined;
  const ns = obj.metadata?.namespace;
  return { ref, key: primary.namespaced && ns ? `${ns}/${ref.name}` : ref.name };
}
