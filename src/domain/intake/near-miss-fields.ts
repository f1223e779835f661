/**
 * A referral body may carry properties the contract does not name (they are accepted and stored as
 * sent). One that looks like a misspelt field (`patient_zipcode`, `patientDob`, `pateint_phone`) is most likely
 * a mistake the integrator wants to hear about, since the field it meant was treated as missing. These rules find
 * them; nothing is refused.
 */

/** Case, `_`, `-`, spaces and dots do not tell field names apart for a person typing them. */
const canonical = (name: string) => name.toLowerCase().replace(/[\s._-]/g, '');

/** Edits (insert, delete, substitute, swap two neighbours) that turn one string into the other (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}

/** How many edits still count as a typo: none for very short names, one for short ones, two from 8 characters. */
const tolerance = (name: string) => (name.length < 4 ? 0 : name.length < 8 ? 1 : 2);

/** The documented fields an unknown property name most likely meant, closest first (none when nothing is close). */
export function meantFields(name: string, fields: readonly string[]): string[] {
  const typed = canonical(name);
  const scored = fields.map((field) => ({ field, distance: editDistance(typed, canonical(field)) }));
  const best = Math.min(...scored.map((s) => s.distance));
  if (best > tolerance(typed)) return [];
  return scored.filter((s) => s.distance === best).map((s) => s.field);
}

/** A warning for each top-level property that is not a field but is close to one, naming the field it probably meant. */
export function nearMissWarnings(body: object, fields: readonly string[]): string[] {
  const known = new Set(fields);
  return Object.keys(body)
    .filter((name) => !known.has(name))
    .flatMap((name) => {
      const meant = meantFields(name, fields);
      if (meant.length === 0) return [];
      const guess = meant.map((field) => `"${field}"`).join(' or ');
      return [
        `Unknown field "${name}" was stored as sent but not read as any field; did you mean ${guess}? The field meant counts as missing.`,
      ];
    });
}
