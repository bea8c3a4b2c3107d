import * as models from '@kubernetes/client-node';
import { rec, type JsonObject } from '../api/json.js';
import type { ResourceType } from './resourceRegistry.js';

/**
 * OpenAPI schemas of the served kinds, and the decoder's treatment of unknown fields.
 *
 * Built-in kinds: kube-apiserver publishes the schemas generated from its Go types
 * (`k8s.io/kube-openapi`); the fake derives the same field tree from the generated models of
 * `@kubernetes/client-node` (each model's `attributeTypeMap`, itself generated from that OpenAPI
 * document), without descriptions. Custom resources: the CRD version's `openAPIV3Schema`.
 *
 * Unknown fields: a built-in object is decoded into its Go struct, which drops what the struct does
 * not have (`json.Unmarshal`; strict decoding reports them, `runtime/serializer/json`); a custom
 * resource is pruned to its structural schema (`apiextensions-apiserver/pkg/apiserver/schema/pruning`).
 * Both report paths as `spec.containers[0].foo`.
 */

/** A JSON schema node (OpenAPI v3 subset). */
export type Schema = JsonObject;

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}
interface ModelClass {
  attributeTypeMap?: readonly Attribute[];
}

const MODELS = models as unknown as Record<string, ModelClass | undefined>;
const META_TYPES = new Set([
  'ObjectMeta',
  'ListMeta',
  'LabelSelector',
  'LabelSelectorRequirement',
  'OwnerReference',
  'ManagedFieldsEntry',
  'Condition',
  'Status',
  'StatusDetails',
  'StatusCause',
]);

/** `io.k8s.api.core.v1` for `('', 'v1')`, `io.k8s.api.apps.v1` for `('apps', 'v1')`. */
function packageOf(group: string, version: string): string {
  if (group === 'apiextensions.k8s.io')
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}`;
  const first = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '').split('.')[0]!;
  return `io.k8s.api.${first}.${version}`;
}

/** `V1PodSpec` → `PodSpec`; `CoreV1Event` → `Event`. */
function shortName(model: string): string {
  return model.replace(/^[A-Z][a-z]*V\d+(?:alpha\d+|beta\d+)?|^V\d+(?:alpha\d+|beta\d+)?/, '');
}

/** The client-node model class name of a built-in kind, or undefined. */
function modelOf(type: ResourceType): string | undefined {
  const prefix = type.version.charAt(0).toUpperCase() + type.version.slice(1);
  const groupPrefix = (type.group === '' ? 'core' : type.group.split('.')[0]!).replace(/^./, (c) =>
    c.toUpperCase(),
  );
  for (const name of [`${prefix}${type.kind}`, `${groupPrefix}${prefix}${type.kind}`]) {
    if (MODELS[name]?.attributeTypeMap !== undefined) return name;
  }
  return undefined;
}

/** The schemas of one group/version document: definitions by name, and the root name of each kind. */
export interface SchemaSet {
  readonly definitions: Record<string, Schema>;
  /** Root definition name by `ResourceType` resource. */
  readonly roots: Map<string, string>;
}

class Builder {
  readonly definitions: Record<string, Schema> = {};
  readonly #pkg: string;
  readonly #refPrefix: string;

  constructor(pkg: string, refPrefix: string) {
    this.#pkg = pkg;
    this.#refPrefix = refPrefix;
  }

  nameOf(model: string): string {
    const short = shortName(model);
    return META_TYPES.has(short) ? `io.k8s.apimachinery.pkg.apis.meta.v1.${short}` : `${this.#pkg}.${short}`;
  }

  model(model: string): string {
    const name = this.nameOf(model);
    if (this.definitions[name] !== undefined) return name;
    const attributes = MODELS[model]?.attributeTypeMap ?? [];
    const schema: Schema = { type: 'object', properties: {} };
    this.definitions[name] = schema;
    const properties: Record<string, Schema> = {};
    for (const a of attributes) properties[a.baseName] = this.#typeOf(a.type, a.format);
    schema.properties = properties;
    return name;
  }

  #typeOf(type: string, format: string): Schema {
    const array = /^Array<(.+)>$/.exec(type);
    if (array) return { type: 'array', items: this.#typeOf(array[1]!, format) };
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
    if (map) return { type: 'object', additionalProperties: this.#typeOf(map[1]!, format) };
    switch (type) {
      case 'string':
        return format === 'byte' || format === 'date-time' ? { type: 'string', format } : { type: 'string' };
      case 'Date':
        return { type: 'string', format: 'date-time' };
      case 'number':
        return format === 'int32' || format === 'int64'
          ? { type: 'integer', format }
          : { type: 'number', format: 'double' };
      case 'boolean':
        return { type: 'boolean' };
      case 'IntOrString':
        return { 'x-kubernetes-int-or-string': true };
      case 'any':
      case 'object':
        return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      default:
        if (MODELS[type]?.attributeTypeMap !== undefined)
          return { $ref: `${this.#refPrefix}${this.model(type)}` };
        return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    }
  }
}

const cache = new Map<string, SchemaSet>();

/**
 * The schemas of the kinds of `types` (one group/version), with `$ref`s under `refPrefix`
 * (`#/components/schemas/` for v3, `#/definitions/` for v2). Custom resources use their `schema`.
 */
export function schemaSet(types: readonly ResourceType[], refPrefix: string): SchemaSet {
  const key = `${refPrefix}|${types.map((t) => `${t.apiVersion}/${t.resource}/${t.schema === undefined ? '' : 's'}`).join(',')}`;
  const cached = cache.get(key);
  if (cached !== undefined && types.every((t) => t.customResource === false)) return cached;
  const first = types[0];
  const builder = new Builder(
    first === undefined ? 'io.k8s.api.core.v1' : packageOf(first.group, first.version),
    refPrefix,
  );
  const roots = new Map<string, string>();
  for (const type of types) {
    const gvk = [{ group: type.group, version: type.version, kind: type.kind }];
    if (type.schema !== undefined || type.customResource) {
      const name = `${type.group.split('.').reverse().join('.')}.${type.version}.${type.kind}`;
      const schema: Schema = {
        ...(type.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
      };
      const props = { ...rec(schema.properties) };
      props.apiVersion ??= { type: 'string' };
      props.kind ??= { type: 'string' };
      props.metadata = { $ref: `${refPrefix}${builder.model('V1ObjectMeta')}` };
      schema.properties = props;
      schema['x-kubernetes-group-version-kind'] = gvk;
      builder.definitions[name] = schema;
      roots.set(type.resource, name);
      continue;
    }
    const model = modelOf(type);
    if (model === undefined) continue;
    const name = builder.model(model);
    builder.definitions[name] = { ...builder.definitions[name], 'x-kubernetes-group-version-kind': gvk };
    roots.set(type.resource, name);
  }
  const set: SchemaSet = { definitions: builder.definitions, roots };
  cache.set(key, set);
  return set;
}

/** The root schema of one type and a resolver of its `$ref`s, or undefined when the fake has none. */
export interface TypeSchema {
  root: Schema;
  resolve(ref: string): Schema | undefined;
}

const REF = '#/components/schemas/';

/** The schema of `type`'s objects (built-ins from client-node's models; CRDs from their schema). */
export function typeSchema(type: ResourceType): TypeSchema | undefined {
  const set = schemaSet([type], REF);
  const name = set.roots.get(type.resource);
  if (name === undefined) return undefined;
  const root = set.definitions[name]!;
  return { root, resolve: (ref) => set.definitions[ref.startsWith(REF) ? ref.slice(REF.length) : ref] };
}

/** What {@link walkUnknown} reports and does. */
export interface UnknownFieldsResult {
  /** Paths of fields the schema does not declare (`spec.foo`, `spec.containers[0].bar`). */
  unknown: string[];
}

/**
 * Walks `obj` along `schema`, dropping (when `prune`) and reporting the fields the schema does not
 * declare, and (when `applyDefaults`) filling in absent fields that have a `default`
 * (`structuraldefaulting.Default`). A node with `x-kubernetes-preserve-unknown-fields` or a
 * schema-less `additionalProperties` keeps everything below it. Mutates `obj`.
 */
export function walkUnknown(
  obj: unknown,
  schema: TypeSchema,
  options: { prune: boolean; applyDefaults: boolean },
): UnknownFieldsResult {
  const unknown: string[] = [];
  const visit = (value: unknown, node: Schema | undefined, path: string): void => {
    let s = node;
    for (let i = 0; i < 8 && s !== undefined && typeof s.$ref === 'string'; i++) s = schema.resolve(s.$ref);
    if (s === undefined || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      const items = s.items as Schema | undefined;
      value.forEach((item, i) => visit(item, items, `${path}[${i}]`));
      return;
    }
    const object = value as JsonObject;
    const properties = s.properties as Record<string, Schema> | undefined;
    const additional = s.additionalProperties;
    if (options.applyDefaults && properties !== undefined) {
      for (const [key, prop] of Object.entries(properties)) {
        if (object[key] === undefined && prop.default !== undefined)
          object[key] = structuredClone(prop.default);
      }
    }
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    for (const key of Object.keys(object)) {
      const child = path === '' ? key : `${path}.${key}`;
      const prop = properties?.[key];
      if (prop !== undefined) {
        visit(object[key], prop, child);
      } else if (typeof additional === 'object' && additional !== null) {
        visit(object[key], additional as Schema, child);
      } else if (
        additional === true ||
        preserve ||
        (properties === undefined && additional === undefined && s.type !== 'object')
      ) {
        continue;
      } else if (properties !== undefined || s.type === 'object') {
        unknown.push(child);
        if (options.prune) delete object[key];
      }
    }
  };
  visit(obj, schema.root, '');
  return { unknown };
}

/**
 * An object built with `@kubernetes/client-node`'s models (`loadYaml` returns those) uses their
 * property names (`_default`, `xKubernetesPreserveUnknownFields`, `_enum`); the wire form uses the
 * JSON names (`default`, `x-kubernetes-preserve-unknown-fields`, `enum`), as client-node's own
 * serializer writes them. Renames along `model`'s attribute map; other keys are kept as they are.
 * Returns a new object (or `value` itself when nothing needs renaming).
 */
export function toWireForm(value: unknown, model: string): unknown {
  if (Array.isArray(value)) return value.map((item) => toWireForm(item, model));
  if (typeof value !== 'object' || value === null) return value;
  const attributes = MODELS[model]?.attributeTypeMap;
  if (attributes === undefined) return value;
  const byName = new Map(attributes.map((a) => [a.name, a]));
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value as JsonObject)) {
    const attribute = byName.get(key);
    if (attribute === undefined) {
      out[key] = child;
      continue;
    }
    const inner =
      /^Array<(.+)>$/.exec(attribute.type)?.[1] ?? /^\{ \[key: string\]: (.+); \}$/.exec(attribute.type)?.[1];
    const map = attribute.type.startsWith('{');
    const childModel = inner ?? attribute.type;
    out[attribute.baseName] =
      map && typeof child === 'object' && child !== null
        ? Object.fromEntries(
            Object.entries(child as JsonObject).map(([k, v]) => [k, toWireForm(v, childModel)]),
          )
        : toWireForm(child, childModel);
  }
  return out;
}
