// The client for the daemon's JSON API (/api/v1, see /api/v1/openapi.json).
import { noteServerDate } from './clock.js';
import { askToken, authHeaders } from './token.js';

let unreachable = () => {};

/** The live stream registers here: a call that cannot reach the daemon makes it doubt its connection. */
export function onUnreachable(fn) {
  unreachable = fn;
}

class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export async function readBody(res) {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { error: text.slice(0, 500) };
  }
}

/**
 * One API call. A 401 asks for the token and retries; any other failure
 * throws an ApiError carrying the daemon's own message.
 * `yaml` sends the body as YAML text, `json` as JSON.
 */
export async function api(method, path, { json, yaml } = {}) {
  for (;;) {
    const headers = authHeaders({ Accept: 'application/json' });
    let body;
    if (yaml !== undefined) {
      headers['Content-Type'] = 'application/yaml';
      body = yaml;
    } else if (json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(json);
    }
    let res;
    try {
      res = await fetch(path, { method, headers, body, cache: 'no-store' });
    } catch (e) {
      unreachable();
      throw new ApiError(0, `cannot reach the daemon (${e.message})`, null);
    }
    noteServerDate(res);
    const data = await readBody(res);
    if (res.status === 401) {
      await askToken((data && data.error) || 'the daemon needs an API token');
      continue;
    }
    if (!res.ok) throw new ApiError(res.status, (data && data.error) || `HTTP ${res.status}`, data);
    return { data, headers: res.headers, status: res.status };
  }
}
