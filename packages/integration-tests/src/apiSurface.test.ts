// The API report: every exported name of every entry point (package.json `exports`) of every
// published package, with whether it is a value or only a type, compared with a snapshot, so the
// public surface cannot grow or shrink by accident. After a deliberate change, review the diff and
// update: `pnpm test -- -u packages/integration-tests/src/apiSurface`. CI never writes snapshots.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '../../..');

interface EntryPoint {
  /** The import specifier: `kinformer`, `@kinformer/core/testing`. */
  specifier: string;
  /** Its TypeScript source. */
  source: string;
}

function entryPoints(): EntryPoint[] {
  const out: EntryPoint[] = [];
  for (const dir of fs.readdirSync(path.join(root, 'packages')).sort()) {
    const manifestPath = path.join(root, 'packages', dir, 'package.json');
    if (!fs.existsSync(manifestPath)) continue;
    const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as {
      name: string;
      private?: boolean;
      exports?: Record<string, { types?: string } | string>;
    };
    if (manifest.private === true) continue;
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const types = typeof target === 'string' ? target : target.types;
      if (types === undefined) continue;
      const source = path.join(
        root,
        'packages',
        dir,
        types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'),
      );
      out.push({
        specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        source,
      });
    }
  }
  return out;
}

/** `value Name` or `type Name` for every export of every entry point, sorted. */
function surface(): Record<string, string[]> {
  const entries = entryPoints();
  const paths: Record<string, string[]> = {};
  for (const e of entries) paths[e.specifier] = [e.source];
  const program = ts.createProgram(
    entries.map((e) => e.source),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2023,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      paths,
    },
  );
  const checker = program.getTypeChecker();
  const report: Record<string, string[]> = {};
  for (const e of entries) {
    const file = program.getSourceFile(e.source);
    const moduleSymbol = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (moduleSymbol === undefined) throw new Error(`cannot read ${e.source}`);
    report[e.specifier] = checker
      .getExportsOfModule(moduleSymbol)
      .map((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return `${target.flags & ts.SymbolFlags.Value ? 'value' : 'type'} ${symbol.name}`;
      })
      .sort((a, b) => a.slice(a.indexOf(' ')).localeCompare(b.slice(b.indexOf(' '))));
  }
  return report;
}

describe('public API', () => {
  it('exports exactly the reviewed names from every entry point', () => {
    expect(surface()).toMatchSnapshot();
  }, 120_000); // type-checks every package's sources: seconds, more on a loaded machine
});
