import type { ResourceRegistry, ResourceType } from '../registry/resourceRegistry.js';

/** Minimal discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`, `/version`). */

function apiResource(type: ResourceType): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: type.resource,
    singularName: type.singularName,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: type.verbs,
  };
  if (type.shortNames.length > 0) out.shortNames = type.shortNames;
  if (type.categories.length > 0) out.categories = type.categories;
  return out;
}

/** The `<resource>/status` and `<resource>/scale` entries of an `APIResourceList` (`endpoints/installer.go`). */
function subresourceEntries(type: ResourceType): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  if (type.subresources.status === true)
    out.push({
      name: `${type.resource}/status`,
      singularName: '',
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: ['get', 'patch', 'update'],
    });
  if (type.subresources.scale !== undefined)
    out.push({
      name: `${type.resource}/scale`,
      singularName: '',
      namespaced: type.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
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
    .flatMap((t) => [apiResource(t), ...subresourceEntries(t)]);
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

/** The media type of aggregated discovery (KEP-3352), in `Accept` and in the response's `Content-Type`. */
export const AGGREGATED_DISCOVERY_TYPE =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/**
 * Whether `Accept` asks for aggregated discovery before a plain `application/json`, as client-go
 * (`discovery_client.go` `acceptDiscoveryFormats`) does: `apidiscovery.k8s.io` `v2` or `v2beta1`.
 * Returns the version to answer, or undefined for the legacy documents.
 */
export function aggregatedDiscoveryVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (accept === undefined) return undefined;
  for (const clause of accept.split(',')) {
    const [type, ...params] = clause.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== '*/*') continue;
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((x) => x.trim()) as [string, string]));
    if (p.as === undefined) return undefined;
    if (
      p.g === 'apidiscovery.k8s.io' &&
      p.as === 'APIGroupDiscoveryList' &&
      (p.v === 'v2' || p.v === 'v2beta1')
    )
      return p.v;
  }
  return undefined;
}

function discoveryResource(type: ResourceType): Record<string, unknown> {
  const out: Record<string, unknown> = {
    resource: type.resource,
    responseKind: { group: type.group, version: type.version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singularName,
    verbs: type.verbs,
  };
  if (type.shortNames.length > 0) out.shortNames = type.shortNames;
  if (type.categories.length > 0) out.categories = type.categories;
  const subresources = subresourceEntries(type).map((s) => ({
    subresource: String(s.name).slice(type.resource.length + 1),
    responseKind:
      s.kind === 'Scale'
        ? { group: 'autoscaling', version: 'v1', kind: 'Scale' }
        : { group: type.group, version: type.version, kind: type.kind },
    verbs: s.verbs,
  }));
  if (subresources.length > 0) out.subresources = subresources;
  return out;
}

/**
 * Aggregated discovery (`APIGroupDiscoveryList`, `apidiscovery.k8s.io/v2`): every group (`/apis`) or
 * the core group (`/api`) with its versions and resources in one document, as
 * `endpoints/discovery/aggregated/handler.go` serves it. Versions newest first, as registered.
 */
export function aggregatedDiscovery(
  registry: ResourceRegistry,
  core: boolean,
  version: 'v2' | 'v2beta1',
): unknown {
  const groups = new Map<string, Map<string, ResourceType[]>>();
  for (const t of registry.all()) {
    if ((t.group === '') !== core) continue;
    const versions = groups.get(t.group) ?? new Map<string, ResourceType[]>();
    const list = versions.get(t.version) ?? [];
    list.push(t);
    versions.set(t.version, list);
    groups.set(t.group, versions);
  }
  const items = [...groups].map(([name, versions]) => ({
    metadata: name === '' ? { creationTimestamp: null } : { name, creationTimestamp: null },
    versions: [...versions].map(([v, types]) => ({
      version: v,
      resources: types.map(discoveryResource),
      freshness: 'Current',
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
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
