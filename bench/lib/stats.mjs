// Order statistics for the benchmark: every figure is a distribution of
// samples taken with one timer (performance.now, monotonic, sub-microsecond).

// The q-quantile (0..1) of samples by the nearest-rank rule.
export function quantile(samples, q) {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const median = (s) => quantile(s, 0.5);

// Median, min and max of one figure across runs.
export function summary(values) {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  return { median: median(v), min: Math.min(...v), max: Math.max(...v), n: v.length };
}

// Times one async call in milliseconds.
export async function timeIt(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

// Calls fn n times in a row and returns the latencies (ms).
export async function sampleLatency(n, fn) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

// Formats a number of milliseconds, bytes per second, etc. for the tables.
export function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return "n/a";
  if (x === 0) return "0";
  const mag = Math.abs(x);
  if (mag >= 1000) return x.toFixed(0);
  return x.toPrecision(digits);
}
