/** A readable field path from its segments: `limit`, `filters.tags[2]`, or `(root)` for none. */
export function fieldPath(segments: readonly PropertyKey[]): string {
  if (segments.length === 0) return '(root)';
  return segments.reduce<string>((path, segment) => {
    const key = String(segment);
    if (typeof segment === 'number' || /^\d+$/.test(key)) return `${path}[${key}]`;
    return path ? `${path}.${key}` : key;
  }, '');
}
