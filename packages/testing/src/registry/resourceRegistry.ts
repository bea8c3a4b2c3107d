import { ErrorCodes, KinformerError } from '@kinformer/core';
import { DEFAULT_FIELD_SET, type FieldSet } from './fieldSets.js';
import type { ResourceStrategy, StrategySource } from './strategy.js';
import {
  builtinSubresources,
  listTypesSchema,
  type ListTypes,
  type ResolvedSubresources,
  type Subresources,
} from './subresources.js';

/**
 * A resource type to serve, as given to {@link FakeApiServer.registerResource} (or the `resources`
 * option). Core-group types have `group: ''` (or no `group`).
 */
export interface ResourceDefinition {
  /** API group; `''` or omitted for the core group. */
  group?: string;
  version: string;
  /** Plural resource name as in the URL (`pods`, `deployments`, `widgets`). */
  resource: string;
  /** Kind of one object (`Pod`). */
  kind: string;
  /** True when objects live in a namespace (`/namespaces/{ns}/{resource}`). */
  namespaced: boolean;
  /** Kind of a list; default `${kind}List`. */
  listKind?: string;
  /** Singular name for discovery; default the lower-cased kind. */
  singularName?: string;
  /** Short names for discovery (`po`). */
  shortNames?: readonly string[];
  /**
   * True for custom resources (CRDs): list items carry `kind`/`apiVersion` as the real server's
   * unstructured lists do, updates need `metadata.resourceVersion`, and field selectors accept
   * `metadata.name`, `metadata.namespace` and the {@link ResourceDefinition.selectableFields}.
   * Default false (built-in semantics: items carry no `kind`/`apiVersion`).
   */
  customResource?: boolean;
  /** Extra field-selector paths for a custom resource, e.g. `['spec.color']` (CRD `selectableFields`). */
  selectableFields?: readonly string[];
  /** DELETE answers with the deleted object rather than a `Status` (pods, serviceaccounts). Default false. */
  returnDeletedObject?: boolean;
  /**
   * Whether PUT may omit `metadata.resourceVersion` (an unconditional update). Default true for built-ins
   * (false for leases, as the real strategy says) and false for custom resources.
   */
  allowUnconditionalUpdate?: boolean;
  /** Categories for discovery (`all` makes `kubectl get all` list the type). */
  categories?: readonly string[];
  /** Verbs for discovery and routing; default every verb (`create` only for the review types). */
  verbs?: readonly string[];
  /** Server-side printing columns (a CRD's `additionalPrinterColumns`); built-ins have their own. */
  printerColumns?: readonly PrinterColumn[];
  /**
   * The structural OpenAPI v3 schema of one object (a CRD version's `schema.openAPIV3Schema`):
   * served in `/openapi/v3`, and its defaults and pruning of unknown fields applied on writes.
   */
  schema?: Readonly<Record<string, unknown>>;
  /**
   * The `status` and `scale` subresources (a CRD's `subresources`). Built-in types get kube's own
   * (pods, deployments, … have `status`; deployments, replicasets and statefulsets have `scale`);
   * a definition given here replaces them. Custom resources have none unless declared.
   */
  subresources?: Subresources;
  /**
   * How server-side apply merges the lists of a custom resource (a CRD schema's
   * `x-kubernetes-list-type` / `x-kubernetes-list-map-keys`), by dotted field path with `[]` for the
   * elements of a list: `{ 'spec.ports': { type: 'map', keys: ['port'] }, 'spec.tags': { type: 'set' } }`.
   * Lists not named here are atomic (replaced as a whole), as for a CRD without list types.
   */
  listTypes?: ListTypes;
}

/** `CustomResourceColumnDefinition`: one server-side printing column. */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  format?: string;
  description?: string;
  priority?: number;
}

/**
 * Names a registered resource type for the in-process API and fault filters: an object
 * `{ group?, version?, resource }`, or a string `'pods'`, `'deployments.apps'`,
 * `'deployments.v1.apps'` or `'leases.coordination.k8s.io'`.
 */
export type ResourceRef = string | { group?: string; version?: string; resource: string };

/** A registered resource type, resolved and with its derived strings. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly singularName: string;
  readonly shortNames: readonly string[];
  readonly customResource: boolean;
  readonly returnDeletedObject: boolean;
  readonly allowUnconditionalUpdate: boolean;
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  readonly printerColumns: readonly PrinterColumn[] | undefined;
  readonly schema: Readonly<Record<string, unknown>> | undefined;
  /** `v1` or `apps/v1`. */
  readonly apiVersion: string;
  /** `pods` or `deployments.apps` (what error messages name). */
  readonly qualifiedResource: string;
  /** `Pod` or `Deployment.apps` (what `Invalid` errors name). */
  readonly qualifiedKind: string;
  /** `{"kind":"Pod","apiVersion":"v1"` — the JSON prefix of a typed object (no closing brace). */
  readonly typePrefix: string;
  /** Supported field-selector labels and how to read them from an object. */
  readonly fieldSet: FieldSet;
  /** Fields besides `metadata` that the real server puts in a BOOKMARK object of this kind. */
  readonly bookmarkExtra: Readonly<Record<string, unknown>>;
  /** The subresources served besides the object itself. */
  readonly subresources: ResolvedSubresources;
  /** The list merge rules of server-side apply for a custom resource (undefined for built-ins). */
  readonly listTypes: ReturnType<typeof listTypesSchema>;
  /** @internal The kind's REST strategy, resolved once at registration (`strategies.ts`). */
  readonly strategy: ResourceStrategy;
}

function def(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<ResourceDefinition> = {},
): ResourceDefinition {
  return { group, version, resource, kind, namespaced, ...extra };
}

const ALL = ['all'];
const STATUS: Subresources = { status: true };
const SCALED: Subresources = {
  status: true,
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.spec.selector',
  },
};
const CREATE_ONLY: Partial<ResourceDefinition> = { verbs: ['create'] };
/** A type of the `all` category (`kubectl get all`), with its short name and subresources. */
const inAll = (shortName: string, subresources: Subresources): Partial<ResourceDefinition> => ({
  shortNames: [shortName],
  categories: ALL,
  subresources,
});

/** The built-in types every server registers unless `registerDefaults: false`. */
export const DEFAULT_RESOURCES: readonly ResourceDefinition[] = Object.freeze([
  def('', 'v1', 'pods', 'Pod', true, {
    shortNames: ['po'],
    returnDeletedObject: true,
    categories: ALL,
    subresources: STATUS,
  }),
  def('', 'v1', 'services', 'Service', true, inAll('svc', STATUS)),
  def('', 'v1', 'configmaps', 'ConfigMap', true, { shortNames: ['cm'] }),
  def('', 'v1', 'secrets', 'Secret', true),
  def('', 'v1', 'nodes', 'Node', false, { shortNames: ['no'], subresources: STATUS }),
  def('', 'v1', 'namespaces', 'Namespace', false, { shortNames: ['ns'], subresources: STATUS }),
  def('', 'v1', 'events', 'Event', true, { shortNames: ['ev'] }),
  def('', 'v1', 'serviceaccounts', 'ServiceAccount', true, { shortNames: ['sa'], returnDeletedObject: true }),
  def('', 'v1', 'endpoints', 'Endpoints', true, { shortNames: ['ep'], singularName: 'endpoints' }),
  def('apps', 'v1', 'deployments', 'Deployment', true, inAll('deploy', SCALED)),
  def('apps', 'v1', 'replicasets', 'ReplicaSet', true, inAll('rs', SCALED)),
  def('apps', 'v1', 'statefulsets', 'StatefulSet', true, inAll('sts', SCALED)),
  def('apps', 'v1', 'daemonsets', 'DaemonSet', true, inAll('ds', STATUS)),
  def('batch', 'v1', 'jobs', 'Job', true, { categories: ALL, subresources: STATUS }),
  def('batch', 'v1', 'cronjobs', 'CronJob', true, inAll('cj', STATUS)),
  def('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, { shortNames: ['ing'] }),
  def('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  def('coordination.k8s.io', 'v1', 'leases', 'Lease', true, { allowUnconditionalUpdate: false }),
  def('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  def('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  def('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  def('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  def('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, {
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: STATUS,
  }),
  // Create-only reviews: answered, never stored (authorization/authentication `REST` `Create`).
  def(
    'authorization.k8s.io',
    'v1',
    'selfsubjectaccessreviews',
    'SelfSubjectAccessReview',
    false,
    CREATE_ONLY,
  ),
  def('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, CREATE_ONLY),
  def('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', false, CREATE_ONLY),
]);

/** The verbs of an ordinary resource, in discovery's order. */
export const ALL_VERBS: readonly string[] = Object.freeze([
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
]);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Resolves a {@link ResourceDefinition}, checking its names; its strategy comes from `strategies`. */
export function resolveResourceType(
  definition: ResourceDefinition,
  strategies: StrategySource,
): ResourceType {
  const group = definition.group ?? '';
  const { version, resource, kind, namespaced } = definition;
  if (!DNS_LABEL.test(resource) || !DNS_LABEL.test(version) || kind === '' || /[^A-Za-z0-9]/.test(kind)) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `invalid resource definition ${JSON.stringify(definition)}`,
      {
        details: { group, version, resource, kind },
      },
    );
  }
  const customResource = definition.customResource ?? false;
  const subresources: ResolvedSubresources = customResource
    ? {
        status: definition.subresources?.status !== undefined && definition.subresources.status !== false,
        scale: definition.subresources?.scale,
      }
    : builtinSubresources(group, resource, definition.subresources);
  const strategy = strategies.of({
    group,
    resource,
    customResource,
    selectableFields: definition.selectableFields ?? [],
    statusSubresource: subresources.status,
  });
  const apiVersion = group === '' ? version : `${group}/${version}`;
  return Object.freeze({
    group,
    version,
    resource,
    kind,
    listKind: definition.listKind ?? `${kind}List`,
    namespaced,
    singularName: definition.singularName ?? kind.toLowerCase(),
    shortNames: Object.freeze([...(definition.shortNames ?? [])]),
    customResource,
    returnDeletedObject: definition.returnDeletedObject ?? false,
    allowUnconditionalUpdate: definition.allowUnconditionalUpdate ?? !customResource,
    categories: Object.freeze([...(definition.categories ?? [])]),
    verbs: Object.freeze([...(definition.verbs ?? ALL_VERBS)]),
    printerColumns: definition.printerColumns,
    schema: definition.schema,
    apiVersion,
    qualifiedResource: group === '' ? resource : `${resource}.${group}`,
    qualifiedKind: group === '' ? kind : `${kind}.${group}`,
    typePrefix: `{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)}`,
    fieldSet: strategy.fieldSet ?? DEFAULT_FIELD_SET,
    bookmarkExtra: strategy.bookmarkExtra ?? {},
    subresources,
    listTypes: customResource ? listTypesSchema(definition.listTypes ?? {}) : undefined,
    strategy,
  });
}

/** The set of resource types a server serves, looked up by URL parts or by {@link ResourceRef}. */
export class ResourceRegistry {
  readonly #byPath = new Map<string, ResourceType>();
  readonly #all: ResourceType[] = [];
  /** This server's strategies (the services' cluster-IP allocator is per server). */
  readonly #strategies: StrategySource;

  constructor(strategies: StrategySource) {
    this.#strategies = strategies;
  }

  /** Registers (or replaces) a type. Returns the resolved type. */
  register(definition: ResourceDefinition): ResourceType {
    const type = resolveResourceType(definition, this.#strategies);
    const path = pathKey(type.group, type.version, type.resource);
    const existing = this.#byPath.get(path);
    if (existing) this.#all.splice(this.#all.indexOf(existing), 1);
    this.#byPath.set(path, type);
    this.#all.push(type);
    return type;
  }

  /** The type served at `/api(s)/{group}/{version}/{resource}`, or undefined. */
  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.#byPath.get(pathKey(group, version, resource));
  }

  /** Stops serving the type at this group/version/resource (a deleted CRD). Returns whether it was served. */
  unregister(group: string, version: string, resource: string): boolean {
    const path = pathKey(group, version, resource);
    const existing = this.#byPath.get(path);
    if (existing === undefined) return false;
    this.#byPath.delete(path);
    this.#all.splice(this.#all.indexOf(existing), 1);
    return true;
  }

  /** Every registered type, in registration order. */
  all(): readonly ResourceType[] {
    return this.#all;
  }

  /** True when some type is served under this group/version. */
  hasGroupVersion(group: string, version: string): boolean {
    return this.#all.some((t) => t.group === group && t.version === version);
  }

  /**
   * Resolves a {@link ResourceRef}. Throws `ERR_NOT_FOUND` when nothing matches, `ERR_INVALID_OPTION`
   * when a string is ambiguous.
   */
  resolve(ref: ResourceRef | ResourceType): ResourceType {
    if (typeof ref !== 'string' && 'typePrefix' in ref) return ref;
    const candidates = typeof ref === 'string' ? this.#fromString(ref) : this.#fromObject(ref);
    if (candidates.length === 1) return candidates[0]!;
    const text = typeof ref === 'string' ? ref : JSON.stringify(ref);
    if (candidates.length === 0) {
      throw new KinformerError(
        ErrorCodes.NOT_FOUND,
        `the fake API server has no resource ${text}; register it first`,
        {
          details: { resource: text },
        },
      );
    }
    // Prefer the core group, then the first registered (like kubectl's preferred group order).
    const core = candidates.find((t) => t.group === '');
    if (core) return core;
    throw new KinformerError(ErrorCodes.INVALID_OPTION, `resource ${text} is ambiguous; name its group`, {
      details: { resource: text, groups: candidates.map((c) => c.group) },
    });
  }

  #fromObject(ref: { group?: string; version?: string; resource: string }): ResourceType[] {
    const group = ref.group ?? '';
    return this.#all.filter(
      (t) =>
        t.resource === ref.resource &&
        t.group === group &&
        (ref.version === undefined || t.version === ref.version),
    );
  }

  #fromString(text: string): ResourceType[] {
    const dot = text.indexOf('.');
    if (dot === -1) return this.#all.filter((t) => t.resource === text);
    const resource = text.slice(0, dot);
    const rest = text.slice(dot + 1);
    const byGroup = this.#all.filter((t) => t.resource === resource && t.group === rest);
    if (byGroup.length > 0) return byGroup;
    const dot2 = rest.indexOf('.');
    const version = dot2 === -1 ? rest : rest.slice(0, dot2);
    const group = dot2 === -1 ? '' : rest.slice(dot2 + 1);
    return this.#all.filter((t) => t.resource === resource && t.version === version && t.group === group);
  }
}

function pathKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}
