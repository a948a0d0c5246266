/**
 * HTML by tagged template: every interpolated value is escaped unless it is already Html (made by
 * this template or `raw`), so no page can carry markup from data by mistake.
 */
export class Html {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escape = (value: string) => value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);

type Part = Html | string | number | null | undefined | false | ReadonlyArray<Part>;

const render = (part: Part): string => {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escape(String(part));
};

export const html = (strings: TemplateStringsArray, ...values: Part[]) =>
  new Html(strings.reduce((out, string, i) => out + string + (i < values.length ? render(values[i]) : ''), ''));

/** Markup made here, trusted as it is (an SVG drawn by the server). */
export const raw = (text: string) => new Html(text);

/**
 * A time the reader's browser shows in its own time zone (portal.js rewrites it); without the
 * script it still reads, in UTC.
 */
export const time = (iso: string | null | undefined, none = '—') => {
  if (!iso) return html`${none}`;
  const utc = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return html`<time datetime="${iso}">${utc}</time>`;
};

/** A target URL's host, what an owner recognises it by (stored URLs were validated when subscribed). */
export const hostOf = (url: string) => new URL(url).host;

/** A count with its noun: 1 event, 2 events. */
export const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
