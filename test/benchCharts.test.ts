import { describe, expect, it } from 'vitest';
import { latencyChart, memoryChart, pacingChart, slidingSecond, throughputChart } from '../bench/charts/charts.js';
import { descendants, parseXml, textOf, type XmlElement } from './support/xml.js';

/**
 * The bench page's charts (bench/charts), each drawn from fixed data and read back as XML: an
 * accessible document (title, description), axes with units, a legend in words, and the marks
 * the data asks for, told apart by more than colour.
 */

const byClass = (root: XmlElement, name: string) => descendants(root).filter((element) => element.attrs.class?.split(' ').includes(name));
const texts = (root: XmlElement) =>
  descendants(root)
    .filter((element) => element.name === 'text')
    .map(textOf);

function accessibleDocument(svg: string) {
  const root = parseXml(svg);
  expect(root.name).toBe('svg');
  expect(root.attrs.role).toBe('img');
  const [title, desc] = ['title', 'desc'].map((name) => root.children.find((child) => child.name === name));
  expect(title && textOf(title).length).toBeGreaterThan(10);
  expect(desc && textOf(desc).length).toBeGreaterThan(20);
  expect(root.attrs['aria-labelledby']).toBe(`${title!.attrs.id} ${desc!.attrs.id}`);
  return { root, desc: textOf(desc!) };
}

describe('the bench charts', () => {
  it('draw throughput as a solid bar for the service beside a hatched one for its reference, each labelled with its value', () => {
    const { root, desc } = accessibleDocument(
      throughputChart({
        pairs: [
          { label: 'Upserts', unit: 'req/s', service: 2_345, reference: 3_100, referenceLabel: 'raw driver' },
          { label: 'Delivery, web + 1 worker', unit: 'deliveries/s', service: 900, reference: 1_200, referenceLabel: 'durable min.' },
        ],
      }),
    );
    const [service, reference] = [byClass(root, 'service'), byClass(root, 'reference')];
    expect([service.length, reference.length]).toStrictEqual([2, 2]);
    expect(service.map((bar) => bar.children[0]!.attrs.fill)).not.toContain('url(#hatch)');
    expect(reference.map((bar) => bar.children[0]!.attrs.fill)).toStrictEqual(['url(#hatch)', 'url(#hatch)']);
    expect(texts(root)).toEqual(expect.arrayContaining(['2,345', '3,100', 'Upserts', 'ratio 0.76', 'operations per second', 'Solid: the service']));
    expect(desc).toContain('Upserts: the service 2,345 req/s, raw driver 3,100 req/s (ratio 0.76)');
  });

  it('draw latency as p50 and p99 of the service and of its reference at each offered rate', () => {
    const rate = (label: string, offeredPerSecond: number) => ({
      label,
      offeredPerSecond,
      service: { p50: 12.5, p99: 40 },
      reference: { p50: 2.1, p99: 9.75 },
    });
    const { root, desc } = accessibleDocument(latencyChart({ reference: 'raw POST round trip', rates: [rate('25% of peak', 250), rate('50% of peak', 500)] }));
    expect(byClass(root, 'group')).toHaveLength(2);
    expect([byClass(root, 'service').length, byClass(root, 'reference').length]).toStrictEqual([4, 4]);
    expect(texts(root)).toEqual(expect.arrayContaining(['25% of peak: 250/s', '12.5 ms', '9.8 ms', 'p99', 'milliseconds', 'Hatched: raw POST round trip']));
    expect(desc).toContain('at 500 calls/s offered (50% of peak), the service p50 12.5 ms');
  });

  it('count arrivals in the sliding second at each receipt, as a receiver limiting itself would', () => {
    expect(slidingSecond([0, 100, 999, 1000, 1500, 2600])).toStrictEqual([
      [0, 1],
      [0.1, 2],
      [0.999, 3],
      [1, 3],
      [1.5, 3],
      [2.6, 1],
    ]);
  });

  it('draw pacing as one panel per target, its arrivals per sliding second against its labelled limit', () => {
    const steady = (perSecond: number, seconds: number) => Array.from({ length: perSecond * seconds }, (_, i) => (i * 1000) / perSecond);
    const { root, desc } = accessibleDocument(
      pacingChart({
        mode: 'embedded',
        targets: [
          { limitPerSecond: 5, arrivalsMs: steady(5, 4) },
          { limitPerSecond: 20, arrivalsMs: steady(20, 4) },
        ],
      }),
    );
    expect(byClass(root, 'panel')).toHaveLength(2);
    expect(byClass(root, 'reference').map(textOf)).toStrictEqual(['limit 5/s', 'limit 20/s']);
    expect(texts(root)).toEqual(expect.arrayContaining(["seconds since the target's first receipt", 'POSTs in the preceding second']));
    expect(desc).toContain('Target paced at 20/s: busiest second 20');
    expect(byClass(root, 'series').every((series) => series.children[0]!.attrs.d!.split('L').length > 10)).toBe(true);
  });

  it('draw memory as a line per process group, each with its own dash and marker, and the goal as a labelled line', () => {
    const points = (base: number) => Array.from({ length: 30 }, (_, i) => ({ atS: i * 10, rssMiB: base + (i % 5) }));
    const { root, desc } = accessibleDocument(
      memoryChart({
        goalMiB: 300,
        series: [
          { label: 'web on PostgreSQL', points: points(120) },
          { label: 'workers', points: points(200) },
        ],
      }),
    );
    const series = byClass(root, 'series');
    expect(series.map((one) => one.attrs['data-label'])).toStrictEqual(['web on PostgreSQL', 'workers']);
    expect(new Set(series.map((one) => one.children[0]!.attrs['stroke-dasharray'] ?? 'solid')).size).toBe(2);
    expect(new Set(series.map((one) => one.children[1]!.attrs.class)).size).toBe(2);
    expect(byClass(root, 'legend-item').map(textOf)).toEqual(expect.arrayContaining(['web on PostgreSQL', 'workers']));
    expect(byClass(root, 'reference').map(textOf)).toStrictEqual(['300 MiB']);
    expect(byClass(root, 'legend-item').map(textOf)).toContain("the embedded process's peak goal");
    expect(texts(root)).toEqual(expect.arrayContaining(['minutes since the run started', 'RSS (MiB)']));
    expect(desc).toContain('workers 204 MiB');
  });

  it('reads only well-formed XML: the check itself refuses a broken document', () => {
    expect(() => parseXml('<svg><g></svg>')).toThrow(/closes/);
    expect(() => parseXml('<svg><text>a & b</text></svg>')).toThrow(/entity/);
    expect(() => parseXml('<svg><g x="1" x="2"/></svg>')).toThrow(/twice/);
  });
});
