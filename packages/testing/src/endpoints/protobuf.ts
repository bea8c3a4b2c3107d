import type { JsonObject } from '../api/json.js';

/**
 * Reads the protobuf bodies kubectl sends (`application/vnd.kubernetes.protobuf`): its typed
 * clients (`kubectl create configmap|secret|deployment|namespace|service|serviceaccount|job`,
 * `auth can-i`, `auth whoami`) write protobuf, and kubectl 1.32 does not retry a 415 in JSON.
 *
 * The envelope is apimachinery's (`runtime/serializer/protobuf/protobuf.go`): the magic `k8s\0`,
 * then a `runtime.Unknown` {typeMeta{apiVersion, kind}, raw}; `raw` is the object in the wire
 * format of `k8s.io/api`'s `generated.proto`. The fake knows the messages of the kinds above (the
 * fields kubectl's generators set, and the common ones around them); a kind it does not know is
 * answered 415, as a server that cannot decode a body does. Fields it does not know are skipped.
 *
 * gogo-protobuf writes non-pointer fields even when empty; their JSON has `omitempty`, so empty
 * strings, `false`, `0` (except fields marked `!`) and empty messages are dropped, as the JSON
 * encoding of the decoded object would drop them.
 */

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** `<field number>:<json name>:<type>`; a `*` before the type repeats it, a `!` after the name keeps a zero. */
const MESSAGES: Record<string, string> = {
  Unknown: '1:typeMeta:TypeMeta 2:raw:raw 3:contentEncoding:string 4:contentType:string',
  TypeMeta: '1:apiVersion:string 2:kind:string',
  ObjectMeta:
    '1:name:string 2:generateName:string 3:namespace:string 5:uid:string 6:resourceVersion:string 7:generation:int 8:creationTimestamp:Time 9:deletionTimestamp:Time 10:deletionGracePeriodSeconds:int 11:labels:map<string> 12:annotations:map<string> 13:ownerReferences:*OwnerReference 14:finalizers:*string',
  OwnerReference:
    '1:kind:string 3:name:string 4:uid:string 5:apiVersion:string 6:controller:bool 7:blockOwnerDeletion:bool',
  Time: '1:seconds:int 2:nanos:int',
  LabelSelector: '1:matchLabels:map<string> 2:matchExpressions:*LabelSelectorRequirement',
  LabelSelectorRequirement: '1:key:string 2:operator:string 3:values:*string',
  IntOrString: '1:type:int 2:intVal:int 3:strVal:string',
  Quantity: '1:string:string',
  ConfigMap: '1:metadata:ObjectMeta 2:data:map<string> 3:binaryData:map<bytes> 4:immutable:bool',
  Secret: '1:metadata:ObjectMeta 2:data:map<bytes> 3:type:string 4:stringData:map<string> 5:immutable:bool',
  Namespace: '1:metadata:ObjectMeta 2:spec:NamespaceSpec',
  NamespaceSpec: '1:finalizers:*string',
  ServiceAccount:
    '1:metadata:ObjectMeta 3:imagePullSecrets:*LocalObjectReference 4:automountServiceAccountToken:bool',
  LocalObjectReference: '1:name:string',
  Service: '1:metadata:ObjectMeta 2:spec:ServiceSpec',
  ServiceSpec:
    '1:ports:*ServicePort 2:selector:map<string> 3:clusterIP:string 4:type:string 5:externalIPs:*string 7:sessionAffinity:string 10:externalName:string',
  ServicePort:
    '1:name:string 2:protocol:string 3:port:int 4:targetPort:IntOrString 5:nodePort:int 6:appProtocol:string',
  Deployment: '1:metadata:ObjectMeta 2:spec:DeploymentSpec',
  DeploymentSpec:
    '1:replicas!:int 2:selector:LabelSelector 3:template:PodTemplateSpec 4:strategy:DeploymentStrategy 5:minReadySeconds:int 6:revisionHistoryLimit!:int 7:paused:bool 9:progressDeadlineSeconds:int',
  DeploymentStrategy: '1:type:string 2:rollingUpdate:RollingUpdateDeployment',
  RollingUpdateDeployment: '1:maxUnavailable:IntOrString 2:maxSurge:IntOrString',
  Job: '1:metadata:ObjectMeta 2:spec:JobSpec',
  JobSpec:
    '1:parallelism!:int 2:completions!:int 3:activeDeadlineSeconds:int 4:selector:LabelSelector 5:manualSelector:bool 6:template:PodTemplateSpec 7:backoffLimit!:int 8:ttlSecondsAfterFinished!:int 10:suspend:bool',
  CronJob: '1:metadata:ObjectMeta 2:spec:CronJobSpec',
  CronJobSpec:
    '1:schedule:string 2:startingDeadlineSeconds:int 3:concurrencyPolicy:string 4:suspend:bool 5:jobTemplate:JobTemplateSpec 6:successfulJobsHistoryLimit!:int 7:failedJobsHistoryLimit!:int 8:timeZone:string',
  JobTemplateSpec: '1:metadata:ObjectMeta 2:spec:JobSpec',
  PodTemplateSpec: '1:metadata:ObjectMeta 2:spec:PodSpec',
  PodSpec:
    '2:containers:*Container 3:restartPolicy:string 4:terminationGracePeriodSeconds:int 6:dnsPolicy:string 7:nodeSelector:map<string> 8:serviceAccountName:string 10:nodeName:string 11:hostNetwork:bool 15:imagePullSecrets:*LocalObjectReference 16:hostname:string 17:subdomain:string 19:schedulerName:string 20:initContainers:*Container',
  Container:
    '1:name:string 2:image:string 3:command:*string 4:args:*string 5:workingDir:string 6:ports:*ContainerPort 7:env:*EnvVar 8:resources:ResourceRequirements 13:terminationMessagePath:string 14:imagePullPolicy:string 16:stdin:bool 17:stdinOnce:bool 18:tty:bool 20:terminationMessagePolicy:string',
  ContainerPort: '1:name:string 2:hostPort:int 3:containerPort:int 4:protocol:string 5:hostIP:string',
  EnvVar: '1:name:string 2:value:string',
  ResourceRequirements: '1:limits:map<Quantity> 2:requests:map<Quantity>',
};

interface Field {
  name: string;
  type: string;
  repeated: boolean;
  keepZero: boolean;
}

const parsed = new Map<string, Map<number, Field>>();
function fieldsOf(message: string): Map<number, Field> {
  let fields = parsed.get(message);
  if (fields === undefined) {
    fields = new Map();
    for (const spec of (MESSAGES[message] ?? '').split(' ')) {
      const [num, rawName, rawType] = spec.split(':') as [string, string, string];
      const keepZero = rawName.endsWith('!');
      fields.set(Number(num), {
        name: keepZero ? rawName.slice(0, -1) : rawName,
        type: rawType.replace(/^\*/, ''),
        repeated: rawType.startsWith('*'),
        keepZero,
      });
    }
    parsed.set(message, fields);
  }
  return fields;
}

/** A malformed body. */
export class ProtobufError extends Error {}

class Reader {
  pos = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly end: number = buf.length,
  ) {}

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtobufError('truncated varint');
      const byte = this.buf[this.pos++]!;
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new ProtobufError('varint too long');
  }

  bytes(): Uint8Array {
    const length = this.varint();
    if (this.pos + length > this.end) throw new ProtobufError('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new ProtobufError(`unsupported wire type ${wireType}`);
  }
}

const text = new TextDecoder();

function isEmpty(value: unknown): boolean {
  if (value === '' || value === false || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function decodeMessage(buf: Uint8Array, message: string): JsonObject {
  const fields = fieldsOf(message);
  const reader = new Reader(buf);
  const out: JsonObject = {};
  while (reader.pos < reader.end) {
    const tag = reader.varint();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    const field = fields.get(number);
    if (field === undefined) {
      reader.skip(wireType);
      continue;
    }
    const value = decodeValue(reader, wireType, field);
    if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
    else if (field.type.startsWith('map<')) {
      const [k, v] = value as [string, unknown];
      // defineProperty: a map key named `__proto__` is data (a ConfigMap may have one), not the prototype.
      Object.defineProperty((out[field.name] ??= {}) as JsonObject, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[field.name] = value;
  }
  for (const [key, value] of Object.entries(out)) {
    const field = [...fields.values()].find((f) => f.name === key);
    if (value === 0 && field?.keepZero !== true) delete out[key];
    else if (isEmpty(value) && key !== 'metadata') delete out[key];
  }
  return out;
}

function decodeValue(reader: Reader, wireType: number, field: Field): unknown {
  const type = field.type;
  if (type === 'int') return wireType === 0 ? reader.varint() : (reader.skip(wireType), 0);
  if (type === 'bool') return reader.varint() !== 0;
  const bytes = reader.bytes();
  if (type === 'string') return text.decode(bytes);
  if (type === 'raw') return bytes;
  if (type === 'bytes') return Buffer.from(bytes).toString('base64');
  const map = /^map<(\w+)>$/.exec(type);
  if (map) {
    const entry = new Reader(bytes);
    let key = '';
    let value: unknown = map[1] === 'Quantity' ? '' : '';
    while (entry.pos < entry.end) {
      const tag = entry.varint();
      const part = entry.bytes();
      if (tag >> 3 === 1) key = text.decode(part);
      else if (map[1] === 'string') value = text.decode(part);
      else if (map[1] === 'bytes') value = Buffer.from(part).toString('base64');
      else value = text.decode(new Reader(part).bytes());
    }
    return [key, value];
  }
  const decoded = decodeMessage(bytes, type);
  switch (type) {
    case 'Time':
      return typeof decoded.seconds === 'number' && decoded.seconds !== 0
        ? new Date(decoded.seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')
        : undefined;
    case 'IntOrString':
      return decoded.type === 1 ? (decoded.strVal ?? '') : (decoded.intVal ?? 0);
    case 'Quantity':
      return decoded.string;
    default:
      return decoded;
  }
}

/** True for a protobuf `Content-Type`. */
export function isProtobuf(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/vnd.kubernetes.protobuf';
}

/**
 * Decodes a kube protobuf body into the JSON object it stands for (`kind`/`apiVersion` from the
 * envelope), or undefined when the kind is not one the fake can read.
 * @throws ProtobufError for a body that is not a kube protobuf envelope.
 */
export function decodeKubeProtobuf(body: Uint8Array): JsonObject | undefined {
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b))
    throw new ProtobufError('missing the k8s protobuf prefix');
  const unknown = decodeMessage(body.subarray(4), 'Unknown');
  const typeMeta = (unknown.typeMeta ?? {}) as JsonObject;
  const kind = typeof typeMeta.kind === 'string' ? typeMeta.kind : '';
  const apiVersion = typeof typeMeta.apiVersion === 'string' ? typeMeta.apiVersion : '';
  if (/Review$/.test(kind)) return { kind, apiVersion };
  if (MESSAGES[kind] === undefined || !(unknown.raw instanceof Uint8Array)) return undefined;
  return { kind, apiVersion, ...decodeMessage(unknown.raw, kind) };
}
