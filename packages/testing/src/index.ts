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
export type { ClientAuthMode, FakeApiServerTlsOptions, TlsClientError } from './serverTls.js';
export type { TlsFixtureSet } from './tlsFixtures.js';
export { FAKE_API_SERVER_TLS, UNTRUSTED_TLS } from './tlsFixtures.js';
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
} from './faults.js';
export { FakeApiServerFaults } from './faults.js';
export type { SlowConsumerLimit, WatchInjection } from './watchHandler.js';
export type { WatchCacheLagOptions } from './watchCacheLag.js';
export type { RecordedRequest } from './recordedRequest.js';
export type { ResourceDefinition, ResourceRef, ResourceType } from './resourceRegistry.js';
export type {
  ListType,
  ListTypes,
  ResolvedSubresources,
  ScaleSubresource,
  Subresources,
} from './subresources.js';
export { DEFAULT_RESOURCES } from './resourceRegistry.js';
export type { PatchType } from './patch.js';
export type { DeletePreconditions } from './objectStore.js';
export { FakeClock, flush } from '@kinformer/core/testing';
export type { FakeListerWatcherOptions } from '@kinformer/reflector/testing';
export { FakeListerWatcher } from '@kinformer/reflector/testing';
