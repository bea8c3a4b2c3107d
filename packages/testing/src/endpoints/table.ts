import { rec, type JsonObject } from '../api/json.js';
import type { PrinterColumn, ResourceType } from '../registry/resourceRegistry.js';
import { selectorString } from '../registry/scale.js';
import { text } from '../storage/storedForm.js';

/**
 * Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), as kube-apiserver
 * does it: built-in kinds print with the columns of `pkg/printers/internalversion/printers.go`
 * (`AddHandlers`: pods, deployments, configmaps, secrets, services, namespaces, nodes…), custom
 * resources with their `additionalPrinterColumns` (`apiextensions-apiserver/pkg/registry/customresource/tableconvertor`,
 * an `Age` column when there are none: `crdHandler` `serveDefaultColumnsIfEmpty`), and a type
 * without a printer with `rest.NewDefaultTableConvertor`'s `Name`/`Created At`.
 */

/** `metav1.TableColumnDefinition`. */
export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A typed object (`kind`/`apiVersion`, `metadata`…). */
type Obj = JsonObject & { metadata?: unknown };
type Cell = string | number | boolean | null;

/** `rows[].object` per `?includeObject=` (`metav1.IncludeObjectPolicy`; default `Metadata`). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function col(name: string, type: string, description = '', priority = 0, format = ''): TableColumn {
  return { name, type, format, description, priority };
}
const NAME = col('Name', 'string', NAME_DESCRIPTION, 0, 'name');
const AGE = col('Age', 'string', AGE_DESCRIPTION);

/**
 * A printer's columns (`printers.go`), a line each: `name | type | priority | description`; a line
 * `Name` or `Age` is the standard column of that name.
 */
function columns(lines: string): TableColumn[] {
  return lines
    .trim()
    .split('\n')
    .map((line) => {
      const [name = '', type = '', priority = '0', description = ''] = line.split('|').map((f) => f.trim());
      if (name === 'Name' && type === '') return NAME;
      if (name === 'Age' && type === '') return AGE;
      return col(name, type, description, Number(priority));
    });
}

/** `duration.HumanDuration` (apimachinery `util/duration`), what printers show as an age. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${days / 365}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

/** `translateTimestampSince`. */
function age(obj: Obj, now: number): string {
  const created = Date.parse(text(rec(obj.metadata).creationTimestamp));
  return Number.isNaN(created) ? '<unknown>' : humanDuration(now - created);
}

function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function orNone(value: string): string {
  return value === '' ? '<none>' : value;
}
function count(value: unknown): number {
  return Object.keys(rec(value)).length;
}

/** `labels.FormatLabels`-like `k=v,k2=v2`. */
function formatLabels(value: unknown): string {
  const entries = Object.entries(rec(value));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${String(v)}`).join(',');
}

/** `metav1.FormatLabelSelector`: `LabelSelectorAsSelector(s).String()`, `<none>` if empty, `<error>` if invalid. */
function formatSelector(selector: unknown): string {
  let out: string;
  try {
    out = selectorString(selector);
  } catch {
    return '<error>';
  }
  return out === '' ? '<none>' : out;
}

/** `printPod`'s READY, STATUS and RESTARTS. */
function podCells(pod: Obj): [string, string, string] {
  const spec = rec(pod.spec);
  const status = rec(pod.status);
  const statuses = arr(status.containerStatuses).map(rec);
  let reason = text(status.phase);
  if (text(status.reason) !== '') reason = text(status.reason);
  let ready = 0;
  let restarts = 0;
  for (const cs of statuses) {
    restarts += typeof cs.restartCount === 'number' ? cs.restartCount : 0;
    const state = rec(cs.state);
    const waiting = rec(state.waiting);
    const terminated = rec(state.terminated);
    if (text(waiting.reason) !== '') reason = text(waiting.reason);
    else if (text(terminated.reason) !== '') reason = text(terminated.reason);
    else if (state.running !== undefined && cs.ready === true) ready++;
  }
  if (rec(pod.metadata).deletionTimestamp !== undefined) reason = 'Terminating';
  return [`${ready}/${arr(spec.containers).length}`, reason, String(restarts)];
}

function servicePorts(spec: JsonObject): string {
  const ports = arr(spec.ports).map((p) => {
    const port = rec(p);
    const protocol = text(port.protocol) || 'TCP';
    const node = typeof port.nodePort === 'number' && port.nodePort !== 0 ? `:${port.nodePort}` : '';
    return `${String(port.port)}${node}/${protocol}`;
  });
  return ports.length === 0 ? '<none>' : ports.join(',');
}

function externalIp(spec: JsonObject, status: JsonObject): string {
  const external = arr(spec.externalIPs).map(String);
  switch (text(spec.type) || 'ClusterIP') {
    case 'LoadBalancer': {
      const ingress = arr(rec(status.loadBalancer).ingress).map(
        (i) => text(rec(i).ip) || text(rec(i).hostname),
      );
      const all = [...ingress, ...external].filter((s) => s !== '');
      return all.length === 0 ? '<pending>' : all.join(',');
    }
    case 'ExternalName':
      return text(spec.externalName);
    default:
      return external.length === 0 ? '<none>' : external.join(',');
  }
}

function nodeStatus(node: Obj): string {
  const ready = arr(rec(node.status).conditions)
    .map(rec)
    .find((c) => c.type === 'Ready');
  let status = ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady';
  if (rec(node.spec).unschedulable === true) status += ',SchedulingDisabled';
  return status;
}

function nodeRoles(node: Obj): string {
  const roles = Object.keys(rec(rec(node.metadata).labels))
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r !== '');
  return roles.length === 0 ? '<none>' : roles.sort().join(',');
}

function nodeAddress(node: Obj, type: string): string {
  const found = arr(rec(node.status).addresses)
    .map(rec)
    .find((a) => a.type === type);
  return found === undefined ? '<none>' : text(found.address);
}

interface Printer {
  columns: TableColumn[];
  cells(obj: Obj, now: number): Cell[];
}

function containersOf(template: unknown): JsonObject[] {
  return arr(rec(rec(template).spec).containers).map(rec);
}

/** The printers of `printers.go` for the built-in kinds the server knows best. */
const PRINTERS: Record<string, Printer> = {
  '/pods': {
    columns: columns(`
      Name
      Ready           | string  | 0 | The aggregate readiness state of this pod for accepting traffic.
      Status          | string  | 0 | The aggregate status of the containers in this pod.
      Restarts        | string  | 0 | The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.
      Age
      IP              | string  | 1 | IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.
      Node            | string  | 1 | NodeName is a request to schedule this pod onto a specific node.
      Nominated Node  | string  | 1 | nominatedNodeName is set when this pod preempts other pods on the node.
      Readiness Gates | string  | 1 | If specified, all readiness gates will be evaluated for pod readiness.
    `),
    cells(pod, now) {
      const [ready, status, restarts] = podCells(pod);
      const spec = rec(pod.spec);
      const st = rec(pod.status);
      const gates = arr(spec.readinessGates);
      const gateCell =
        gates.length === 0
          ? '<none>'
          : `${gates.filter((g) => arr(st.conditions).some((c) => rec(c).type === rec(g).conditionType && rec(c).status === 'True')).length}/${gates.length}`;
      return [
        text(rec(pod.metadata).name),
        ready,
        status,
        restarts,
        age(pod, now),
        orNone(text(st.podIP)),
        orNone(text(spec.nodeName)),
        orNone(text(st.nominatedNodeName)),
        gateCell,
      ];
    },
  },
  'apps/deployments': {
    columns: columns(`
      Name
      Ready      | string  | 0 | Number of the pod with ready state
      Up-to-date | integer | 0 | Total number of non-terminated pods targeted by this deployment that have the desired template spec.
      Available  | integer | 0 | Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.
      Age
      Containers | string  | 1 | Names of each container in the template.
      Images     | string  | 1 | Images referenced by each container in the template.
      Selector   | string  | 1 | Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.
    `),
    cells(d, now) {
      const spec = rec(d.spec);
      const st = rec(d.status);
      const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
      const containers = containersOf(spec.template);
      return [
        text(rec(d.metadata).name),
        `${num(st.readyReplicas)}/${typeof spec.replicas === 'number' ? spec.replicas : 1}`,
        num(st.updatedReplicas),
        num(st.availableReplicas),
        age(d, now),
        containers.map((c) => text(c.name)).join(','),
        containers.map((c) => text(c.image)).join(','),
        formatSelector(spec.selector),
      ];
    },
  },
  '/configmaps': {
    columns: columns(`
      Name
      Data | integer | 0 | Data contains the configuration data.
      Age
    `),
    cells: (cm, now) => [text(rec(cm.metadata).name), count(cm.data) + count(cm.binaryData), age(cm, now)],
  },
  '/secrets': {
    columns: columns(`
      Name
      Type | string  | 0 | Used to facilitate programmatic handling of secret data.
      Data | integer | 0 | Data contains the secret data.
      Age
    `),
    cells: (s, now) => [text(rec(s.metadata).name), text(s.type), count(s.data), age(s, now)],
  },
  '/services': {
    columns: columns(`
      Name
      Type        | string  | 0 | type determines how the Service is exposed.
      Cluster-IP  | string  | 0 | clusterIP is the IP address of the service and is usually assigned randomly.
      External-IP | string  | 0 | externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.
      Port(s)     | string  | 0 | The list of ports that are exposed by this service.
      Age
      Selector    | string  | 1 | Route service traffic to pods with label keys and values matching this selector.
    `),
    cells(svc, now) {
      const spec = rec(svc.spec);
      return [
        text(rec(svc.metadata).name),
        text(spec.type) || 'ClusterIP',
        orNone(text(spec.clusterIP)),
        externalIp(spec, rec(svc.status)),
        servicePorts(spec),
        age(svc, now),
        formatLabels(spec.selector),
      ];
    },
  },
  '/namespaces': {
    columns: columns(`
      Name
      Status | string  | 0 | The status of the namespace
      Age
    `),
    cells: (ns, now) => [text(rec(ns.metadata).name), text(rec(ns.status).phase), age(ns, now)],
  },
  '/nodes': {
    columns: columns(`
      Name
      Status            | string  | 0 | The status of the node
      Roles             | string  | 0 | The roles of the node
      Age
      Version           | string  | 0 | Kubelet Version reported by the node.
      Internal-IP       | string  | 1 | List of addresses reachable to the node.
      External-IP       | string  | 1 | List of addresses reachable to the node.
      OS-Image          | string  | 1 | OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).
      Kernel-Version    | string  | 1 | Kernel Version reported by the node from \`uname -r\` (e.g. 3.16.0-0.bpo.4-amd64).
      Container-Runtime | string  | 1 | Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).
    `),
    cells(node, now) {
      const info = rec(rec(node.status).nodeInfo);
      const or = (v: unknown): string => (orNone(text(v)) === '<none>' ? '<unknown>' : text(v));
      return [
        text(rec(node.metadata).name),
        nodeStatus(node),
        nodeRoles(node),
        age(node, now),
        text(info.kubeletVersion),
        nodeAddress(node, 'InternalIP'),
        nodeAddress(node, 'ExternalIP'),
        or(info.osImage),
        or(info.kernelVersion),
        or(info.containerRuntimeVersion),
      ];
    },
  },
};

/** `rest.NewDefaultTableConvertor`: a type without a printer. */
const DEFAULT_CONVERTOR: Printer = {
  columns: [NAME, col('Created At', 'date', AGE_DESCRIPTION)],
  cells: (obj) => [text(rec(obj.metadata).name), text(rec(obj.metadata).creationTimestamp)],
};

/** Every other built-in kind has a printer in printers.go; the fake prints those with Name and Age. */
const NAME_AGE: Printer = {
  columns: [NAME, AGE],
  cells: (obj, now) => [text(rec(obj.metadata).name), age(obj, now)],
};

/**
 * Evaluates the simple JSONPath of a printer column (`.spec.replicas`, `.status.conditions[0].type`,
 * `.status.conditions[?(@.type=="Ready")].status`) as `client-go/util/jsonpath` does for one result.
 */
export function evalJsonPath(obj: unknown, path: string): unknown {
  const inner = path.trim().replace(/^\{(.*)\}$/, '$1');
  const tokens = inner.match(/\.[^.[\]]+|\[\?\(@\.[^)]*\)\]|\[[^\]]*\]/g) ?? [];
  let current: unknown = obj;
  for (const token of tokens) {
    if (current === undefined || current === null) return undefined;
    if (token.startsWith('[?(')) {
      const m = /^\[\?\(@\.([\w.-]+)\s*==\s*["']?([^"')]*)["']?\)\]$/.exec(token);
      if (!m) return undefined;
      const [, field, value] = m;
      current = arr(current).find((item) => String(evalJsonPath(item, `.${field!}`)) === value);
    } else if (token.startsWith('[')) {
      const index = Number(token.slice(1, -1));
      const list = arr(current);
      current = Number.isInteger(index) ? list[index < 0 ? list.length + index : index] : undefined;
    } else {
      current = rec(current)[token.slice(1)];
    }
  }
  return current;
}

function crdPrinter(columns: readonly PrinterColumn[]): Printer {
  const effective: readonly PrinterColumn[] =
    columns.length > 0
      ? columns
      : [
          {
            name: 'Age',
            type: 'date',
            jsonPath: '.metadata.creationTimestamp',
            description: AGE_DESCRIPTION,
          },
        ];
  return {
    columns: [
      NAME,
      ...effective.map((c) => col(c.name, c.type, c.description ?? '', c.priority ?? 0, c.format ?? '')),
    ],
    // tableconvertor.go `cellForJSONValue`: typed cells; a date becomes an age (`ConvertToHumanReadableDateType`).
    cells: (obj, now) => [
      text(rec(obj.metadata).name),
      ...effective.map((c): Cell => {
        const value = evalJsonPath(obj, c.jsonPath);
        if (value === undefined || value === null) return null;
        switch (c.type) {
          case 'string':
            return typeof value === 'string' ? value : JSON.stringify(value);
          case 'integer':
            return typeof value === 'number' ? Math.trunc(value) : null;
          case 'number':
            return typeof value === 'number' ? value : null;
          case 'boolean':
            return typeof value === 'boolean' ? value : null;
          case 'date': {
            if (typeof value !== 'string') return null;
            const at = Date.parse(value);
            return Number.isNaN(at) ? '<invalid>' : humanDuration(now - at);
          }
          default:
            return null;
        }
      }),
    ],
  };
}

function printerFor(type: ResourceType): Printer {
  if (type.printerColumns !== undefined || type.customResource) return crdPrinter(type.printerColumns ?? []);
  const builtin = PRINTERS[`${type.group}/${type.resource}`];
  if (builtin !== undefined) return builtin;
  if (type.group === 'apiextensions.k8s.io' || type.verbs.length === 1) return DEFAULT_CONVERTOR;
  return NAME_AGE;
}

function rowObject(obj: Obj, includeObject: IncludeObject): unknown {
  if (includeObject === 'None') return undefined;
  if (includeObject === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** Reads `?includeObject=` (`None`, `Metadata`, `Object`; anything else is the default `Metadata`). */
export function includeObjectOf(params: URLSearchParams): IncludeObject {
  const value = params.get('includeObject');
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}

/**
 * A `meta.k8s.io/v1` `Table` of `objects` (typed objects of `type`), with `listMeta` as its metadata
 * (`resourceVersion`, `continue`…; `{}` for a single object). `now` is the server's clock in ms.
 */
export function toTable(
  type: ResourceType,
  objects: readonly Obj[],
  listMeta: JsonObject,
  includeObject: IncludeObject,
  now: number,
): JsonObject {
  return tableOf(printerFor(type), objects, listMeta, includeObject, now);
}

/** A one-row Table per object, with the printer of `type` resolved once (a Table watch). */
export function objectTable(
  type: ResourceType,
  includeObject: IncludeObject,
): (obj: Obj, now: number) => JsonObject {
  const printer = printerFor(type);
  return (obj, now) => tableOf(printer, [obj], {}, includeObject, now);
}

function tableOf(
  printer: Printer,
  objects: readonly Obj[],
  listMeta: JsonObject,
  includeObject: IncludeObject,
  now: number,
): JsonObject {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: printer.columns,
    rows: objects.map((obj) => {
      const row: JsonObject = { cells: printer.cells(obj, now) };
      const object = rowObject(obj, includeObject);
      if (object !== undefined) row.object = object;
      return row;
    }),
  };
}
