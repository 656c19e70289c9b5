/** How varied a position must look, relative to what `n` samples can show, to count as random. */
const RANDOM_LOOKING = 0.75

/**
 * A black-box estimate of the entropy of each of `samples`, in bits. Positions are compared
 * across the samples: a position as varied as that many random draws can look is credited with
 * the full size of the observed alphabet; a less varied one (fixed prefixes, counters,
 * timestamps) only with its measured Shannon entropy. Characters past the shortest sample are
 * not counted, so the estimate errs low.
 */
export function estimateEntropyBits(samples: readonly string[]): number {
  if (samples.length < 2) return 0
  const length = Math.min(...samples.map((s) => s.length))
  const alphabet = new Set(samples.join('')).size
  if (alphabet < 2) return 0
  const perSymbol = Math.log2(alphabet)
  const ceiling = Math.log2(Math.min(samples.length, alphabet))
  let bits = 0
  for (let i = 0; i < length; i++) {
    const counts = new Map<string, number>()
    for (const s of samples) counts.set(s.charAt(i), (counts.get(s.charAt(i)) ?? 0) + 1)
    let h = 0
    for (const c of counts.values()) h -= (c / samples.length) * Math.log2(c / samples.length)
    bits += h >= RANDOM_LOOKING * ceiling ? perSymbol : h
  }
  return bits
}
