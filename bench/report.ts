import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_DIR } from './context.js';
import { methodParagraphs, renderPage, table, writePage } from './page.js';
import { fmt, type BenchResults } from './results.js';
import type { BenchSettings } from './settings.js';

const CPU_COLUMNS = ['web', 'worker', 'postgres', 'redis', 'receiver', 'bench'];
/** Decimals of a growth row's value, by its unit: whole rates, tenths of a millisecond, hundredths of a quotient. */
const VALUE_DIGITS: Record<string, number> = { ms: 1, '×': 2 };

/** The run as markdown: the header line, the main table, growth, memory, CPU, notes. */
export function renderReport(results: BenchResults, settings: BenchSettings): string {
  const env = results.environment;
  return [
    `# contact-hooks benchmarks`,
    '',
    `Run ${results.startedAt} · Node ${env.node} · ${env.cores} cores (${env.cpu}) · ${env.memoryGiB} GiB · PostgreSQL ${env.postgres} (${env.postgresSettings}) · Redis ${env.redis} · other processes' CPU at start ${env.otherLoadAtStart} · total ${results.totalSeconds} s`,
    '',
    ...methodParagraphs(results, settings).flatMap((paragraph) => [paragraph, '']),
    table(
      ['#', 'Figure', 'Measured', 'Reference (same run)', 'Ratio', 'Goal', 'Result'],
      results.rows.map((row) => [row.figure, row.what, row.measured, row.reference, row.ratio, row.goal, row.result]),
    ),
    '',
    '### 5. Growth: cost per operation against store size',
    '',
    table(
      [
        'Store',
        'Size',
        'Rows at measurement',
        'Figure',
        'Value',
        'Ratio to smallest',
        'Cost per op ÷ smallest',
        'Flat? (≤ 1.3)',
        'Other processes (CPU ms/op)',
      ],
      results.growth.map((row) => [
        row.dimension,
        fmt(row.size),
        fmt(row.actualRows),
        row.figure,
        `${fmt(row.value, VALUE_DIGITS[row.unit] ?? 0)} ${row.unit}`,
        fmt(row.ratioToSmallest, 2),
        fmt(row.costRatio, 2),
        row.flat,
        fmt(row.other, 2),
      ]),
    ),
    '',
    '### 6. Memory: peak RSS (VmHWM, read before stopping each process; max over its runs)',
    '',
    table(
      ['Process', 'RSS idle after start', 'Peak RSS', 'Peak ÷ idle'],
      results.memory.map((row) => [row.process, `${fmt(row.idleMiB)} MiB`, `${fmt(row.peakMiB)} MiB`, fmt(row.peakMiB / row.idleMiB, 1)]),
    ),
    '',
    '### Where the CPU goes: CPU ms per operation by process during the measured windows',
    '',
    table(
      ['Window', 'Ops', 'Machine busy', ...CPU_COLUMNS, 'Ours', 'Other processes'],
      results.cpu.map((row) => [
        row.figure,
        fmt(row.ops),
        `${fmt(row.utilisation * 100)}%`,
        ...CPU_COLUMNS.map((group) => (row.perOpMs[group] === undefined ? '' : fmt(row.perOpMs[group], 3))),
        fmt(
          CPU_COLUMNS.reduce((sum, group) => sum + (row.perOpMs[group] ?? 0), 0),
          3,
        ),
        fmt(row.perOpMs.other ?? 0, 3),
      ]),
    ),
    '',
    `"Ours" is the CPU per operation of the processes in the figure; on ${env.cores} cores it bounds the rate at ${env.cores} × 1000 ÷ Ours per second. "Other processes" is CPU the machine spent on anything else meanwhile (other users' test runs skew a figure when it is not near 0).`,
    '',
    ...[...results.notes, `Logs of every process: ${LOG_DIR}.`].map((note) => `- ${note}`),
    '',
  ].join('\n');
}

/**
 * Prints the report and writes latest.md and latest.json into `dir`; then the page with its
 * charts: into docs/ after a run of every figure at BENCH_SCALE=1, into `dir` after any other,
 * so a partial or shortened run never stands in for the published one.
 */
export function writeReport(dir: string, results: BenchResults, settings: BenchSettings) {
  const markdown = renderReport(results, settings);
  process.stdout.write(`${markdown}\n`);
  writeFileSync(join(dir, 'latest.md'), markdown);
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const published = results.settings.only === 'every figure' && settings.scale === 1;
  const written = writePage(published ? join(process.cwd(), 'docs') : dir, renderPage(results, settings));
  process.stderr.write(`[bench] wrote ${written.join(', ')}\n`);
}
