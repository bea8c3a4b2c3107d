export {
  FakeApiServer,
  type FakeApiServerOptions,
  type InProcessApplyOptions,
  type InProcessDeleteOptions,
  type InProcessPatchOptions,
  type Stored,
  type WaitOptions,
} from './fakeApiServer.js';
export { FAKE_TOKEN, type FakeKubeConfigOptions } from './fakeKubeConfig.js';
export type { ClientAuthMode, FakeApiServerTlsOptions, TlsClientError } from './tls/serverTls.js';
export { FAKE_API_SERVER_TLS, type TlsFixtureSet, UNTRUSTED_TLS } from './tls/tlsFixtures.js';
export {
  type FailNextOptions,
  type FailureHandle,
  FakeApiServerFaults,
  type InjectedStatus,
  type InjectOptions,
  type RequestVerb,
  type RestartOptions,
  type StallHandle,
  type StallOptions,
  type WatchFaultOptions,
} from './faults/faults.js';
export type { SlowConsumerLimit, WatchInjection } from './endpoints/watchHandler.js';
export type { WatchCacheLagOptions } from './storage/watchCacheLag.js';
export type { RecordedRequest } from './endpoints/recordedRequest.js';
export {
  DEFAULT_RESOURCES,
  type ResourceDefinition,
  type ResourceRef,
  type ResourceType,
} from './registry/resourceRegistry.js';
export type {
  ListType,
  ListTypes,
  ResolvedSubresources,
  ScaleSubresource,
  Subresources,
} from './registry/subresources.js';
export type { PatchType } from './registry/patch.js';
export type { DeletePreconditions } from './registry/registryStore.js';
export { FakeClock, flush } from '@kinformer/core/testing';
export { FakeListerWatcher, type FakeListerWatcherOptions } from '@kinformer/reflector/testing';
