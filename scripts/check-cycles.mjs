// Fails when the TypeScript sources have an import cycle: between files (type-only imports count:
// they couple the files just the same) or between packages (through their non-test files).
// Dependency-free; reads every src/**/*.ts of the workspace. Run: node scripts/check-cycles.mjs
import fs from 'node:fs';
import path from 'node:path';

const roots = [
  ...['packages', 'examples'].flatMap((dir) =>
    fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : [],
  ),
  'bench',
  'soak',
].filter((root) => fs.existsSync(path.join(root, 'src')));

/** Package name → its directory. */
const packageDirs = new Map();
for (const root of roots) {
  const manifest = path.join(root, 'package.json');
  if (fs.existsSync(manifest)) packageDirs.set(JSON.parse(fs.readFileSync(manifest, 'utf8')).name, root);
}

function listTs(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...listTs(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

function resolveTs(base) {
  const stem = base.replace(/\.(js|ts|mjs)$/, '');
  for (const candidate of [`${stem}.ts`, path.join(stem, 'index.ts')])
    if (fs.existsSync(candidate)) return candidate;
  return undefined;
}

/** The workspace file an import specifier names, or undefined for a third-party module. */
function resolve(from, spec) {
  if (spec.startsWith('.')) return resolveTs(path.join(path.dirname(from), spec));
  const m = /^(@kinformer\/[a-z0-9-]+|kinformer)(?:\/(.+))?$/.exec(spec);
  if (m === null) return undefined;
  const dir = packageDirs.get(m[1]);
  if (dir === undefined) return undefined;
  return resolveTs(path.join(dir, 'src', m[2] ?? 'index'));
}

const importRe =
  /(?:^|[\s;])(?:import|export)\s(?:[^'"`;]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const files = roots.flatMap((root) => listTs(path.join(root, 'src')));
/** File → the workspace files it imports. */
const edges = new Map();
for (const file of files) {
  const src = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
  const targets = new Set();
  for (const m of src.matchAll(importRe)) {
    const target = resolve(file, m[1] ?? m[2]);
    if (target !== undefined && target !== file) targets.add(target);
  }
  edges.set(file, [...targets]);
}

/** Tarjan's strongly connected components with more than one member. */
function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  function visit(v) {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

const packageOf = (file) => [...packageDirs].find(([, dir]) => file.startsWith(dir + path.sep))?.[0];
const isTest = (file) => /\.test(\.helpers)?\.ts$/.test(file);
const packageGraph = new Map();
for (const [file, targets] of edges) {
  if (isTest(file)) continue;
  const from = packageOf(file);
  if (!packageGraph.has(from)) packageGraph.set(from, new Set());
  for (const target of targets) {
    const to = packageOf(target);
    if (to !== from) packageGraph.get(from).add(to);
  }
}

const fileCycles = cycles(edges);
const packageCycles = cycles(new Map([...packageGraph].map(([k, v]) => [k, [...v]])));
for (const c of fileCycles) console.error(`import cycle between files: ${c.join(' <-> ')}`);
for (const c of packageCycles) console.error(`import cycle between packages: ${c.join(' <-> ')}`);
if (fileCycles.length + packageCycles.length > 0) process.exit(1);
console.log(`no import cycles (${files.length} files, ${packageGraph.size} packages)`);
