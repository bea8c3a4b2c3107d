import { DeletedFinalStateUnknown } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { keyOf } from './objects.js';

/** The event handler {@link loggingHandler} returns (the shape of controller's `ResourceEventHandler`). */
export interface LoggingHandler<T extends KubeObject> {
  onAdd(obj: T, initial: boolean): void;
  onUpdate(oldObj: T, newObj: T): void;
  onDelete(obj: T | DeletedFinalStateUnknown<T>): void;
}

/**
 * An event handler that writes each notification into `log` as one line: `add <key> <initial>`,
 * `update <key> <old rv>-><new rv>`, `delete <key>`, or `delete tombstone <key> rv <last known rv>`.
 * It calls `before(initial)` first, where a test records what a reader sees at that moment.
 */
export function loggingHandler<T extends KubeObject>(
  log: string[],
  before: (initial: boolean) => void = () => undefined,
): LoggingHandler<T> {
  return {
    onAdd: (obj, initial) => {
      before(initial);
      log.push(`add ${keyOf(obj)} ${initial}`);
    },
    onUpdate: (oldObj, newObj) => {
      before(false);
      log.push(
        `update ${keyOf(newObj)} ${oldObj.metadata?.resourceVersion}->${newObj.metadata?.resourceVersion}`,
      );
    },
    onDelete: (obj) => {
      before(false);
      log.push(
        obj instanceof DeletedFinalStateUnknown
          ? `delete tombstone ${obj.key} rv ${obj.obj.metadata?.resourceVersion}`
          : `delete ${keyOf(obj)}`,
      );
    },
  };
}
