/**
 * Building the page: elements made one by one, text always as text. Nothing
 * from the bus is ever parsed as HTML: a body holding `<script>` shows as
 * those characters.
 */
export type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined>;

const SVG = 'http://www.w3.org/2000/svg';

function fill(node: Element, attributes: Attributes, children: Child[]): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  fill(node, attributes, children);
  return node;
}

export function svg(tag: string, attributes: Attributes = {}, ...children: Child[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  fill(node, attributes, children);
  return node;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** Replace what a node holds. */
export function show(node: Element, ...children: Child[]): void {
  node.replaceChildren();
  fill(node, {}, children);
}

/** A short, stable colour for a name: the same agent is the same hue everywhere. */
export function hueOf(name: string): number {
  let hash = 0;
  for (let index = 0; index < name.length; index++) hash = (hash * 31 + name.charCodeAt(index)) >>> 0;
  return hash % 360;
}

/**
 * Rebuild what a container shows without losing the keyboard's place: the focused element's
 * `data-key`, if it has one, is focused again in the new content.
 */
export function rebuild(container: Element, build: () => void): void {
  const focused = document.activeElement;
  const key = focused instanceof HTMLElement && container.contains(focused) ? focused.dataset.key : undefined;
  build();
  if (key === undefined) return;
  const again = [...container.querySelectorAll<HTMLElement>('[data-key]')].find((node) => node.dataset.key === key);
  again?.focus();
}

/** Answers in the order asked: only the latest ask's answer is used (an earlier one can come back later). */
export class Latest {
  private asked = 0;

  async take<T>(work: () => Promise<T>): Promise<{ current: boolean; value: T }> {
    const ask = ++this.asked;
    const value = await work();
    return { current: ask === this.asked, value };
  }
}
