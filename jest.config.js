/** Jest 30 in ESM mode (`node --experimental-vm-modules`), TypeScript through @swc/jest. */
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023', keepClassNames: true },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

// kinformer's default logger writes warnings and errors to stderr. Tests that look at logs pass a
// capturing logger; everything else would flood the test output, so under Jest the default is silent
// unless KINFORMER_LOG_LEVEL is set (logger.test.ts unsets it to test the real default).
process.env.KINFORMER_LOG_LEVEL ??= 'silent';

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@kinformer/soak$': '<rootDir>/soak/src/index.ts',
    '^@kinformer/([a-z-]+)/([a-zA-Z]+)$': '<rootDir>/packages/$1/src/$2.ts',
    '^@kinformer/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^kinformer$': '<rootDir>/packages/kinformer/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  roots: ['<rootDir>/packages', '<rootDir>/examples', '<rootDir>/soak'],
  testMatch: ['**/src/**/*.test.ts', '**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30000,
};
