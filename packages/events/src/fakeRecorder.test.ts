import { ErrorCodes } from '@kinformer/core';
import { FakeRecorder } from './fakeRecorder.js';

// client-go tools/record/fake.go: each event is the line "<type> <reason> <message>", with
// IncludeObject the object's kind and apiVersion, and annotations as Go prints a map.

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'apps' } };

describe('FakeRecorder', () => {
  test('records "Type Reason Message" lines in order', () => {
    const recorder = new FakeRecorder();
    recorder.event(pod, 'Normal', 'Created', 'created web-1');
    recorder.event(pod, 'Warning', 'Failed', 'no such image');
    expect(recorder.events).toEqual(['Normal Created created web-1', 'Warning Failed no such image']);
  });

  test('includeObject appends the object kind and apiVersion; annotations are appended as a Go map, keys sorted', () => {
    const recorder = new FakeRecorder({ includeObject: true });
    recorder.event(pod, 'Normal', 'Created', 'ok', { annotations: { z: '1', a: '2' } });
    expect(recorder.events).toEqual([
      'Normal Created ok involvedObject{kind=Pod,apiVersion=v1} map[a:2 z:1]',
    ]);
  });

  test('next() reads each line once, waiting for the next one to be recorded', async () => {
    const recorder = new FakeRecorder();
    recorder.event(pod, 'Normal', 'A', 'x');
    await expect(recorder.next()).resolves.toBe('Normal A x');
    const waiting = recorder.next();
    recorder.event(pod, 'Normal', 'B', 'y');
    await expect(waiting).resolves.toBe('Normal B y');
  });

  test('next() gives up after its timeout (ERR_TIMEOUT) or when its signal aborts (ERR_ABORTED)', async () => {
    const recorder = new FakeRecorder();
    await expect(recorder.next({ timeoutMs: 5 })).rejects.toMatchObject({ code: ErrorCodes.TIMEOUT });
    const controller = new AbortController();
    const waiting = recorder.next({ signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
    recorder.event(pod, 'Normal', 'Late', 'z');
    await expect(recorder.next()).resolves.toBe('Normal Late z'); // the abandoned waits consumed nothing
  });
});
