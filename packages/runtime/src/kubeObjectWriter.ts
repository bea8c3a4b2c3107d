import { ObjectClient } from '@kinformer/client-node';
import type { Logger } from '@kinformer/core';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ObjectWriter } from './runtimeClient.js';

/** The default {@link ObjectWriter}: `@kinformer/client-node`'s ObjectClient on `kubeConfig`. */
export function kubeObjectWriter(
  kubeConfig: KubeConfig,
  options: { fieldManager: string; logger?: Logger | undefined },
): ObjectWriter {
  return new ObjectClient(kubeConfig, {
    fieldManager: options.fieldManager,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}
