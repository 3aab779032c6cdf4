// Building the page's elements. Every text that came from the API reaches
// the DOM through textContent or attributes (here: text nodes and
// setAttribute), never innerHTML, so a host or device name cannot inject
// markup.

export const $ = (id) => document.getElementById(id);
const SVG_NS = 'http://www.w3.org/2000/svg';

/** Appends children: nodes as they are, anything else as text (escaped by the DOM). */
function appendAll(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  return el;
}

/** h('td', {class: 'x'}, 'text', child): an HTML element. */
export function h(tag, props, ...children) {
  return appendAll(setProps(document.createElement(tag), props), children);
}

/** svg('line', {x1: 0, ...}): an SVG element. */
export function svg(tag, props, ...children) {
  return appendAll(setProps(document.createElementNS(SVG_NS, tag), props), children);
}

export function badge(text, kind, props = {}) {
  return h('span', { ...props, class: `badge ${kind || ''}`.trim() }, text);
}

export function emptyState(text) {
  return h('p', { class: 'empty' }, text);
}

/**
 * Live panels are re-rendered every second or so; this keeps the keyboard
 * focus on "the same" control afterwards (same row, same control), so that
 * a Stop or Release button stays reachable while its row updates.
 */
export function rerender(container, render) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? focusKey(active) : null;
  render();
  if (!key) return;
  for (const el of container.querySelectorAll('button, input, select, a[href]')) {
    if (focusKey(el) === key) {
      el.focus();
      return;
    }
  }
}

function focusKey(el) {
  const row = el.closest('[data-removal-id], [data-osd-id], [data-host], [data-service-name]');
  const rowKey = row ? ['removalId', 'osdId', 'host', 'path', 'serviceName'].map((k) => row.dataset[k] || '').join('/') : '';
  return `${rowKey}|${el.id || el.dataset.testid || el.textContent}`;
}

/** For search fields: one server query once typing pauses, not one per key. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
