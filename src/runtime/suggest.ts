/**
 * "Did you mean ...?" for unknown tool names. Edit distance over a handful of short names is a
 * few lines; a dependency would not earn its keep here.
 */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** Up to `max` known names close to `name` (case-insensitive; containment counts as close). */
export function closestNames(name: string, known: Iterable<string>, max = 3): string[] {
  const wanted = name.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  for (const candidate of known) {
    const lower = candidate.toLowerCase();
    const distance = lower.includes(wanted) || wanted.includes(lower) ? 1 : editDistance(wanted, lower);
    if (distance <= Math.max(2, Math.floor(Math.max(wanted.length, lower.length) / 3))) scored.push({ name: candidate, score: distance });
  }
  return scored
    .sort((x, y) => x.score - y.score || x.name.localeCompare(y.name))
    .slice(0, max)
    .map((s) => s.name);
}
