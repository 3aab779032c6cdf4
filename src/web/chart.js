// What the page's charts share: the plot's frame, round tick steps and
// labels kept apart. Each chart draws its own SVG (removal-chart.js,
// bench-chart.js).
import { emptyState } from './dom.js';

/**
 * The plot area inside a chart's margins (`frame`: w, h, left, right, top,
 * bottom); or, with nothing to draw, `emptyText` in its place and an empty legend.
 */
export function plotArea(frame, box, legend, emptyText) {
  if (emptyText) {
    box.replaceChildren(emptyState(emptyText));
    legend.replaceChildren();
    return null;
  }
  return { ...frame, height: frame.h, plotW: frame.w - frame.left - frame.right, plotH: frame.h - frame.top - frame.bottom };
}

/** Vertical room one label needs: the 12 px label's whole box. */
export const LABEL_GAP = 16;

/**
 * Label baselines for points at `ys`: each as near its point as it can
 * be, at least `gap` from the next, all within [lo, hi].
 */
export function spreadLabels(ys, lo, hi, gap = LABEL_GAP) {
  const order = ys.map((y, i) => ({ y: y + 4, i })).sort((a, b) => a.y - b.y);
  for (let k = 0; k < order.length; k += 1) {
    const floor = k === 0 ? lo : order[k - 1].y + gap;
    order[k].y = Math.max(order[k].y, floor);
  }
  // Pushed past the bottom: shift the tail up, keeping the gaps.
  for (let k = order.length - 1; k >= 0; k -= 1) {
    const ceiling = k === order.length - 1 ? hi : order[k + 1].y - gap;
    order[k].y = Math.min(order[k].y, ceiling);
  }
  const out = new Array(ys.length);
  for (const o of order) out[o.i] = o.y;
  return out;
}

/** Round tick steps for 0..max with at most about `count` ticks, from `steps`. */
export function niceStep(max, count, steps) {
  for (const s of steps) if (max / s <= count) return s;
  return steps[steps.length - 1] * Math.ceil(max / count / steps[steps.length - 1]);
}

/** A round step (1, 2, 2.5 or 5 times a power of ten) for 0..max in about `count` ticks, any magnitude. */
export function decimalStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return niceStep(raw, 1, [1, 2, 2.5, 5, 10].map((m) => m * power));
}

/** How many decimals a tick label of `step` needs. */
export function stepDecimals(step) {
  return Math.max(0, Math.ceil(-Math.log10(step) - 1e-9) + (String(step).includes('25') ? 1 : 0));
}
