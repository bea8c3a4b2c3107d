import { isMap, type JsonObject } from '../api/json.js';

/**
 * The helpers of API defaulting (`pkg/apis/<group>/v1/defaults.go`): each kind's defaults live in its
 * strategy (`registry/core/pod.ts`, `apps/workloads.ts`, …, see `strategy.ts`); only absent fields
 * are set, a value the client sent is kept.
 */

export function object(parent: JsonObject, key: string): JsonObject {
  const value = parent[key];
  if (isMap(value)) return value;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}
export function objects(value: unknown): JsonObject[] {
  return Array.isArray(value)
    ? value.filter((v): v is JsonObject => typeof v === 'object' && v !== null)
    : [];
}
export function setDefault(target: JsonObject, key: string, value: unknown): void {
  if (target[key] === undefined || target[key] === null) target[key] = value;
}
