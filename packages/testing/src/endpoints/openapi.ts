import { createHash } from 'node:crypto';
import type { JsonObject } from '../api/json.js';
import type { ResourceRegistry, ResourceType } from '../registry/resourceRegistry.js';
import { schemaSet } from '../registry/schemas.js';

/**
 * The OpenAPI documents kube-apiserver publishes (`k8s.io/kube-openapi` handlers, installed by
 * `server/routes/openapi.go`): `/openapi/v3` (an index of group/versions, each with a
 * `serverRelativeURL` carrying a content hash), `/openapi/v3/api/v1` and
 * `/openapi/v3/apis/<group>/<version>` (an OpenAPI 3.0 document per group/version), and
 * `/openapi/v2` (one Swagger 2.0 document, JSON only: client-go asks for it in protobuf only, so it
 * serves `kubectl explain --output plaintext-openapiv2` and curl).
 *
 * Each document has the schemas of the kinds served there (`schemas.ts`), tagged with
 * `x-kubernetes-group-version-kind`, and their operations with `x-kubernetes-action` and the query
 * parameters of kube's: kubectl's `QueryParamVerifierV3` (`kubectl/pkg/cmd/util`) looks for the
 * PATCH operation of a kind and its `fieldValidation` parameter to decide that the server validates
 * fields itself, so `kubectl create|apply -f` send `fieldValidation=Strict`.
 */

const WRITE_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'pretty'];

function queryParams(names: readonly string[], v3: boolean): JsonObject[] {
  return names.map((name) =>
    v3
      ? { name, in: 'query', schema: { type: 'string', uniqueItems: true } }
      : { name, in: 'query', type: 'string', uniqueItems: true },
  );
}

function ref(name: string, v3: boolean): JsonObject {
  return { $ref: `${v3 ? '#/components/schemas/' : '#/definitions/'}${name}` };
}

function body(schema: JsonObject, v3: boolean): JsonObject {
  return v3
    ? { requestBody: { content: { '*/*': { schema } }, required: true } }
    : { parameters: [{ name: 'body', in: 'body', required: true, schema }] };
}

function response(schema: JsonObject | undefined, v3: boolean): JsonObject {
  const ok = v3
    ? { description: 'OK', content: schema === undefined ? {} : { 'application/json': { schema } } }
    : { description: 'OK', ...(schema === undefined ? {} : { schema }) };
  return { responses: { '200': ok } };
}

function operation(
  type: ResourceType,
  action: string,
  params: readonly string[],
  schema: JsonObject | undefined,
  withBody: boolean,
  v3: boolean,
): JsonObject {
  const op: JsonObject = {
    operationId: `${action}${type.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: type.kind },
    ...response(schema, v3),
  };
  const bodyPart = withBody && schema !== undefined ? body(schema, v3) : {};
  const parameters = [
    ...queryParams(params, v3),
    ...((bodyPart.parameters as JsonObject[] | undefined) ?? []),
  ];
  if (parameters.length > 0) op.parameters = parameters;
  if (bodyPart.requestBody !== undefined) op.requestBody = bodyPart.requestBody;
  return op;
}

function pathsOf(types: readonly ResourceType[], roots: Map<string, string>, v3: boolean): JsonObject {
  const paths: JsonObject = {};
  for (const type of types) {
    const root = roots.get(type.resource);
    const schema = root === undefined ? undefined : ref(root, v3);
    const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
    const collection = `${prefix}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.resource}`;
    const named = `${collection}/{name}`;
    const can = (verb: string): boolean => type.verbs.includes(verb);
    const coll: JsonObject = {};
    if (can('list'))
      coll.get = operation(
        type,
        'list',
        ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'watch'],
        undefined,
        false,
        v3,
      );
    if (can('create')) coll.post = operation(type, 'post', WRITE_PARAMS, schema, true, v3);
    if (can('deletecollection'))
      coll.delete = operation(
        type,
        'deletecollection',
        ['labelSelector', 'fieldSelector'],
        undefined,
        false,
        v3,
      );
    if (Object.keys(coll).length > 0) paths[collection] = coll;
    const one: JsonObject = {};
    if (can('get')) one.get = operation(type, 'get', ['pretty'], schema, false, v3);
    if (can('update')) one.put = operation(type, 'put', WRITE_PARAMS, schema, true, v3);
    if (can('patch'))
      one.patch = operation(
        type,
        'patch',
        [...WRITE_PARAMS, 'force'],
        v3 ? { type: 'object' } : { type: 'object' },
        true,
        v3,
      );
    if (can('delete'))
      one.delete = operation(
        type,
        'delete',
        ['dryRun', 'gracePeriodSeconds', 'propagationPolicy'],
        undefined,
        false,
        v3,
      );
    if (Object.keys(one).length > 0) paths[named] = one;
  }
  return paths;
}

const INFO = { title: 'Kubernetes', version: 'v1.34.0' };

/** The group/versions served, as `api/v1` and `apis/<group>/<version>`. */
function groupVersions(registry: ResourceRegistry): Map<string, ResourceType[]> {
  const out = new Map<string, ResourceType[]>();
  for (const t of registry.all()) {
    const key = t.group === '' ? `api/${t.version}` : `apis/${t.group}/${t.version}`;
    const list = out.get(key) ?? [];
    list.push(t);
    out.set(key, list);
  }
  return out;
}

/** `GET /openapi/v3/<api/v1 | apis/g/v>`: the OpenAPI 3.0 document of one group/version, or undefined. */
export function openApiV3Document(registry: ResourceRegistry, gvPath: string): JsonObject | undefined {
  const types = groupVersions(registry).get(gvPath);
  if (types === undefined) return undefined;
  const set = schemaSet(types, '#/components/schemas/');
  return {
    openapi: '3.0.0',
    info: INFO,
    paths: pathsOf(types, set.roots, true),
    components: { schemas: set.definitions },
  };
}

/** `GET /openapi/v3`: the index, one entry per group/version with a hash of its document. */
export function openApiV3Index(registry: ResourceRegistry): JsonObject {
  const paths: JsonObject = {};
  for (const gv of groupVersions(registry).keys()) {
    const doc = openApiV3Document(registry, gv);
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
    paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${hash}` };
  }
  return { paths };
}

/** `GET /openapi/v2`: one Swagger 2.0 document of every served kind. */
export function openApiV2Document(registry: ResourceRegistry): JsonObject {
  const definitions: JsonObject = {};
  const paths: JsonObject = {};
  for (const types of groupVersions(registry).values()) {
    const set = schemaSet(types, '#/definitions/');
    Object.assign(definitions, set.definitions);
    Object.assign(paths, pathsOf(types, set.roots, false));
  }
  return { swagger: '2.0', info: INFO, paths, definitions };
}
