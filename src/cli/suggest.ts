// "Did you mean": the closest known word to a mistyped option or command. Small and dependency-free (it is
// in the hot bundle with check and explain).

/** Edit distance with adjacent transpositions (`--stagde` is one edit from `--staged`). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate closest to `word`, when it is close enough to be what was meant (else undefined). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const bare = (s: string) => s.replace(/^-+/, '');
  const w = bare(word).toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, bare(c).toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  // At most 40% of the word's length may differ (commander's own threshold), and at least one letter.
  return best !== undefined && bestD <= Math.max(1, Math.floor(w.length * 0.4)) ? best : undefined;
}

/** ` (did you mean X?)` or ''. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : ` (did you mean ${c}?)`;
}
