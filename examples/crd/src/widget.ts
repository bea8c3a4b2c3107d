/**
 * The custom resource of this example: `widgets.example.com/v1`, namespaced. `widget-crd.yaml` (next
 * to this package's `package.json`) is the same definition for a real cluster.
 */
import type { GroupVersionResource, KubeObject, ObjectMeta } from 'kinformer';
import type { ResourceDefinition } from '@kinformer/testing';

/**
 * A Widget as it comes off the wire. Write the interface for the fields you read; everything is plain
 * JSON (no classes), so it matches whatever the server sends.
 */
export interface Widget extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: {
    color: string;
    size: number;
  };
  status?: {
    ready?: boolean;
  };
}

/** What the informer watches: group, version and the plural resource name of the URL. */
export const WIDGETS = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
} as const satisfies GroupVersionResource;

/** The same type, as FakeApiServer serves it (a CRD with `spec.color` as a selectable field). */
export const WIDGET_DEFINITION: ResourceDefinition = {
  ...WIDGETS,
  kind: 'Widget',
  namespaced: true,
  customResource: true,
  selectableFields: ['spec.color'],
};

/** A widget object to create. */
export function widget(namespace: string, name: string, color: string, size: number): Widget {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: {
      namespace,
      name,
      labels: { color },
      // What server-side apply records on every object; often a large part of its size.
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'example.com/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { 'f:color': {} } },
            'f:spec': { 'f:color': {}, 'f:size': {} },
          },
        },
      ],
    },
    spec: { color, size },
  };
}
