import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, KinformerError } from 'kinformer';
import { DemoUsageError, parseArgs } from './cli.js';
import { firstLine } from './firstLine.js';

describe('the demo command line', () => {
  it('turns a missing or broken kubeconfig into one line', () => {
    expect(() => parseArgs(['--kubeconfig', '/no/such/kubeconfig'], {})).toThrow(
      new DemoUsageError('cannot read kubeconfig /no/such/kubeconfig: no such file'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'demo-cli-'));
    writeFileSync(join(dir, 'bad'), 'garbage: [\n');
    expect(() => parseArgs(['--kubeconfig', join(dir, 'bad')], {})).toThrow(
      /^cannot load kubeconfig .*bad: [^\n]+$/,
    );
    writeFileSync(join(dir, 'empty'), 'apiVersion: v1\nkind: Config\n');
    expect(() => parseArgs(['--kubeconfig', join(dir, 'empty')], {})).toThrow(
      /has no cluster for its current context/,
    );
  });

  it('reads the options, with faults on by default', () => {
    expect(
      parseArgs(['--', '--pods', '10', '--duration', '1.5s', '--churn', '20', '--sync-timeout', '2m'], {}),
    ).toEqual({
      chaos: true,
      pods: 10,
      durationMs: 1500,
      churnPerSecond: 20,
      syncTimeoutMs: 120_000,
    });
    expect(parseArgs(['--no-chaos'], {})).toEqual({ chaos: false });
    expect(parseArgs(['--help'], {})).toBe('help');
    expect(() => parseArgs(['--pods', 'many'], {})).toThrow('--pods needs a whole number, got many');
    expect(() => parseArgs(['--bogus'], {})).toThrow(/^unknown option --bogus\nusage: /);
  });

  it('prints an error once when its message only repeats its cause', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:1');
    const err = new KinformerError(ErrorCodes.INTERNAL, `${cause.message}: ${cause.message}`, { cause });
    expect(firstLine(err)).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(firstLine(new Error('first\n  at somewhere'))).toBe('first');
  });
});
