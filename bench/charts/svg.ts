/**
 * A small SVG writer for the bench page's charts: elements as strings, every text and attribute
 * escaped, a document with a title and a description for screen readers, and the scales and
 * ticks of a chart's axes. Its own, rather than a plotting library: four kinds of chart need a
 * few hundred lines, the output is byte-for-byte the same for the same run (so the committed
 * SVGs diff cleanly), and nothing needs a DOM or a browser to draw.
 */

export type Attrs = Record<string, string | number | undefined>;

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Numbers as attributes: at most two decimals, so the output stays small and stable. */
const attrValue = (value: string | number) => (typeof value === 'number' ? String(Math.round(value * 100) / 100) : value);

export function el(name: string, attrs: Attrs = {}, ...children: string[]): string {
  const written = Object.entries(attrs)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([key, value]) => ` ${key}="${escape(attrValue(value))}"`)
    .join('');
  return children.length === 0 ? `<${name}${written}/>` : `<${name}${written}>${children.join('')}</${name}>`;
}

export const text = (attrs: Attrs, content: string) => el('text', attrs, escape(content));

export const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
export const INK = '#1f2933';
export const MUTED = '#52606d';
export const SERVICE_FILL = '#2f5d8a';

/**
 * The hatch a reference's bar is filled with: the service's bars are solid, so the two differ
 * without colour.
 */
const DEFS = el(
  'defs',
  {},
  el(
    'pattern',
    { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
    el('rect', { width: 6, height: 6, fill: '#ffffff' }),
    el('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: MUTED, 'stroke-width': 2 }),
  ),
);

/** A whole SVG document: `title` and `desc` are what a screen reader announces. */
export function svgDocument(size: { width: number; height: number }, title: string, desc: string, ...body: string[]): string {
  return `${el(
    'svg',
    {
      xmlns: 'http://www.w3.org/2000/svg',
      width: size.width,
      height: size.height,
      viewBox: `0 0 ${size.width} ${size.height}`,
      role: 'img',
      'aria-labelledby': 'chart-title chart-desc',
      'font-family': FONT,
      'font-size': 12,
      fill: INK,
    },
    el('title', { id: 'chart-title' }, escape(title)),
    el('desc', { id: 'chart-desc' }, escape(desc)),
    DEFS,
    el('rect', { width: size.width, height: size.height, fill: '#ffffff' }),
    ...body,
  )}\n`;
}

/** Maps [d0, d1] onto [r0, r1]. */
export const linearScale =
  ([d0, d1]: [number, number], [r0, r1]: [number, number]) =>
  (value: number) =>
    d1 === d0 ? r0 : r0 + ((value - d0) / (d1 - d0)) * (r1 - r0);

/** Round ticks from 0 to at least `max`: 1, 2 or 5 times a power of ten apart (at least 1 apart for counts). */
export function niceTicks(max: number, count = 5, counts = false): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(
    counts ? 1 : 0,
    [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough)!,
  );
  const ticks = [];
  for (let tick = 0; tick < max + step - 1e-9; tick += step) ticks.push(Math.round(tick * 1e6) / 1e6);
  return ticks;
}

/** A figure as the page prints it: thousands separated, at most `digits` decimals. */
export const formatNumber = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits });
