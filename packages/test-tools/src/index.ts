export type { Pod, ServerPod, ServerPodFields } from './objects.js';
export { keyOf, pod, podList, serverPod, status } from './objects.js';
export type { WaitForOptions, WakeSource } from './waitFor.js';
export { settle, waitFor, within } from './waitFor.js';
export type { CapturedLogs, LogLine } from './logs.js';
export { captureLogs, LEVEL } from './logs.js';
export { noBackoff, RecordingBackoff } from './backoff.js';
export { deferred, prng } from './control.js';
export { collect } from './streams.js';
