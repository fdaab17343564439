/**
 * The known name meant by one that is not known: the only one that starts
 * with what was typed (`timeout` for `timeoutMs`), or the one fewest edits
 * away if that is close enough to be a typo rather than another word.
 * The CLI's flags and `createExecutor`'s options share it.
 */
export function nearestName(typed: string, known: readonly string[]): string | undefined {
  const extended = known.filter((candidate) => candidate.startsWith(typed));
  if (typed.length >= 3 && extended.length === 1) return extended[0];
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(typed.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  const allowed = Math.max(1, Math.floor(typed.length / 3));
  return best && best.distance <= allowed ? best.name : undefined;
}

/** Levenshtein distance, transpositions counted as one edit (`toosl` → `tools`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i]![j] = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        rows[i]![j] = Math.min(rows[i]![j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}
