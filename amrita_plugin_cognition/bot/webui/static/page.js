// The 「记忆」 page itself (``memory.js`` is the entry the WebUI imports: it loads this module and
// the first screen's data at once). The page is drawn with the DOM; text always as textContent.

import { dataOf, get } from "./api.js";
import { h, notify, replace, useTimeZone } from "./dom.js";
import { chatsView } from "./chats.js";
import { cardsView, jobsView, knowledgeView, usersView } from "./more.js";

const TABS = [
  ["chats", "会话与记忆", chatsView],
  ["cards", "画像", cardsView],
  ["jobs", "任务", jobsView],
  ["knowledge", "知识库", knowledgeView],
  ["users", "用户数据", usersView],
];

/** Render the page into ``root``; ``started`` is the response of ``/start`` already asked for (the
 * entry module asks as soon as the WebUI imports it), or null to ask now. */
export async function mountPage(root, started = null) {
  const state = { bot: "", tab: "chats", meta: null };
  const body = h("div", { class: "cg-body" });
  const botSelect = h("select", { class: "cg-select", "aria-label": "机器人账号", onchange: () => {
    state.bot = botSelect.value;
    show();
  } });
  const tabs = h("nav", { class: "cg-tabs" });
  const configLink = h("a", { class: "cg-link", href: "#" }, "配置");
  replace(root,
    h("div", { class: "cg-page" },
      h("header", { class: "cg-header" },
        h("h2", {}, "记忆"),
        h("label", { class: "cg-inline" }, "机器人账号 ", botSelect),
        tabs,
        configLink),
      h("div", { class: "cg-notice" }),
      body));

  function show() {
    replace(tabs, TABS.map(([key, label]) => h("button", {
      class: key === state.tab ? "cg-tab cg-tab-on" : "cg-tab",
      onclick: () => { state.tab = key; show(); },
    }, label)));
    const view = TABS.find(([key]) => key === state.tab)[2];
    replace(body);
    if (!state.bot) {
      replace(body, h("p", { class: "cg-empty" }, "还没有任何记忆。机器人在聊天中记下内容后，这里会列出它的账号。"));
      return;
    }
    const prefetched = state.first && state.first.bot === state.bot && state.tab === "chats" ? state.first : null;
    state.first = null;  // the first screen only: later visits ask again
    view(body, { root, bot: state.bot }, prefetched).catch((error) => notify(root, error.message, "error"));
  }

  try {
    // one round trip for the first screen: who, the accounts, the first account's chats and page
    const { meta, bots, first } = await (started ? started.then(dataOf) : get("/start"));
    state.meta = meta;
    state.first = first;
    useTimeZone(meta.timezone);
    configLink.setAttribute("href", meta.config_url);
    configLink.setAttribute("title", "在 WebUI 的配置编辑器里修改记忆插件的配置");
    replace(botSelect, bots.map((bot) => h("option", { value: bot.bot_id }, `${bot.bot_id}（${bot.memories} 条）`)));
    state.bot = bots.length ? bots[0].bot_id : "";
    show();
  } catch (error) {
    replace(body, h("p", { class: "cg-error", role: "alert" }, error.message));
  }
}
