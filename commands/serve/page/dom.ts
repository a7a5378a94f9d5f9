/**
 * The page's few DOM helpers: nodes built with `textContent` (never
 * `innerHTML`), and elements found by a `data-` attribute.
 *
 * @module
 */

/** A new element with a class and its text. */
export function node<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string | null = null,
  text: unknown = null,
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== null && text !== undefined) el.textContent = String(text);
  return el;
}

/** The first element under `parent` matching `selector` whose `key` is `value`. */
export function byData(
  parent: ParentNode,
  selector: string,
  key: string,
  value: unknown,
): HTMLElement | null {
  for (const el of parent.querySelectorAll<HTMLElement>(selector)) {
    if (el.getAttribute(key) === String(value)) return el;
  }
  return null;
}

/** Sets the text of the `data-field` named `name`; the element, if any. */
export function setField(
  parent: ParentNode,
  name: string,
  text: string,
): HTMLElement | null {
  const el = byData(parent, "[data-field]", "data-field", name);
  if (el) el.textContent = text;
  return el;
}
