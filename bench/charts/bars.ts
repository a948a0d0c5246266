/**
 * Grouped bars: each group a measurement, each bar the service's (solid) or its reference's
 * (hatched), with its value written above it and its name below, so no bar is told apart by
 * colour alone.
 */
import { el, INK, linearScale, MUTED, niceTicks, SERVICE_FILL, svgDocument, text } from './svg.js';

export interface Bar {
  /** Under the bar, e.g. "service" or "p99". */
  label: string;
  value: number;
  /** Above the bar, e.g. "1,234/s". */
  valueText: string;
  kind: 'service' | 'reference';
}

export interface BarGroup {
  label: string;
  /** A second line under the group's label, e.g. its ratio. */
  note?: string;
  bars: Bar[];
}

export interface BarChart {
  title: string;
  desc: string;
  yLabel: string;
  groups: BarGroup[];
  legend: Record<Bar['kind'], string>;
}

const BAR = 64;
const BAR_GAP = 6;
const GROUP_GAP = 28;
const LEFT = 78;
const TOP = 64;
const PLOT_HEIGHT = 240;
const BOTTOM = 64;

const fillOf = (kind: Bar['kind']) => (kind === 'service' ? SERVICE_FILL : 'url(#hatch)');
/** About the width of `text` at the chart's 12px, for leaving it room. */
const textWidth = (text: string) => text.length * 7;

function legend(entries: BarChart['legend'], y: number) {
  let x = LEFT;
  return (['service', 'reference'] as const).map((kind) => {
    const item = el(
      'g',
      { class: 'legend-item' },
      el('rect', { x, y: y - 10, width: 14, height: 12, fill: fillOf(kind), stroke: INK }),
      text({ x: x + 20, y }, `${kind === 'service' ? 'Solid' : 'Hatched'}: ${entries[kind]}`),
    );
    x += 40 + textWidth(`${entries[kind]} Hatched:`);
    return item;
  });
}

export function renderBars(chart: BarChart): string {
  const barsWidth = (group: BarGroup) => group.bars.length * (BAR + BAR_GAP) - BAR_GAP;
  // Room for the group's own label too, which may be wider than its bars.
  const groupWidth = (group: BarGroup) => Math.max(barsWidth(group), textWidth(group.label) + 12, textWidth(group.note ?? ''));
  const plotWidth = chart.groups.reduce((sum, group) => sum + groupWidth(group) + GROUP_GAP, GROUP_GAP);
  const width = Math.max(LEFT + plotWidth + 20, 640);
  const height = TOP + PLOT_HEIGHT + BOTTOM;
  const ticks = niceTicks(Math.max(...chart.groups.flatMap((group) => group.bars.map((bar) => bar.value))) * 1.1);
  const y = linearScale([0, ticks.at(-1)!], [TOP + PLOT_HEIGHT, TOP]);
  const axis = el(
    'g',
    { class: 'y-axis' },
    ...ticks.map((tick) =>
      el(
        'g',
        { class: 'tick' },
        el('line', { x1: LEFT, x2: LEFT + plotWidth, y1: y(tick), y2: y(tick), stroke: '#d9e2ec' }),
        text({ x: LEFT - 6, y: y(tick) + 4, 'text-anchor': 'end' }, tick.toLocaleString('en-US')),
      ),
    ),
    text({ class: 'axis-label', transform: `translate(18 ${TOP + PLOT_HEIGHT / 2}) rotate(-90)`, 'text-anchor': 'middle' }, chart.yLabel),
    el('line', { x1: LEFT, x2: LEFT + plotWidth, y1: y(0), y2: y(0), stroke: INK }),
  );
  let x = LEFT + GROUP_GAP;
  const groups = chart.groups.map((group) => {
    const start = x;
    const barsStart = start + (groupWidth(group) - barsWidth(group)) / 2;
    const bars = group.bars.map((bar, index) => {
      const left = barsStart + index * (BAR + BAR_GAP);
      return el(
        'g',
        { class: `bar ${bar.kind}` },
        el('rect', { x: left, y: y(bar.value), width: BAR, height: y(0) - y(bar.value), fill: fillOf(bar.kind), stroke: INK }),
        text({ x: left + BAR / 2, y: y(bar.value) - 5, 'text-anchor': 'middle', 'font-size': 11 }, bar.valueText),
        text({ x: left + BAR / 2, y: y(0) + 15, 'text-anchor': 'middle', 'font-size': 11, fill: MUTED }, bar.label),
      );
    });
    x += groupWidth(group) + GROUP_GAP;
    const middle = start + groupWidth(group) / 2;
    return el(
      'g',
      { class: 'group' },
      ...bars,
      text({ class: 'group-label', x: middle, y: y(0) + 33, 'text-anchor': 'middle', 'font-weight': 600 }, group.label),
      ...(group.note ? [text({ x: middle, y: y(0) + 49, 'text-anchor': 'middle', fill: MUTED }, group.note)] : []),
    );
  });
  return svgDocument(
    { width, height },
    chart.title,
    chart.desc,
    text({ x: LEFT, y: 22, 'font-size': 15, 'font-weight': 600 }, chart.title),
    el('g', { class: 'legend' }, ...legend(chart.legend, 44)),
    axis,
    ...groups,
  );
}
