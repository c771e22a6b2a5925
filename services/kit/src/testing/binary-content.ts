/**
 * `length` pseudo-random bytes from `seed`: every byte value, in an order no layer could shorten
 * (no runs a filesystem or an encoder could skip), the same for the same seed.
 */
export function binaryContent(length: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
