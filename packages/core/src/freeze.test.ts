import { deepFreeze, defaultFreezeObjects } from './freeze.js';

describe('deepFreeze', () => {
  it('freezes the object and everything reachable from it, and returns the same object', () => {
    const pod = {
      metadata: { name: 'a', labels: { app: 'web' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'rs' }] },
      spec: { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] },
    };
    const frozen = deepFreeze(pod);
    expect(frozen).toBe(pod);
    for (const part of [
      pod,
      pod.metadata,
      pod.metadata.labels,
      pod.metadata.ownerReferences,
      pod.metadata.ownerReferences[0],
      pod.spec.containers,
      pod.spec.containers[0],
      pod.spec.containers[0]!.ports[0],
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
  });

  it('makes writes throw in strict mode (ES modules), so a mutating handler fails loudly', () => {
    const obj = deepFreeze({ metadata: { labels: { a: 'b' } }, items: [1] });
    expect(() => {
      (obj.metadata.labels as Record<string, string>).a = 'c';
    }).toThrow(TypeError);
    expect(() => {
      obj.items.push(2);
    }).toThrow(TypeError);
    expect(() => {
      delete (obj as { metadata?: unknown }).metadata;
    }).toThrow(TypeError);
    expect(obj).toEqual({ metadata: { labels: { a: 'b' } }, items: [1] });
  });

  it('passes primitives, null and undefined through', () => {
    expect(deepFreeze(1)).toBe(1);
    expect(deepFreeze('s')).toBe('s');
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze(undefined)).toBeUndefined();
  });

  it('copes with cycles and shared sub-objects', () => {
    const shared = { v: 1 };
    const a: Record<string, unknown> = { shared, again: shared };
    a.self = a;
    expect(deepFreeze(a)).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(shared)).toBe(true);
  });

  it('freezes an object nested 100 000 levels deep without overflowing the stack', () => {
    // Recursion blew the stack at a few thousand levels ("Maximum call stack size exceeded").
    const depth = 100_000;
    const root: Record<string, unknown> = {};
    let node = root;
    for (let i = 0; i < depth; i++) {
      const next: Record<string, unknown> = { list: [i] };
      node.a = next;
      node = next;
    }
    expect(deepFreeze(root)).toBe(root);
    expect(Object.isFrozen(node)).toBe(true);
    expect(Object.isFrozen(node.list)).toBe(true);
  });

  it('skips parts that are already frozen (it does not descend into them)', () => {
    const inner = { x: 1 };
    const outer = Object.freeze({ inner });
    deepFreeze(outer);
    expect(Object.isFrozen(inner)).toBe(false);
    const parent = { outer };
    deepFreeze(parent);
    expect(Object.isFrozen(parent)).toBe(true);
    expect(Object.isFrozen(inner)).toBe(false);
  });
});

describe('defaultFreezeObjects', () => {
  const saved = { freeze: process.env.KINFORMER_FREEZE, nodeEnv: process.env.NODE_ENV };
  afterEach(() => {
    for (const [name, value] of [
      ['KINFORMER_FREEZE', saved.freeze],
      ['NODE_ENV', saved.nodeEnv],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it.each<[string | undefined, string | undefined, boolean]>([
    [undefined, undefined, true],
    [undefined, 'development', true],
    [undefined, 'test', true],
    [undefined, 'production', false],
    ['1', 'production', true],
    ['true', 'production', true],
    ['0', 'development', false],
    ['false', undefined, false],
    ['maybe', 'production', false],
    ['maybe', 'development', true],
  ])('KINFORMER_FREEZE=%s NODE_ENV=%s gives %s', (freeze, nodeEnv, expected) => {
    if (freeze === undefined) delete process.env.KINFORMER_FREEZE;
    else process.env.KINFORMER_FREEZE = freeze;
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    expect(defaultFreezeObjects()).toBe(expected);
  });
});
