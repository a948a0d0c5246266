import { OUTCOME_STATUSES, type OutcomeStatus } from '../../domain/hookHealth.js';
import type { OutcomeBucket } from '../../domain/outcomeSeries.js';
import { escape, html, raw, time } from './html.js';

/**
 * Outcome charts as SVG drawn here: stacked bars, each status with a colour and a pattern of
 * its own, named in a legend drawn with the same swatches, so the chart reads without colour;
 * the numbers are also in a table under it.
 */
const STYLE: Record<OutcomeStatus, { colour: string; pattern: string }> = {
  delivered: { colour: '#1a7f37', pattern: '' },
  failed: { colour: '#b42318', pattern: '<path d="M0 6 L6 0" stroke="#fff" stroke-width="1.5"/>' },
  refused: { colour: '#8a4b08', pattern: '<path d="M0 0 L6 6 M0 6 L6 0" stroke="#fff" stroke-width="1.2"/>' },
  expired: { colour: '#57606a', pattern: '<circle cx="3" cy="3" r="1.3" fill="#fff"/>' },
  unknown: { colour: '#6639ba', pattern: '<path d="M0 3 H6" stroke="#fff" stroke-width="1.5"/>' },
};

const WIDTH = 480;
const HEIGHT = 170;
const TOP = 12;
const LEFT = 34;
const BOTTOM = 22;

/** The patterns, once per chart (ids prefixed so two charts on a page do not clash). */
const patterns = (id: string) =>
  OUTCOME_STATUSES.map(
    (status) =>
      `<pattern id="${id}-${status}" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="${STYLE[status].colour}"/>${STYLE[status].pattern}</pattern>`,
  ).join('');

const total = (bucket: OutcomeBucket) => OUTCOME_STATUSES.reduce((sum, status) => sum + bucket.counts[status], 0);

function bars(id: string, buckets: OutcomeBucket[], label: (index: number) => string | undefined) {
  const max = Math.max(1, ...buckets.map(total));
  const plot = HEIGHT - TOP - BOTTOM;
  const step = (WIDTH - LEFT) / buckets.length;
  const parts: string[] = [];
  buckets.forEach((bucket, index) => {
    let y = HEIGHT - BOTTOM;
    const x = LEFT + index * step + step * 0.15;
    for (const status of OUTCOME_STATUSES) {
      const count = bucket.counts[status];
      if (count === 0) continue;
      const height = (count / max) * plot;
      y -= height;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${height.toFixed(1)}" fill="url(#${id}-${status})"/>`,
      );
    }
    const text = label(index);
    if (text) parts.push(`<text x="${(x + step * 0.35).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${text}</text>`);
  });
  const axis =
    `<line x1="${LEFT}" y1="${HEIGHT - BOTTOM}" x2="${WIDTH}" y2="${HEIGHT - BOTTOM}" stroke="#57606a"/>` +
    `<text x="${LEFT - 4}" y="${TOP + 4}" text-anchor="end">${max}</text><text x="${LEFT - 4}" y="${HEIGHT - BOTTOM}" text-anchor="end">0</text>`;
  return axis + parts.join('');
}

/** What the chart shows, said in words for a screen reader. */
const summary = (buckets: OutcomeBucket[]) => {
  const sums = OUTCOME_STATUSES.map((status) => [status, buckets.reduce((sum, bucket) => sum + bucket.counts[status], 0)] as const);
  const named = sums.filter(([, count]) => count > 0).map(([status, count]) => `${count} ${status}`);
  return named.length > 0 ? `In all: ${named.join(', ')}.` : 'No outcomes in this period.';
};

/** One chart with its title, legend and table of numbers. */
export function outcomeChart(id: string, title: string, buckets: OutcomeBucket[], axisLabel: (index: number) => string | undefined) {
  const svg =
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" font-size="11" fill="#24292f">` +
    `<title id="${id}-title">${escape(title)}</title><desc id="${id}-desc">${summary(buckets)}</desc>` +
    `<defs>${patterns(id)}</defs>${bars(id, buckets, axisLabel)}</svg>`;
  return html`<figure class="chart-box">
  <figcaption><h3>${title}</h3></figcaption>
  ${raw(svg)}
  <ul class="legend" aria-label="Legend">
    ${OUTCOME_STATUSES.map(
      (status) =>
        // The chart's own patterns: ids are shared by every SVG of the page.
        html`<li>${raw(`<svg width="14" height="14" aria-hidden="true"><rect width="14" height="14" fill="url(#${id}-${status})" stroke="#24292f"/></svg>`)} ${status}</li>`,
    )}
  </ul>
  <details>
    <summary>The numbers</summary>
    <div class="scroll" role="region" aria-label="${title}: the numbers" tabindex="0">
    <table>
      <thead><tr><th scope="col">From</th>${OUTCOME_STATUSES.map((status) => html`<th scope="col">${status}</th>`)}</tr></thead>
      <tbody>
        ${buckets.map((bucket) => html`<tr><th scope="row">${time(bucket.start)}</th>${OUTCOME_STATUSES.map((status) => html`<td>${bucket.counts[status]}</td>`)}</tr>`)}
      </tbody>
    </table>
    </div>
  </details>
</figure>`;
}

/** The hook's two charts: per hour over 24 hours, per day (24 hours each, ending now) over 7 days. */
export function hookCharts(charts: { hours: OutcomeBucket[]; days: OutcomeBucket[] }) {
  const hourLabel = (index: number) => (index === 23 ? 'now' : (23 - index) % 6 === 0 ? `−${23 - index} h` : undefined);
  const dayLabel = (index: number) => (index === 6 ? 'last 24 h' : `−${6 - index} d`);
  return html`<div class="charts">
  ${outcomeChart('hours', 'Outcomes per hour, last 24 hours', charts.hours, hourLabel)}
  ${outcomeChart('days', 'Outcomes per day, last 7 days', charts.days, dayLabel)}
</div>`;
}
