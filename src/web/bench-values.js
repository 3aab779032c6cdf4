// What the benchmark panels read from a cluster benchmark run
// (/api/v1/benchmarks/cluster): its passes, the four figures of each and
// how the page writes them, in the units `rados bench` prints (Ceph's
// MB/s, seconds of latency), so they line up with old logs and the CLI.
import { BenchPass, BenchPhase } from './kinds.js';

export const FINISHED = new Set([BenchPhase.DONE, BenchPhase.FAILED]);

/** The passes in the order they run, with the words the page uses. */
export const PASSES = [
  { pass: BenchPass.WRITE, name: 'write' },
  { pass: BenchPass.SEQ, name: 'seq read' },
  { pass: BenchPass.RAND, name: 'rand read' },
];

/** `name` is the comparison's own metric name (/api/v1/benchmarks/compare). */
export const METRICS = [
  { key: 'mb', name: 'MB/s', title: 'MB/s', field: 'bandwidth_mb_s', higherIsBetter: true },
  { key: 'iops', name: 'IOPS', title: 'IOPS', field: 'iops', higherIsBetter: true },
  { key: 'avg', name: 'avg latency s', title: 'Avg latency', field: 'avg_latency_s', higherIsBetter: false },
  { key: 'max', name: 'max latency s', title: 'Max latency', field: 'max_latency_s', higherIsBetter: false },
];

export function metricByKey(key) {
  return METRICS.find((m) => m.key === key) || METRICS[0];
}

export function metricByName(name) {
  return METRICS.find((m) => m.name === name) || null;
}

const UNITS = { mb: 'MB/s', iops: 'IOPS', avg: 's', max: 's' };
const DECIMALS = { mb: 1, iops: 0, avg: 4, max: 4 };

/** A figure as the CLI's `bench show` and `bench compare` write it, without its unit. */
export function fmtFigure(metric, v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return v.toFixed(DECIMALS[metric.key] ?? 1);
}

/** A figure with its unit: "138.3 MB/s", "34 IOPS", "0.4628 s". */
export function fmtMetric(metric, v) {
  const figure = fmtFigure(metric, v);
  return figure === '—' || !UNITS[metric.key] ? figure : `${figure} ${UNITS[metric.key]}`;
}

export function passResult(run, pass) {
  return run.results.find((r) => r.pass === pass) || null;
}

/** "#3 before the disk swap". */
export function runName(run) {
  return run.label ? `#${run.bench_id} ${run.label}` : `#${run.bench_id}`;
}

/** One pass's four figures in a line, for tooltips. */
export function passLine(result) {
  const name = PASSES.find((p) => p.pass === result.pass).name;
  return `${name}: ${METRICS.map((m) => fmtMetric(m, result[m.field])).join(', ')} over ${result.seconds.toFixed(0)} s`;
}

/** The cluster a run measured, in a few words. */
export function shapeText(run) {
  const s = run.shape;
  if (!s) return '';
  const classes = Object.entries(s.osds_by_class).map(([c, n]) => `${n} ${c.toUpperCase()}`).join(' + ');
  return `${classes} OSDs on ${s.hosts} hosts; pool size ${s.pool_size}, ${s.pg_num} PGs`;
}
