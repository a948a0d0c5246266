/**
 * A strict parser for the XML the bench's SVG writer produces (elements, double-quoted
 * attributes, text, the five predefined entities): it throws on anything not well formed, so a
 * chart test reads the document's structure instead of matching strings.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decode = (raw: string) =>
  raw.replace(/&([a-z]+);|&/g, (whole, name: string | undefined) => {
    const value = name === undefined ? undefined : ENTITIES[name];
    if (value === undefined) throw new Error(`a bare or unknown entity: ${whole}`);
    return value;
  });

export function parseXml(source: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const open = [root];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/gy;
  for (let match = tag.exec(source); match; match = tag.exec(source)) {
    const [, closing, name, attrText, selfClosing, content, stray] = match;
    const parent = open.at(-1)!;
    if (stray) throw new Error(`not well formed at ${match.index}: ${source.slice(match.index, match.index + 40)}`);
    if (content !== undefined) {
      if (parent === root && content.trim()) throw new Error('text outside the root element');
      parent.text += decode(content);
    } else if (closing) {
      if (parent.name !== name) throw new Error(`</${name}> closes <${parent.name}>`);
      open.pop();
    } else {
      const attrs: Record<string, string> = {};
      for (const [, key, value] of attrText!.matchAll(/([\w:-]+)="([^"]*)"/g)) {
        if (key! in attrs) throw new Error(`attribute ${key} twice on <${name}>`);
        attrs[key!] = decode(value!);
      }
      const element = { name: name!, attrs, children: [], text: '' };
      parent.children.push(element);
      if (!selfClosing) open.push(element);
    }
  }
  if (open.length !== 1) throw new Error(`unclosed <${open.at(-1)!.name}>`);
  if (root.children.length !== 1) throw new Error('a document has one root element');
  return root.children[0]!;
}

/** Every element under `element` (itself included), depth first. */
export function descendants(element: XmlElement): XmlElement[] {
  return [element, ...element.children.flatMap(descendants)];
}

/** Its text and its descendants', joined. */
export const textOf = (element: XmlElement): string => element.text + element.children.map(textOf).join('');
