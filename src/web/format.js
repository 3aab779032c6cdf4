// Numbers, durations and names as the page writes them.

export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** "7 s", "4 min 10 s", "2 h 5 min", "3 d 4 h". */
export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 && m < 10 ? `${m} min ${s % 60} s` : `${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return m % 60 ? `${hrs} h ${m % 60} min` : `${hrs} h`;
  const d = Math.floor(hrs / 24);
  return hrs % 24 ? `${d} d ${hrs % 24} h` : `${d} d`;
}

/** A clock time for a server timestamp (ms); the date too when it is not today. */
export function fmtClock(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  if (d.toDateString() === new Date().toDateString()) return time;
  return `${d.toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' })} ${time}`;
}

export function fmtBytes(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

// A CRUSH weight as `ceph osd tree` and the CLI print it: five decimals, 0 for none.
export function fmtWeight(w) {
  if (w === null || w === undefined) return '—';
  return w < 0.000001 ? '0' : w.toFixed(5);
}

export function fmtRate(pgsPerMin) {
  if (pgsPerMin === null || pgsPerMin === undefined || !Number.isFinite(pgsPerMin)) return '—';
  return `${pgsPerMin >= 10 ? Math.round(pgsPerMin) : pgsPerMin.toFixed(1)} PGs/min`;
}

/** A per-OSD bench's rate in Ceph's MB/s (MiB/s), as `osd ls --wide` writes it. */
export function fmtBenchRate(bytesPerSec) {
  if (bytesPerSec === null || bytesPerSec === undefined || !Number.isFinite(bytesPerSec)) return '—';
  const mb = bytesPerSec / 1048576;
  return `${mb >= 10 ? mb.toFixed(0) : mb.toFixed(1)} MB/s`;
}

export function osdName(id) {
  return `osd.${id}`;
}

/** Join ["a", "b", "c"] as "a, b and c". */
export function joinAnd(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
