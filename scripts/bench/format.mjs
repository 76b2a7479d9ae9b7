// How the report writes its figures: whole numbers with thousands separators, ratios, milliseconds, and n/a for what was not measured.

export const int = n => Number.isFinite(n) ? Math.round(n).toLocaleString('en') : 'n/a'
export const fixed = (n, digits = 2) => Number.isFinite(n) ? n.toFixed(digits) : 'n/a'
// autocannon records latency in whole milliseconds.
export const ms = n => Number.isFinite(n) ? String(Math.round(n * 10) / 10) : 'n/a'
