/**
 * A small interpreter of the request a Power Query template describes: just the M it needs to evaluate the bindings
 * BaseUrl, RelativePath, PageSize, RequestHeaders and RequestBody (text and number literals, names, `&`, records,
 * `if … = null then … else …`, one-parameter functions and their application), with Web.Contents' rules for what
 * goes on the wire: RelativePath appended to the URL with one "/", a POST because Content is given, the headers
 * as written, Json.FromValue's compact JSON of the record in field order. FetchPage and List.Generate are matched
 * as text against the shape the test replays, so a change to either fails the test rather than being ignored.
 */

type MValue = string | number | null | MRecord | ((arg: MValue) => MValue);
interface MRecord {
  [field: string]: MValue;
}

const isWordAt = (text: string, i: number, word: string) =>
  text.startsWith(word, i) && !/\w/.test(text[i - 1] ?? '') && !/\w/.test(text[i + word.length] ?? '');

/** Splits at top-level occurrences of `separator` (outside strings, brackets and nested let … in). */
function splitTop(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') inString = !inString;
    if (inString) continue;
    if ('([{'.includes(c) || isWordAt(text, i, 'let')) depth++;
    if (')]}'.includes(c) || isWordAt(text, i, 'in')) depth--;
    if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i));
      start = i + separator.length;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

function fieldName(name: string): string {
  const quoted = /^#"((?:[^"]|"")*)"$/.exec(name);
  return quoted ? quoted[1].replace(/""/g, '"') : name;
}

export class MEvaluator {
  constructor(private readonly env: Record<string, MValue>) {}

  evaluate(source: string): MValue {
    const text = source.trim();
    const fn = /^\((\w+) as nullable text\) as record =>\s*([\s\S]+)$/.exec(text);
    if (fn) return (arg: MValue) => new MEvaluator({ ...this.env, [fn[1]]: arg }).evaluate(fn[2]);
    const branch = /^if (\w+) = null then ([\s\S]+?) else ([\s\S]+)$/.exec(text);
    if (branch) return this.evaluate(branch[1]) === null ? this.evaluate(branch[2]) : this.evaluate(branch[3]);
    const concatenated = splitTop(text, '&');
    if (concatenated.length > 1) return concatenated.map((part) => this.evaluate(part) as string).join('');
    if (/^"(?:[^"]|"")*"$/.test(text)) return text.slice(1, -1).replace(/""/g, '"');
    if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    if (text === 'null') return null;
    if (text.startsWith('[') && text.endsWith(']')) {
      const record: MRecord = {};
      for (const field of splitTop(text.slice(1, -1), ',')) {
        const [name, ...value] = splitTop(field, '=');
        record[fieldName(name)] = this.evaluate(value.join('='));
      }
      return record;
    }
    const call = /^(\w+)\((\w+)\)$/.exec(text);
    if (call) return (this.lookup(call[1]) as (arg: MValue) => MValue)(this.lookup(call[2]));
    if (/^\w+$/.test(text)) return this.lookup(text);
    throw new Error(`not in the interpreted subset of M: ${text}`);
  }

  private lookup(name: string): MValue {
    if (!(name in this.env)) throw new Error(`unbound name ${name}`);
    return this.env[name];
  }
}

/** The top-level bindings of `let … in …`, by name, as source text. */
export function letBindings(script: string): Map<string, string> {
  const code = script
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('//'))
    .join('\n');
  const body = /^let\n([\s\S]*)\nin\n\s*(\w+)\s*$/.exec(code.trim());
  if (!body) throw new Error('the template is not one let … in … expression');
  return new Map(
    splitTop(body[1], ',').map((binding) => {
      const at = binding.indexOf('=');
      return [binding.slice(0, at).trim(), binding.slice(at + 1).trim()];
    }),
  );
}

export interface DescribedRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

/** The request FetchPage(cursor) sends, with the query token the user pasted into the QueryToken parameter. */
export function requestDescription(
  bindings: Map<string, string>,
  queryToken: string,
): (cursor: string | null) => DescribedRequest {
  const env: Record<string, MValue> = { QueryToken: queryToken };
  for (const name of ['BaseUrl', 'RelativePath', 'PageSize', 'RequestHeaders', 'RequestBody']) {
    env[name] = new MEvaluator(env).evaluate(bindings.get(name) ?? '');
  }
  const base = env.BaseUrl as string;
  return (cursor) => ({
    url: `${base.replace(/\/$/, '')}/${env.RelativePath as string}`,
    method: 'POST',
    headers: env.RequestHeaders as Record<string, string>,
    body: JSON.stringify((env.RequestBody as (arg: MValue) => MValue)(cursor)),
  });
}

/** The column types Table.TransformColumnTypes gives, in order. */
export function columnTypes(bindings: Map<string, string>): [string, string][] {
  const typed = /^Table\.TransformColumnTypes\(Loaded, \{([\s\S]*)\}\)$/.exec(bindings.get('Typed') ?? '');
  if (!typed) throw new Error('no Table.TransformColumnTypes over Loaded');
  return [...typed[1].matchAll(/\{"((?:[^"]|"")*)", ([^}]+)\}/g)].map((m) => [m[1], m[2].trim()]);
}
