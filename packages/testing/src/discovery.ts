import type { ResourceRegistry, ResourceType } from './resourceRegistry.js';

/** Minimal discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`, `/version`). */

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function apiResource(type: ResourceType): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: type.resource,
    singularName: type.singularName,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: VERBS,
  };
  if (type.shortNames.length > 0) out.shortNames = type.shortNames;
  return out;
}

/** `GET /api`: `APIVersions`. */
export function coreVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** `GET /api/v1` or `/apis/<g>/<v>`: `APIResourceList`, or undefined when nothing is served there. */
export function resourceList(registry: ResourceRegistry, group: string, version: string): unknown {
  if (!registry.hasGroupVersion(group, version)) return undefined;
  const resources = registry
    .all()
    .filter((t) => t.group === group && t.version === version)
    .map(apiResource);
  return group === ''
    ? { kind: 'APIResourceList', groupVersion: version, resources }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
}

function groupVersions(registry: ResourceRegistry): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const t of registry.all()) {
    if (t.group === '') continue;
    const versions = groups.get(t.group) ?? [];
    if (!versions.includes(t.version)) versions.push(t.version);
    groups.set(t.group, versions);
  }
  return groups;
}

function apiGroup(name: string, versions: readonly string[]): Record<string, unknown> {
  const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0] };
}

/** `GET /apis`: `APIGroupList`. */
export function groupList(registry: ResourceRegistry): unknown {
  const groups = [...groupVersions(registry)].map(([name, versions]) => apiGroup(name, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** `GET /apis/<g>`: `APIGroup`, or undefined for an unknown group. */
export function group(registry: ResourceRegistry, name: string): unknown {
  const versions = groupVersions(registry).get(name);
  return versions === undefined
    ? undefined
    : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(name, versions) };
}

/** `GET /version`. */
export function versionInfo(): unknown {
  return {
    major: '1',
    minor: '34',
    gitVersion: 'v1.34.0-kinformer-fake',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.24.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}
