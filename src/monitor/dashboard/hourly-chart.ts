/**
 * One tool's calls and failures per UTC hour as an inline SVG bar chart: calls in blue, the
 * failures among them in red on the same scale, one bar pair per hour of the window. Drawn by
 * hand because a chart library would be a download (or a CDN) for a few dozen rectangles.
 */
import type { HourlyPoint } from '../../core/store-types.js';
import { html, type SafeHtml } from './safe-html.js';

const WIDTH = 720;
const PLOT_TOP = 12;
const PLOT_HEIGHT = 70;
const AXIS_Y = PLOT_TOP + PLOT_HEIGHT;
const HEIGHT = AXIS_Y + 16;

const hourLabel = (iso: string): string => `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
const round = (n: number): string => n.toFixed(1);

/**
 * @param hours Every hour of the window, oldest first (UTC ISO-8601, as `HourlyView.hours`).
 * @param points This tool's points; hours without one had no calls.
 */
export function renderHourlyChart(tool: string, hours: readonly string[], points: readonly HourlyPoint[]): SafeHtml {
  const byHour = new Map(points.map((p) => [p.hour, p]));
  const peak = Math.max(1, ...points.map((p) => p.total));
  const calls = points.reduce((n, p) => n + p.total, 0);
  const failures = points.reduce((n, p) => n + p.failures, 0);
  const step = WIDTH / Math.max(1, hours.length);
  const barWidth = Math.max(1, step * 0.8);
  const bars: SafeHtml[] = [];
  hours.forEach((hour, i) => {
    const point = byHour.get(hour);
    if (point === undefined || point.total === 0) return;
    const x = round(i * step + (step - barWidth) / 2);
    const h = (point.total / peak) * PLOT_HEIGHT;
    const fh = (point.failures / peak) * PLOT_HEIGHT;
    const label = `${hourLabel(hour)} UTC: ${point.total} call${point.total === 1 ? '' : 's'}, ${point.failures} failed`;
    bars.push(html`<rect class="calls" x="${x}" y="${round(AXIS_Y - h)}" width="${round(barWidth)}" height="${round(h)}"><title>${label}</title></rect>`);
    if (point.failures > 0) {
      bars.push(html`<rect class="failures" x="${x}" y="${round(AXIS_Y - fh)}" width="${round(barWidth)}" height="${round(fh)}"><title>${label}</title></rect>`);
    }
  });
  const first = hours[0];
  const last = hours[hours.length - 1];
  const axisLabels =
    first === undefined || last === undefined
      ? html``
      : html`<text x="0" y="${HEIGHT - 2}">${hourLabel(first)}</text><text x="${WIDTH}" y="${HEIGHT - 2}" text-anchor="end">${hourLabel(last)} UTC</text>`;
  return html`<figure data-tool="${tool}"><figcaption><b>${tool}</b>: ${calls} calls, ${failures} failed; peak ${peak}/h</figcaption>
<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${tool}: calls and failures per hour"><text x="0" y="9">${peak}</text><line class="axis" x1="0" y1="${AXIS_Y}" x2="${WIDTH}" y2="${AXIS_Y}"></line>${bars}${axisLabels}</svg></figure>`;
}
