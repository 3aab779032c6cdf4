// Throttled refetching. A busy cluster sends many stream messages a second
// (every host poll says "hosts"). Each panel has one Refresher: at most one
// fetch in flight, at most one start per `gapMs`, and requests made
// meanwhile collapse into one rerun.

class Refresher {
  constructor(name, load, gapMs) {
    this.name = name;
    this.load = load;
    this.gapMs = gapMs;
    this.last = 0;
    this.running = null;
    this.again = false;
    this.timer = null;
  }

  /** Refresh soon, respecting the gap. */
  request() {
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(0, this.last + this.gap() - Date.now());
    this.timer = setTimeout(() => this.run(), wait);
  }

  /** Refresh right away (after a user action); resolves when that data is shown. */
  async now() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.running) {
      await this.running;
      // The finished fetch may have started before the action: fetch again.
      return this.now();
    }
    return this.run();
  }

  gap() {
    return typeof this.gapMs === 'function' ? this.gapMs() : this.gapMs;
  }

  async run() {
    this.timer = null;
    this.last = Date.now();
    this.running = (async () => {
      try {
        await this.load();
      } catch (e) {
        console.warn(`refresh ${this.name}:`, e);
      }
    })();
    await this.running;
    this.running = null;
    if (this.again) {
      this.again = false;
      this.request();
    }
  }
}

/**
 * Every panel's Refresher, registered by the panel's module as it loads.
 * Panels refresh each other after an action (a release refreshes hosts and
 * the summary, a removal the OSD list): they do it through this registry,
 * not by importing each other, which would make import cycles. The keys
 * are fixed here, in the order refreshAll asks.
 */
export const refreshers = Object.seal({
  removals: null,
  deployments: null,
  swaps: null,
  osds: null,
  hosts: null,
  summary: null,
  health: null,
  unreachable: null,
  held: null,
  specs: null,
  benchmarks: null,
  events: null,
});

/** A typo in `key` fails at load, not silently at the first refresh. */
export function register(key, name, load, gapMs) {
  if (!(key in refreshers) || refreshers[key]) throw new Error(`refresher ${key} is unknown or registered twice`);
  refreshers[key] = new Refresher(name, load, gapMs);
  return refreshers[key];
}

export function refreshAll() {
  for (const r of Object.values(refreshers)) r.request();
}

/** A stable string for "did this data change?", ignoring keys that change on every read. */
export function signature(value, ignore = []) {
  return JSON.stringify(value, (k, v) => (ignore.includes(k) ? undefined : v));
}
