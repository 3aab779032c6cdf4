// Telling the user what happened: notices, a panel's load error, the
// confirmation asked before anything that changes the cluster.
import { $, h } from './dom.js';

export function notify(text, kind = 'info') {
  const close = h('button', { type: 'button', class: 'notice-close', 'aria-label': 'Dismiss' }, '×');
  const el = h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': `notice-${kind}` },
    h('strong', {}, kind === 'error' ? 'Error: ' : kind === 'ok' ? 'Done: ' : ''), text, close);
  close.addEventListener('click', () => el.remove());
  $('notices').append(el);
  // Errors stay until dismissed: they may explain why something did not happen.
  if (kind !== 'error') setTimeout(() => el.remove(), 8000);
}

export function showPanelError(id, err) {
  const el = $(id);
  if (!err) {
    el.hidden = true;
    el.textContent = '';
    return;
  }
  el.hidden = false;
  el.textContent = err.message || String(err);
}

/**
 * A modal confirmation; resolves to true only for the confirm button.
 * `body` is a list of nodes or strings. Focus starts on Cancel, the safe choice.
 */
export function confirmAction({ title, body, ok = 'Confirm', danger = true }) {
  return new Promise((resolve) => {
    const dialog = $('confirm-dialog');
    $('confirm-title').textContent = title;
    $('confirm-body').replaceChildren(...body.map((b) => (b instanceof Node ? b : h('p', {}, b))));
    const okBtn = $('confirm-ok');
    okBtn.textContent = ok;
    okBtn.className = danger ? 'btn danger' : 'btn primary';
    dialog.returnValue = '';
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}

/** Runs an action from a button: disables it meanwhile and reports failures. */
export async function runAction(button, what, fn) {
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (e) {
    notify(`${what}: ${e.message}`, 'error');
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}
