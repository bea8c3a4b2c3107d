import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ObjectWriter } from './runtimeClient.js';

/** The default {@link ObjectWriter}: `@kinformer/client-node`'s ObjectClient on `kubeConfig`. */
export function kubeObjectWriter(kubeConfig: KubeConfig, options: { fieldManager: string }): ObjectWriter {
  void kubeConfig;
  void options;
  return {
    write: () =>
      Promise.reject(new KinformerError(ErrorCodes.INVALID_OPTION, 'ObjectClient is not wired yet')),
  };
}
