/** How reports print rates and durations: the CLI tables and the dashboard show the same text. */

export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

export function formatMs(ms: number | null): string {
  if (ms === null) return '-';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;
}
