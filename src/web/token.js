// The API token: kept in sessionStorage (this tab only, gone when it
// closes) and sent only in the Authorization header, never in a URL. The
// token form asks for it after a 401.
import { $ } from './dom.js';

const TOKEN_KEY = 'osdkeeper.token';
const auth = { token: sessionStorage.getItem(TOKEN_KEY) || '', pending: null };
const tokenEntered = [];

/** The stream (refused too) reconnects, and the page asks who the new token is. */
export function onTokenEntered(fn) {
  tokenEntered.push(fn);
}

export function authHeaders(extra = {}) {
  const headers = { ...extra };
  if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
  return headers;
}

/** Shows the token form once, however many calls are waiting for it. */
export function askToken(reason) {
  if (auth.pending) return auth.pending;
  auth.pending = new Promise((resolve) => {
    const dialog = $('token-dialog');
    $('token-reason').textContent = auth.token ? `The token was refused: ${reason}` : reason;
    const input = $('token-input');
    input.value = '';
    const form = $('token-form');
    const onSubmit = (e) => {
      e.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      auth.token = value;
      sessionStorage.setItem(TOKEN_KEY, value);
      form.removeEventListener('submit', onSubmit);
      dialog.close();
      auth.pending = null;
      resolve();
      for (const fn of tokenEntered) fn();
    };
    form.addEventListener('submit', onSubmit);
    dialog.showModal();
    input.focus();
  });
  return auth.pending;
}

export function initTokenForm() {
  // Without a token nothing works: the token form cannot be dismissed.
  $('token-dialog').addEventListener('cancel', (e) => e.preventDefault());
}
