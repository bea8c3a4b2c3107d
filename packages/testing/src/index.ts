export type {
  FakeApiServerOptions,
  InProcessApplyOptions,
  InProcessDeleteOptions,
  InProcessPatchOptions,
  Stored,
  WaitOptions,
} from './fakeApiServer.js';
export { FakeApiServer } from './fakeApiServer.js';
export type { FakeKubeConfigOptions } from './fakeKubeConfig.js';
export { FAKE_TOKEN } from './fakeKubeConfig.js';
export type { ClientAuthMode, FakeApiServerTlsOptions, TlsClientError } from './tls/serverTls.js';
export type { TlsFixtureSet } from './tls/tlsFixtures.js';
export { FAKE_API_SERVER_TLS, UNTRUSTED_TLS } from './tls/tlsFixtures.js';
export type {
  FailNextOptions,
  FailureHandle,
  InjectedStatus,
  InjectOptions,
  RequestVerb,
  RestartOptions,
  StallHandle,
  StallOptions,
  WatchFaultOptions,
} from './faults/faults.js';
export { FakeApiServerFaults } from './faults/faults.js';
export type { SlowConsumerLimit, WatchInjection } from './endpoints/watchHandler.js';
export type { WatchCacheLagOptions } from './storage/watchCacheLag.js';
export type { RecordedRequest } from './endpoints/recordedRequest.js';
export type { ResourceDefinition, ResourceRef, ResourceType } from './registry/resourceRegistry.js';
export type {
  ListType,
  ListTypes,
  ResolvedSubresources,
  ScaleSubresource,
  Subresources,
} from './registry/subresources.js';
export { DEFAULT_RESOURCES } from './registry/resourceRegistry.js';
export type { PatchType } from './registry/patch.js';
export type { DeletePreconditions } from './registry/registryStore.js';
export { FakeClock, flush } from '@kinformer/core/testing';
export type { FakeListerWatcherOptions } from '@kinformer/reflector/testing';
export { FakeListerWatcher } from '@kinformer/reflector/testing';
