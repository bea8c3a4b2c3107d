/** Tables, goals and the chart for the informer benchmark, and the update of docs/performance.md. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContenderResult } from './contender.js';

/** A contender's figures in the report (medians over rounds); a contender may not measure events. */
export type Row = Omit<ContenderResult, 'relistMs' | 'eventsPerSec'> & { eventsPerSec: number | undefined };

/** The size at which the list path's goal (≤ 0.9× the floor, issue 20) is measured. */
export const PAGED_GOAL_PODS = 20_000;

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function fmt(n: number | undefined, digits = 0): string {
  return n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
}

export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || b === 0 ? undefined : a / b;
}

interface Goal {
  what: string;
  value: number | undefined;
  limit: number;
  atMost: boolean;
}

/** A goal: `value` at most `limit` (or at least, when `atMost` is false). */
function goal(what: string, value: number | undefined, limit: number, atMost = true): Goal {
  return { what, value, limit, atMost };
}

function goalLine(g: Goal): string {
  const ok = g.value !== undefined && (g.atMost ? g.value <= g.limit : g.value >= g.limit);
  return `| ${g.what} | ${fmt(g.value, 2)}× | ${g.atMost ? '≤' : '≥'} ${g.limit}× | ${g.value === undefined ? 'not measured' : ok ? 'met' : '**missed**'} |`;
}

export function renderTables(rows: Row[]): { text: string; goals: Goal[] } {
  const lines: string[] = [];
  const goals: Goal[] = [];
  const sizes = [...new Set(rows.map((r) => r.pods))];
  lines.push(
    '| contender | pods | time to synced (ms) | CPU to synced (ms) | heap after sync (MB) | RSS after sync (MB) | watch events/s | peak RSS in relist (MB) | sync ×floor | CPU ×floor | sync ×floor-http | sync ×client-node | heap ×floor | heap ×client-node | events ×floor | events ×floor-http |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const pods of sizes) {
    const at = rows.filter((r) => r.pods === pods);
    const fl = at.find((r) => r.name === 'floor');
    const fh = at.find((r) => r.name === 'floor-http');
    const cn = at.find((r) => r.name === 'client-node');
    const evFl = rows.find((r) => r.name === 'floor' && r.eventsPerSec !== undefined)?.eventsPerSec;
    const evFh = rows.find((r) => r.name === 'floor-http' && r.eventsPerSec !== undefined)?.eventsPerSec;
    for (const r of at) {
      lines.push(
        `| ${r.name} | ${pods} | ${fmt(r.syncMs)} | ${fmt(r.syncCpuMs)} | ${fmt(r.heapAfterSyncMB, 1)} | ${fmt(r.rssAfterSyncMB)} | ${fmt(r.eventsPerSec)} | ${fmt(r.peakRssDuringRelistMB)} | ${fmt(ratio(r.syncMs, fl?.syncMs), 2)} | ${fmt(ratio(r.syncCpuMs, fl?.syncCpuMs), 2)} | ${fmt(ratio(r.syncMs, fh?.syncMs), 2)} | ${fmt(ratio(r.syncMs, cn?.syncMs), 2)} | ${fmt(ratio(r.heapAfterSyncMB, fl?.heapAfterSyncMB), 2)} | ${fmt(ratio(r.heapAfterSyncMB, cn?.heapAfterSyncMB), 2)} | ${fmt(ratio(r.eventsPerSec, evFl), 2)} | ${fmt(ratio(r.eventsPerSec, evFh), 2)} |`,
      );
    }
    const k = at.find((r) => r.name === 'kinformer');
    if (k) {
      if (pods === PAGED_GOAL_PODS) {
        const what = `time to synced vs floor (${pods} pods in pages of 500; issue 20)`;
        goals.push(goal(what, ratio(k.syncMs, fl?.syncMs), 0.9));
      }
      goals.push(
        goal(`time to synced vs floor (${pods} pods)`, ratio(k.syncMs, fl?.syncMs), 1.25),
        goal(`time to synced vs client-node (${pods} pods)`, ratio(k.syncMs, cn?.syncMs), 0.5),
        goal(`heap after sync vs floor (${pods} pods)`, ratio(k.heapAfterSyncMB, fl?.heapAfterSyncMB), 1.15),
        goal(
          `heap after sync vs client-node (${pods} pods)`,
          ratio(k.heapAfterSyncMB, cn?.heapAfterSyncMB),
          0.7,
        ),
      );
      if (k.eventsPerSec !== undefined)
        goals.push(goal(`watch events/s vs floor`, ratio(k.eventsPerSec, fl?.eventsPerSec), 0.85, false));
      if (fh) {
        goals.push(
          goal(`stricter: time to synced vs floor-http (${pods} pods)`, ratio(k.syncMs, fh.syncMs), 1.25),
          goal(
            `stricter: heap after sync vs floor-http (${pods} pods)`,
            ratio(k.heapAfterSyncMB, fh.heapAfterSyncMB),
            1.15,
          ),
        );
        if (k.eventsPerSec !== undefined) {
          const what = `stricter: watch events/s vs floor-http`;
          goals.push(goal(what, ratio(k.eventsPerSec, fh.eventsPerSec), 0.85, false));
        }
      }
      const relistRss = ratio(k.peakRssDuringRelistMB, k.rssAfterSyncMB);
      goals.push(goal(`peak RSS in relist vs RSS after sync (${pods} pods; ≤ 2 copies)`, relistRss, 2));
    }
  }
  if (goals.length) {
    lines.push('', '| goal | measured | target | |', '|---|---:|---:|---|', ...goals.map(goalLine));
  }
  return { text: lines.join('\n'), goals };
}

const COLORS: Record<string, string> = {
  floor: '#888888',
  'floor-http': '#bbbbbb',
  'client-node': '#d9534f',
  kinformer: '#2a7ae2',
};

/** A grouped bar chart: one group per metric (ratio to the floor), one bar per contender. */
export function renderSvg(rows: Row[]): string {
  const pods = Math.max(...rows.map((r) => r.pods));
  const small = Math.min(...rows.map((r) => r.pods));
  const at = rows.filter((r) => r.pods === pods);
  const fl = at.find((r) => r.name === 'floor');
  const evFloor = rows.find((r) => r.name === 'floor' && r.pods === small)?.eventsPerSec;
  const metrics: Array<{ label: string; get: (r: Row) => number | undefined }> = [
    { label: `time to synced (${pods} pods)`, get: (r) => ratio(r.syncMs, fl?.syncMs) },
    { label: `heap after sync (${pods} pods)`, get: (r) => ratio(r.heapAfterSyncMB, fl?.heapAfterSyncMB) },
    {
      label: `peak RSS in relist (${pods} pods)`,
      get: (r) => ratio(r.peakRssDuringRelistMB, fl?.peakRssDuringRelistMB),
    },
    {
      label: 'watch events/s (higher is better)',
      get: (r) => ratio(rows.find((x) => x.name === r.name && x.pods === small)?.eventsPerSec, evFloor),
    },
  ];
  const names = at.map((r) => r.name);
  const W = 760;
  const H = 320;
  const left = 50;
  const top = 30;
  const plotH = 220;
  const groupW = (W - left - 20) / metrics.length;
  const barW = Math.min(36, (groupW - 30) / Math.max(1, names.length));
  const max = Math.max(1.5, ...metrics.flatMap((m) => at.map((r) => m.get(r) ?? 0)));
  const y = (v: number): number => top + plotH - (v / max) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="${left}" y="16" font-size="13">Ratio to the raw fetch-and-parse floor (1.0 = floor; lower is better except events/s)</text>`,
    `<line x1="${left}" y1="${y(1)}" x2="${W - 10}" y2="${y(1)}" stroke="#444" stroke-dasharray="4 3"/>`,
    `<text x="${left - 6}" y="${y(1) + 4}" text-anchor="end">1.0</text>`,
    `<text x="${left - 6}" y="${y(max) + 4}" text-anchor="end">${max.toFixed(1)}</text>`,
  ];
  metrics.forEach((m, gi) => {
    const gx = left + gi * groupW + 15;
    names.forEach((name, bi) => {
      const r = at.find((x) => x.name === name)!;
      const v = m.get(r);
      if (v === undefined || !Number.isFinite(v)) return;
      const x = gx + bi * barW;
      parts.push(
        `<rect x="${x}" y="${y(v)}" width="${barW - 4}" height="${top + plotH - y(v)}" fill="${COLORS[name] ?? '#5cb85c'}"/>`,
      );
      parts.push(
        `<text x="${x + (barW - 4) / 2}" y="${y(v) - 3}" text-anchor="middle">${v.toFixed(2)}</text>`,
      );
    });
    parts.push(
      `<text x="${gx + (names.length * barW) / 2}" y="${top + plotH + 16}" text-anchor="middle">${m.label}</text>`,
    );
  });
  names.forEach((name, i) => {
    parts.push(
      `<rect x="${left + i * 130}" y="${H - 22}" width="12" height="12" fill="${COLORS[name] ?? '#5cb85c'}"/><text x="${left + i * 130 + 16}" y="${H - 12}">${name}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** Replaces the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` in docs/performance.md. */
export function replaceSection(name: string, body: string): void {
  const file = path.join(root, 'docs/performance.md');
  const doc = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Performance\n';
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${body}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  const next =
    i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, next);
}

export function machineLine(): string {
  return `Node ${process.version}, ${process.platform}/${process.arch}, ${new Date().toISOString().slice(0, 10)}`;
}

export function updateDoc(rows: Row[], o: { rounds: number; events: number; write: boolean }): string {
  const { text } = renderTables(rows);
  const out = `Measured by \`pnpm bench:informer\` (${machineLine()}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores when it ended, other agents sharing the machine): medians of ${o.rounds} rounds, each contender in a fresh process, the server in its own process; ${o.events} MODIFIED events for the watch figure.\n\n${text}\n\n![informer benchmark](./performance-informer.svg)`;
  if (o.write) {
    fs.writeFileSync(path.join(root, 'docs/performance-informer.svg'), renderSvg(rows));
    replaceSection('informer-bench', out);
  }
  return out;
}
