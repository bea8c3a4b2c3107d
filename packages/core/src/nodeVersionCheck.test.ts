import { REQUIRED_NODE_VERSION, unsupportedNodeMessage } from './nodeVersionCheck.js';

describe('unsupportedNodeMessage', () => {
  it('names the required version and the running one for a Node older than 22.19', () => {
    expect(unsupportedNodeMessage('20.20.2')).toBe(
      'kinformer requires Node.js >= 22.19 (this is Node.js v20.20.2): upgrade Node.js.',
    );
    expect(unsupportedNodeMessage('22.18.9')).toMatch(/>= 22\.19 .*v22\.18\.9/);
    expect(unsupportedNodeMessage('v18.0.0')).toMatch(/v18\.0\.0/);
  });

  it('accepts 22.19 and anything newer', () => {
    for (const v of ['22.19.0', '22.20.1', '23.0.0', '24.21.0', '30.1.0']) {
      expect(unsupportedNodeMessage(v)).toBeUndefined();
    }
    expect(REQUIRED_NODE_VERSION).toBe('22.19.0');
  });

  it('lets an unparsable version through rather than refusing to load', () => {
    expect(unsupportedNodeMessage('')).toBeUndefined();
    expect(unsupportedNodeMessage('nightly')).toBeUndefined();
  });

  it('runs silently on the Node running the tests', () => {
    expect(unsupportedNodeMessage(process.versions.node)).toBeUndefined();
  });
});
