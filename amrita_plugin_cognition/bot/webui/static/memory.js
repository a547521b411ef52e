// The 「记忆」 page of Amrita's WebUI: plain ES modules (no build step). The WebUI's SPA imports
// this entry and renders its default export, a React component that gives the page a container.
//
// The entry imports nothing statically: when the SPA imports it, it starts at once, side by side,
// the first screen's one API call (``/start``), the stylesheet and every module of the page (one
// round of requests instead of a chain of imports found module by module). The component mounts
// the page (``page.js``) with that answer once both are in.

const HOST = window.__AMRITA_HOST__ || {};
const React = HOST.React;
const STYLE_URL = new URL("./memory.css", import.meta.url).href;
const MODULES = ["./page.js", "./api.js", "./dom.js", "./chats.js", "./actions.js", "./notes.js", "./more.js", "./diff.js"];

function startLoading() {
  if (!document.querySelector(`link[href="${STYLE_URL}"]`)) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = STYLE_URL;
    document.head.append(link);
  }
  const page = Promise.all(MODULES.map((name) => import(name))).then(([module]) => module);
  // the raw answer: page.js reads it (errors included) as every other call of the page
  const api = fetch("/api/cognition/start", { credentials: "same-origin" });
  api.catch(() => {});  // a network error is shown by the page when it reads the answer
  return { page, api };
}

// Asked when the WebUI imports this module (the first visit); a later visit asks again.
let early = startLoading();

export async function mountPage(root) {
  const { page, api } = early || startLoading();
  early = null;
  const { mountPage: mount } = await page;
  return mount(root, api);
}

export default function CognitionMemoryPage() {
  const ref = React.useRef(null);
  // on commit, before the first paint
  React.useLayoutEffect(() => {
    const root = ref.current;
    if (root) {
      mountPage(root).catch((error) => {  // a module that did not load: said in the page, as text
        root.textContent = `记忆页加载失败：${error && error.message ? error.message : error}`;
      });
    }
  }, []);
  return React.createElement("div", { ref, className: "cg-root", "data-page": "cognition-memory" });
}
