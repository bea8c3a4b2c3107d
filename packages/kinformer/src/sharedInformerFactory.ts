import { kubeConfigListerWatchers } from '@kinformer/client-node';
import { InformerFactory } from '@kinformer/informer';
import type { InformerFactoryOptions, ListerWatcherFactory } from '@kinformer/informer';
import type { KubeConfig } from '@kubernetes/client-node';
import { typedInformerGroups } from './typedInformers.js';
import type { TypedInformerGroups } from './typedInformers.js';

/** Options of {@link SharedInformerFactory}. */
export interface SharedInformerFactoryOptions extends InformerFactoryOptions {
  /** Builds the ListerWatchers (default: `createListWatch` on the factory's KubeConfig). */
  listerWatcherFactory?: ListerWatcherFactory;
}

/**
 * client-go's `SharedInformerFactory`: hands out one shared informer per resource (per namespace,
 * selectors and metadata-only flag) to every caller, starts them together and waits for them. An
 * {@link InformerFactory} that lists and watches through `createListWatch` on a KubeConfig, with
 * typed accessors for the built-in resources.
 *
 * ```ts
 * const factory = new SharedInformerFactory(kubeConfig, { defaultResyncMs: 0 });
 * const { informer, lister } = factory.core.v1.pods();
 * informer.on('add', (pod) => console.log(pod.metadata?.name));
 * factory.start(signal);
 * await factory.waitForCacheSync(signal);
 * ```
 *
 * Every informer has the `namespace` index (as client-go's generated informers), so
 * `lister.namespace(ns).list()` never scans the whole cache.
 */
export class SharedInformerFactory extends InformerFactory {
  /** Typed accessors of the core group: `factory.core.v1.pods()`. */
  readonly core: TypedInformerGroups['core'];
  /** `factory.apps.v1.deployments()` … */
  readonly apps: TypedInformerGroups['apps'];
  /** `factory.batch.v1.jobs()` / `cronJobs()`. */
  readonly batch: TypedInformerGroups['batch'];
  /** `factory.networking.v1.ingresses()`. */
  readonly networking: TypedInformerGroups['networking'];
  /** `factory.discovery.v1.endpointSlices()`. */
  readonly discovery: TypedInformerGroups['discovery'];
  /** `factory.coordination.v1.leases()`. */
  readonly coordination: TypedInformerGroups['coordination'];
  /** `factory.rbac.v1.roles()` … */
  readonly rbac: TypedInformerGroups['rbac'];

  /**
   * `kubeConfig` says which cluster and how to authenticate; it may be `undefined` only when
   * `options.listerWatcherFactory` is given (then it is not used). Throws `ERR_INVALID_OPTION`
   * otherwise, or for a negative `defaultResyncMs`.
   */
  constructor(kubeConfig: KubeConfig | undefined, options: SharedInformerFactoryOptions = {}) {
    super(options.listerWatcherFactory ?? kubeConfigListerWatchers(kubeConfig, options.logger), options);
    const groups = typedInformerGroups((gvr, expectedType, scope) =>
      this.typedInformer(gvr, expectedType, scope),
    );
    this.core = groups.core;
    this.apps = groups.apps;
    this.batch = groups.batch;
    this.networking = groups.networking;
    this.discovery = groups.discovery;
    this.coordination = groups.coordination;
    this.rbac = groups.rbac;
  }
}
