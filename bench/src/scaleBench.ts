/**
 * `pnpm bench:scale`: 100k and 200k pods, one-response lists and pages of 500, kinformer beside the
 * fetch + one `JSON.parse` floor and client-node's makeInformer. The server (bench/src/scaleServer.ts)
 * runs in its own process; each contender in a fresh child process (bench/src/contender.ts: time to
 * synced, heap and RSS after sync, then a forced 410 and the peak RSS and time of the relist).
 * Writes the tables and docs/performance-scale.svg into docs/performance.md.
 *
 * Options: --sizes 100000,200000  --modes one,paged  --only floor,kinformer  --rounds 1  --timeout 180000
 * --no-write
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runContender, startServer } from './children.js';
import type { ContenderResult } from './contender.js';
import { fmt, machineLine, median, ratio, replaceSection } from './report.js';

const args = process.argv.slice(2);
function opt(name: string, dflt: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
}
const sizes = opt('sizes', '100000,200000').split(',').map(Number);
const modes = opt('modes', 'one,paged').split(',') as Mode[];
const rounds = Number(opt('rounds', '1'));
const only = args.includes('--only') ? opt('only', '').split(',') : undefined;
const timeoutMs = Number(opt('timeout', '180000'));
const write = !args.includes('--no-write');

type Mode = 'one' | 'paged';
/**
 * Who runs in which mode: client-node never pages (listPodForAllNamespaces sends no limit); the paged
 * floor only at the smallest size (at 200k its relist alone took 48 s, a fifth of the bench's time).
 */
function contenders(mode: Mode, pods: number): string[] {
  if (mode === 'one') return ['floor', 'client-node', 'kinformer', 'kinformer (no list-item reuse)'];
  return pods === Math.min(...sizes) ? ['floor', 'kinformer'] : ['kinformer'];
}
const MODE_LABEL: Record<Mode, string> = { one: 'one response', paged: 'pages of 500' };

interface ScaleRow {
  mode: Mode;
  name: string;
  pods: number;
  result?: ContenderResult;
  error?: string;
}

async function post(url: string): Promise<void> {
  await (await fetch(url, { method: 'POST' })).text();
}

function medianResult(rs: ContenderResult[]): ContenderResult {
  const m = (f: (r: ContenderResult) => number): number => median(rs.map(f));
  return {
    ...rs[0]!,
    syncMs: m((r) => r.syncMs),
    heapAfterSyncMB: m((r) => r.heapAfterSyncMB),
    rssAfterSyncMB: m((r) => r.rssAfterSyncMB),
    peakRssDuringRelistMB: m((r) => r.peakRssDuringRelistMB),
    relistMs: m((r) => r.relistMs),
  };
}

async function main(): Promise<void> {
  const { child: server, url } = await startServer('scaleServer.js');
  const rows: ScaleRow[] = [];
  try {
    for (const pods of sizes) {
      for (const mode of modes) {
        for (const name of contenders(mode, pods).filter((n) => !only || only.includes(n))) {
          const results: ContenderResult[] = [];
          let error: string | undefined;
          for (let r = 0; r < rounds && error === undefined; r++) {
            await post(`${url}/_bench/reset?pods=${pods}&mode=${mode}`);
            try {
              const res = await runContender(name, url, pods, 0, { timeoutMs });
              results.push(res);
              process.stderr.write(
                `  ${name} ${mode} pods=${pods}: sync ${res.syncMs.toFixed(0)} ms, RSS ${res.rssAfterSyncMB.toFixed(0)} MB, heap ${res.heapAfterSyncMB.toFixed(0)} MB, relist ${res.relistMs.toFixed(0)} ms peak RSS ${res.peakRssDuringRelistMB.toFixed(0)} MB\n`,
              );
            } catch (err) {
              error = (err as Error).message.replace(`${name}: `, '');
              process.stderr.write(`  ${name} ${mode} pods=${pods}: FAILED ${error}\n`);
            }
          }
          rows.push(
            results.length
              ? { mode, name, pods, result: medianResult(results) }
              : { mode, name, pods, error: error ?? 'no result' },
          );
        }
      }
    }
  } finally {
    server.kill();
  }
  const text = render(rows);
  console.log(text);
  if (write) {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    fs.writeFileSync(path.join(root, 'docs/performance-scale.svg'), renderSvg(rows));
    replaceSection('scale-bench', text);
  }
}

function find(rows: ScaleRow[], mode: Mode, name: string, pods: number): ContenderResult | undefined {
  return rows.find((r) => r.mode === mode && r.name === name && r.pods === pods)?.result;
}

function render(rows: ScaleRow[]): string {
  const out: string[] = [
    `Measured by \`pnpm bench:scale\` (${machineLine()}): ${rounds === 1 ? 'one round' : `medians of ${rounds} rounds`}, each contender in a fresh process, the server in its own process; ${rows.length} runs.`,
    '',
    '| list | contender | pods | time to synced (ms) | heap after sync (MB) | RSS after sync (MB) | relist time (ms) | peak RSS in relist (MB) | relist peak ÷ synced RSS | sync ×floor | sync ×client-node | relist time ×floor |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const x = r.result;
    if (!x) {
      out.push(`| ${MODE_LABEL[r.mode]} | ${r.name} | ${r.pods} | **failed**: ${r.error} | | | | | | | | |`);
      continue;
    }
    const fl = find(rows, r.mode, 'floor', r.pods);
    const cn = find(rows, 'one', 'client-node', r.pods);
    out.push(
      `| ${MODE_LABEL[r.mode]} | ${r.name} | ${r.pods} | ${fmt(x.syncMs)} | ${fmt(x.heapAfterSyncMB)} | ${fmt(x.rssAfterSyncMB)} | ${fmt(x.relistMs)} | ${fmt(x.peakRssDuringRelistMB)} | ${fmt(ratio(x.peakRssDuringRelistMB, x.rssAfterSyncMB), 2)} | ${fmt(ratio(x.syncMs, fl?.syncMs), 2)} | ${fmt(ratio(x.syncMs, cn?.syncMs), 2)} | ${fmt(ratio(x.relistMs, fl?.relistMs), 2)} |`,
    );
  }
  const goals: string[] = [];
  const goal = (what: string, value: number | undefined, limit: number, note = ''): void => {
    const verdict = value === undefined ? 'not measured' : value <= limit ? 'met' : '**missed**';
    goals.push(`| ${what} | ${fmt(value, 2)}× | ≤ ${limit}× | ${verdict}${note} |`);
  };
  for (const pods of sizes) {
    const k = find(rows, 'one', 'kinformer', pods);
    if (rows.some((r) => r.mode === 'one' && r.name === 'kinformer' && r.pods === pods)) {
      goals.push(
        `| ${pods} pods in one response sync and relist | ${k ? 'yes' : 'no'} | yes | ${k ? 'met' : '**missed**'} |`,
      );
    }
    const fl = find(rows, 'one', 'floor', pods);
    const flFailed = rows.some((r) => r.mode === 'one' && r.name === 'floor' && r.pods === pods && r.error);
    goal(
      `time to synced vs the fetch + JSON.parse floor (${pods} pods, one response)`,
      ratio(k?.syncMs, fl?.syncMs),
      1,
      flFailed ? ' (the floor failed)' : '',
    );
    for (const mode of modes) {
      const x = find(rows, mode, 'kinformer', pods);
      goal(
        `peak RSS in relist vs RSS after sync (${pods} pods, ${MODE_LABEL[mode]})`,
        ratio(x?.peakRssDuringRelistMB, x?.rssAfterSyncMB),
        1.6,
      );
    }
  }
  out.push('', '| goal | measured | target | |', '|---|---:|---:|---|', ...goals);
  out.push('', '![scale benchmark](./performance-scale.svg)');
  return out.join('\n');
}

const COLORS: Record<string, string> = {
  floor: '#888888',
  'client-node': '#d9534f',
  kinformer: '#2a7ae2',
  'kinformer (no list-item reuse)': '#5cb85c',
};

/** Two panels (time to synced, peak RSS in relist), one group per list shape and size, one bar per contender. */
function renderSvg(rows: ScaleRow[]): string {
  const groups = sizes.flatMap((pods) => modes.map((mode) => ({ pods, mode })));
  const names = Object.keys(COLORS);
  const panels: Array<{ title: string; unit: string; get: (r: ContenderResult) => number }> = [
    { title: 'time to synced (s)', unit: 's', get: (r) => r.syncMs / 1000 },
    { title: 'peak RSS in relist (GB)', unit: 'GB', get: (r) => r.peakRssDuringRelistMB / 1024 },
  ];
  const W = 820;
  const H = 300;
  const panelW = W / 2;
  const top = 40;
  const plotH = 190;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="10" y="16" font-size="13">Scale: 100k and 200k pods, one-response lists and pages of 500 (lower is better; ✗ = failed)</text>`,
  ];
  panels.forEach((p, pi) => {
    const x0 = pi * panelW + 30;
    const max = Math.max(1e-9, ...rows.flatMap((r) => (r.result ? [p.get(r.result)] : [])));
    const groupW = (panelW - 50) / groups.length;
    const barW = (groupW - 12) / names.length;
    parts.push(`<text x="${x0}" y="${top - 8}" font-size="12">${p.title}</text>`);
    parts.push(
      `<line x1="${x0}" y1="${top + plotH}" x2="${x0 + panelW - 50}" y2="${top + plotH}" stroke="#444"/>`,
    );
    groups.forEach((g, gi) => {
      const gx = x0 + gi * groupW + 6;
      names.forEach((name, bi) => {
        const row = rows.find((r) => r.mode === g.mode && r.pods === g.pods && r.name === name);
        if (!row) return;
        const x = gx + bi * barW;
        if (!row.result) {
          parts.push(
            `<text x="${x + barW / 2}" y="${top + plotH - 4}" text-anchor="middle" fill="${COLORS[name]}" font-size="14">✗</text>`,
          );
          return;
        }
        const v = p.get(row.result);
        const h = (v / max) * plotH;
        parts.push(
          `<rect x="${x}" y="${top + plotH - h}" width="${barW - 2}" height="${h}" fill="${COLORS[name]}"/>`,
          `<text x="${x + barW / 2}" y="${top + plotH - h - 3}" text-anchor="middle" font-size="9">${v.toFixed(1)}</text>`,
        );
      });
      parts.push(
        `<text x="${gx + (names.length * barW) / 2}" y="${top + plotH + 14}" text-anchor="middle" font-size="10">${g.pods / 1000}k ${g.mode === 'one' ? 'one' : 'paged'}</text>`,
      );
    });
  });
  names.forEach((name, i) => {
    parts.push(
      `<rect x="${30 + i * 190}" y="${H - 22}" width="12" height="12" fill="${COLORS[name]}"/><text x="${46 + i * 190}" y="${H - 12}">${name}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
