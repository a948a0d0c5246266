/**
 * Lines over time in one or more stacked panels that share the x axis: each series drawn with
 * its own dash and marker (so none is told apart by colour alone), each reference a dashed line
 * labelled at its right end, and a legend in words.
 */
import { el, INK, linearScale, MUTED, niceTicks, svgDocument, text } from './svg.js';

export interface Series {
  label: string;
  /** null breaks the line: nothing was measured there. */
  points: Array<[x: number, y: number] | null>;
}

export interface Panel {
  title?: string;
  series: Series[];
  references: Array<{ y: number; label: string }>;
}

export interface LineChart {
  title: string;
  desc: string;
  xLabel: string;
  yLabel: string;
  panels: Panel[];
  /** What the dashed reference lines are, for the legend, e.g. "the limit". */
  referenceLegend?: string;
  /** The y values are counts: whole ticks only. */
  counts?: boolean;
}

/** Dash and marker of the n-th series label. */
const STYLES = [
  { dash: undefined, marker: 'circle' },
  { dash: '7 4', marker: 'square' },
  { dash: '2 3', marker: 'triangle' },
  { dash: '10 3 2 3', marker: 'diamond' },
] as const;
const STROKES = ['#2f5d8a', '#b4541a', '#3f7d3a', '#6b3fa0'];
type Marker = (typeof STYLES)[number]['marker'];

const WIDTH = 760;
const LEFT = 78;
const RIGHT = 150;
const TOP = 70;
const PANEL_GAP = 34;
const BOTTOM = 50;
const MARKERS_PER_SERIES = 10;

function marker(kind: Marker, x: number, y: number, stroke: string) {
  const common = { class: `marker ${kind}`, fill: '#ffffff', stroke, 'stroke-width': 1.5 };
  if (kind === 'circle') return el('circle', { ...common, cx: x, cy: y, r: 3.5 });
  if (kind === 'square') return el('rect', { ...common, x: x - 3.5, y: y - 3.5, width: 7, height: 7 });
  if (kind === 'triangle') return el('path', { ...common, d: `M${x.toFixed(1)} ${(y - 4.5).toFixed(1)}l4.5 8h-9z` });
  return el('path', { ...common, d: `M${x.toFixed(1)} ${(y - 5).toFixed(1)}l5 5l-5 5l-5 -5z` });
}

function legend(labels: string[], references: string[]) {
  let x = LEFT;
  const sample = (label: string, ...drawing: string[]) => {
    const item = el('g', { class: 'legend-item' }, ...drawing, text({ x: x + 34, y: 48 }, label));
    x += 50 + 7 * label.length;
    return item;
  };
  return [
    ...labels.map((label, index) => {
      const style = STYLES[index % STYLES.length]!;
      const stroke = STROKES[index % STROKES.length]!;
      return sample(
        label,
        el('line', { x1: x, x2: x + 28, y1: 44, y2: 44, stroke, 'stroke-width': 2, 'stroke-dasharray': style.dash }),
        marker(style.marker, x + 14, 44, stroke),
      );
    }),
    ...references.map((label) => sample(label, el('line', { x1: x, x2: x + 28, y1: 44, y2: 44, stroke: INK, 'stroke-dasharray': '4 4' }))),
  ];
}

export function renderLines(chart: LineChart): string {
  const panelHeight = chart.panels.length > 1 ? 150 : 280;
  const height = TOP + chart.panels.length * (panelHeight + PANEL_GAP) - PANEL_GAP + BOTTOM;
  const drawn = (series: Series) => series.points.filter((point) => point !== null);
  const allPoints = chart.panels.flatMap((panel) => panel.series.flatMap(drawn));
  const xTicks = niceTicks(Math.max(...allPoints.map(([px]) => px)), 8);
  const x = linearScale([0, xTicks.at(-1)!], [LEFT, WIDTH - RIGHT]);
  // A series keeps its style across panels: the legend names each label once.
  const seriesLabels = [...new Set(chart.panels.flatMap((panel) => panel.series.map((series) => series.label)))];
  const panels = chart.panels.map((panel, index) => {
    const top = TOP + index * (panelHeight + PANEL_GAP);
    const values = [...panel.series.flatMap((series) => drawn(series).map(([, py]) => py)), ...panel.references.map((reference) => reference.y)];
    const yTicks = niceTicks(Math.max(...values) * 1.1, 4, chart.counts);
    const y = linearScale([0, yTicks.at(-1)!], [top + panelHeight, top]);
    const grid = yTicks.map((tick) =>
      el(
        'g',
        { class: 'tick' },
        el('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: y(tick), y2: y(tick), stroke: '#d9e2ec' }),
        text({ x: LEFT - 6, y: y(tick) + 4, 'text-anchor': 'end' }, tick.toLocaleString('en-US')),
      ),
    );
    const references = panel.references.map((reference) =>
      el(
        'g',
        { class: 'reference' },
        el('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: y(reference.y), y2: y(reference.y), stroke: INK, 'stroke-dasharray': '4 4' }),
        text({ x: WIDTH - RIGHT + 6, y: y(reference.y) + 4 }, reference.label),
      ),
    );
    const lines = panel.series.map((series) => {
      const styleIndex = seriesLabels.indexOf(series.label);
      const style = STYLES[styleIndex % STYLES.length]!;
      const stroke = STROKES[styleIndex % STROKES.length]!;
      const every = Math.max(1, Math.ceil(series.points.length / MARKERS_PER_SERIES));
      const path = series.points
        .map((point, i) => (point === null ? '' : `${i === 0 || series.points[i - 1] === null ? 'M' : 'L'}${x(point[0]).toFixed(1)} ${y(point[1]).toFixed(1)}`))
        .join('');
      return el(
        'g',
        { class: 'series', 'data-label': series.label },
        el('path', { d: path, fill: 'none', stroke, 'stroke-width': 1.75, 'stroke-dasharray': style.dash }),
        ...series.points.filter((point, i) => point !== null && i % every === 0).map((point) => marker(style.marker, x(point![0]), y(point![1]), stroke)),
      );
    });
    return el(
      'g',
      { class: 'panel' },
      ...(panel.title ? [text({ x: LEFT, y: top - 8, 'font-weight': 600 }, panel.title)] : []),
      ...grid,
      el('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: y(0), y2: y(0), stroke: INK }),
      ...references,
      ...lines,
    );
  });
  const bottom = TOP + chart.panels.length * (panelHeight + PANEL_GAP) - PANEL_GAP;
  const xAxis = el(
    'g',
    { class: 'x-axis' },
    ...xTicks.map((tick) => text({ x: x(tick), y: bottom + 16, 'text-anchor': 'middle' }, tick.toLocaleString('en-US'))),
    text({ class: 'axis-label', x: (LEFT + WIDTH - RIGHT) / 2, y: bottom + 36, 'text-anchor': 'middle' }, chart.xLabel),
  );
  const yLabel = text({ class: 'axis-label', transform: `translate(18 ${(TOP + bottom) / 2}) rotate(-90)`, 'text-anchor': 'middle' }, chart.yLabel);
  const referenceLabels = chart.referenceLegend ? [chart.referenceLegend] : [];
  return svgDocument(
    { width: WIDTH, height },
    chart.title,
    chart.desc,
    text({ x: LEFT, y: 22, 'font-size': 15, 'font-weight': 600 }, chart.title),
    el('g', { class: 'legend', fill: MUTED }, ...legend(seriesLabels, referenceLabels)),
    ...panels,
    xAxis,
    yLabel,
  );
}
