// Building the page's DOM. Stored text only ever becomes a text node (textContent): no string
// is parsed as HTML anywhere in this page, so a script in a memory is shown, never run.

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === "class") {
      element.className = value;
    } else if (name === "value") {
      element.value = value;
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function clear(element) {
  while (element.firstChild) element.removeChild(element.firstChild);
  return element;
}

export function replace(element, ...children) {
  return append(clear(element), children);
}

const TIME_FORMAT = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hour12: false };
let TIME = new Intl.DateTimeFormat("zh-CN", TIME_FORMAT);

// Times in the bot's configured zone (the "why" chain's are written in it too), not the browser's.
export function useTimeZone(zone) {
  try {
    TIME = new Intl.DateTimeFormat("zh-CN", { ...TIME_FORMAT, timeZone: zone });
  } catch {
    TIME = new Intl.DateTimeFormat("zh-CN", TIME_FORMAT);
  }
}

export function when(iso) {
  return iso ? TIME.format(new Date(iso)) : "—";
}

// A dialog over the page; resolves true when the user agrees.
export function ask(title, body, agree = "确认", danger = true) {
  return new Promise((resolve) => {
    const close = (answer) => { overlay.remove(); resolve(answer); };
    const overlay = h("div", { class: "cg-overlay", role: "dialog", "aria-modal": "true" },
      h("div", { class: "cg-dialog" },
        h("h3", {}, title),
        h("div", { class: "cg-dialog-body" }, body),
        h("div", { class: "cg-actions" },
          h("button", { class: "cg-button", onclick: () => close(false) }, "取消"),
          h("button", { class: danger ? "cg-button cg-danger" : "cg-button cg-primary", "data-agree": "1",
            onclick: () => close(true) }, agree))));
    document.body.append(overlay);
  });
}

// A short message at the top of the page.
export function notify(root, text, kind = "info") {
  const box = root.querySelector(".cg-notice");
  if (!box) return;
  replace(box, h("div", { class: `cg-note cg-${kind}`, role: kind === "error" ? "alert" : "status" }, text));
}
