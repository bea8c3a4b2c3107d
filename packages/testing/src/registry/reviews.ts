import { rec, type JsonObject } from '../api/json.js';
import type { ResourceType } from './resourceRegistry.js';

/**
 * The create-only review resources kubectl uses, answered and never stored, as their `REST.Create`
 * does: `authorization.k8s.io` `SelfSubjectAccessReview` (`kubectl auth can-i`;
 * `pkg/registry/authorization/selfsubjectaccessreview/rest.go`) and `SelfSubjectRulesReview`
 * (`auth can-i --list`), `authentication.k8s.io` `SelfSubjectReview` (`kubectl auth whoami`;
 * `pkg/registry/authentication/selfsubjectreview/rest.go`). The fake authorizes everything, as a
 * cluster admin (`system:masters`) is authorized.
 */

/** Who the fake says the caller is: the client certificate's CN, else the token's user. */
export const FAKE_USER = 'kinformer-fake-admin';

/** Whether `type` is one of the review resources. */
export function isReview(type: ResourceType): boolean {
  return (
    (type.group === 'authorization.k8s.io' &&
      (type.resource === 'selfsubjectaccessreviews' || type.resource === 'selfsubjectrulesreviews')) ||
    (type.group === 'authentication.k8s.io' && type.resource === 'selfsubjectreviews')
  );
}

/** The answer to a POST of `body` to a review resource: the review with its `status` (201). */
export function review(type: ResourceType, body: unknown, user: string | undefined): JsonObject {
  const obj = rec(body);
  const out: JsonObject = {
    kind: type.kind,
    apiVersion: type.apiVersion,
    metadata: { ...rec(obj.metadata), creationTimestamp: null },
    spec: rec(obj.spec),
  };
  switch (type.resource) {
    case 'selfsubjectaccessreviews':
      out.status = { allowed: true, reason: 'the fake API server allows everything' };
      break;
    case 'selfsubjectrulesreviews':
      out.status = {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      };
      break;
    default:
      delete out.spec;
      out.status = {
        userInfo: { username: user ?? FAKE_USER, groups: ['system:masters', 'system:authenticated'] },
      };
  }
  return out;
}
