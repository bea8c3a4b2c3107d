/**
 * A Widget operator: each `widgets.example.com/v1` object gets an owned ConfigMap `<name>-widget`
 * holding its spec, and a status saying which generation it reflects. A finalizer records an Event
 * when a Widget goes (where a real operator would release something outside Kubernetes).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { defineKind, kinds, setControllerReference, withFinalizer } from 'kinformer';
import type { KubeObject, Manager } from 'kinformer';

/** A Widget as it comes off the wire. */
export interface Widget extends KubeObject {
  spec: { color: string; size: number };
  status?: { observedGeneration?: number; configMap?: string; ready?: boolean };
}

export const widgets = defineKind<Widget>({
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
});
export const FINALIZER = 'example.com/widget-cleanup';

/** Adds the Widget controller to `mgr`. */
export function addWidgetOperator(mgr: Manager): void {
  mgr
    .controller('widgets')
    .for(widgets)
    .owns(kinds.configMaps)
    .reconcile(
      withFinalizer(widgets, FINALIZER, {
        apply: async ({ object: w, client, recorder, signal }) => {
          const name = `${w.metadata!.name}-widget`;
          const cm: V1ConfigMap = {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace: w.metadata!.namespace! },
            data: { color: w.spec.color, size: String(w.spec.size) },
          };
          await client.apply(kinds.configMaps, setControllerReference(w, cm, widgets), {
            force: true,
            signal,
          });
          const generation = w.metadata?.generation;
          if (w.status?.observedGeneration === generation && w.status?.ready === true) return;
          const status = { observedGeneration: generation, configMap: name, ready: true };
          await client.patchStatus(
            widgets,
            { namespace: w.metadata!.namespace, name: w.metadata!.name! },
            { status },
            { signal },
          );
          recorder.event(w, 'Normal', 'Reconciled', `ConfigMap ${name} reflects generation ${generation}`);
        },
        cleanup: ({ object: w, recorder }) => {
          recorder.event(w, 'Normal', 'CleanedUp', `released what widget ${w.metadata!.name} held`);
        },
      }),
    );
}
