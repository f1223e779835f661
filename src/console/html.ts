import { escapeHtml } from '../identity/mcp-authorization/pages.js';

/**
 * HTML built by a tagged template that escapes every value it is given, unless the value is HTML built the same way:
 * a page cannot carry a name, a note or an error message as markup by mistake.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  return new Html(strings.reduce((out, part, i) => out + render(values[i - 1] as Value) + part));
}
