// 会话与记忆: the bot account's chats, one chat's memories (search, filters, pages) and what can
// be done to one memory (why, correct, forget, restore).

import { enc, get, post } from "./api.js";
import { ask, h, notify, replace, when } from "./dom.js";
import { memoryActions } from "./actions.js";
import { notesPanel } from "./notes.js";

const STATUS = { active: "有效", expired: "已过期", superseded: "已被取代", forgotten: "已遗忘" };

export async function chatsView(body, context, prefetched = null) {
  const chats = prefetched ? prefetched.chats : await get(`/bots/${enc(context.bot)}/chats`);
  const list = h("ul", { class: "cg-chat-list", "aria-label": "会话" });
  const main = h("section", { class: "cg-main" });
  replace(body, h("div", { class: "cg-columns" }, h("aside", { class: "cg-side" }, h("h3", {}, "会话"), list), main));
  if (!chats.length) {
    replace(main, h("p", { class: "cg-empty" }, "这个账号还没有会话记忆。"));
    return;
  }
  const open = (chat, firstPage = null) => {
    for (const item of list.children) item.classList.toggle("cg-chat-on", item.dataset.chat === chat.chat);
    memoriesPanel(main, context, chat, firstPage);
  };
  const toggle = async (chat) => {
    const on = !chat.memory_on;
    const agreed = await ask(on ? "开启这个会话的记忆？" : "关闭这个会话的记忆？",
      h("p", {}, on ? "开启后机器人会继续记住这个会话里的内容。" : "关闭后机器人不再记住、也不再想起这个会话里的内容（已有的记忆保留）。"),
      on ? "开启" : "关闭", !on);
    if (!agreed) return;
    try {
      notify(context.root, (await post(`/bots/${enc(context.bot)}/chats/${enc(chat.chat)}/switch`, { on })).message, "ok");
      await chatsView(body, context);
    } catch (error) {
      notify(context.root, error.message, "error");
    }
  };
  replace(list, chats.map((chat) => h("li", { "data-chat": chat.chat },
    h("button", { class: "cg-chat", onclick: () => open(chat) },
      h("span", { class: "cg-chat-name" }, chat.kind === "group" ? `群 ${chat.id}` : `私聊 ${chat.id}`),
      h("span", { class: "cg-chat-counts" }, `${chat.active} 条有效 · ${chat.expired} 条过期`)),
    h("button", { class: chat.memory_on ? "cg-badge cg-on" : "cg-badge cg-off", title: "点击切换这个会话的记忆开关",
      onclick: () => toggle(chat) }, chat.memory_on ? "记忆开" : "记忆关"))));
  const page = prefetched && prefetched.page && prefetched.page.chat === chats[0].chat ? prefetched.page : null;
  open(chats[0], page);
}

function memoriesPanel(main, context, chat, firstPage) {
  const filters = { q: "", speaker: "", status: "", since: "", until: "", page: 1, size: 20 };
  const q = h("input", { class: "cg-input", type: "search", placeholder: "搜索记忆内容", maxlength: 100, name: "q" });
  const speaker = h("input", { class: "cg-input cg-narrow", placeholder: "说话人 QQ", maxlength: 12, name: "speaker" });
  const status = h("select", { class: "cg-select", name: "status" },
    h("option", { value: "" }, "全部状态"), Object.entries(STATUS).slice(0, 3).map(([key, label]) => h("option", { value: key }, label)));
  const since = h("input", { class: "cg-input", type: "date", name: "since", "aria-label": "起始日期" });
  const until = h("input", { class: "cg-input", type: "date", name: "until", "aria-label": "结束日期" });
  const results = h("div", { class: "cg-results" });
  const pager = h("div", { class: "cg-pager" });
  const search = (event) => {
    if (event) event.preventDefault();
    Object.assign(filters, { q: q.value.trim(), speaker: speaker.value.trim(), status: status.value,
      since: since.value, until: until.value, page: 1 });
    load();
  };
  const tabs = h("div", { class: "cg-subtabs" },
    h("button", { class: "cg-tab cg-tab-on", onclick: () => { replace(extra); } }, "记忆"),
    h("button", { class: "cg-tab", onclick: () => notesPanel(extra, context, chat) }, "备忘录与提醒"));
  const extra = h("div", { class: "cg-extra" });
  replace(main,
    h("h3", {}, chat.kind === "group" ? `群 ${chat.id} 的记忆` : `与 ${chat.id} 的私聊记忆`),
    tabs, extra,
    h("form", { class: "cg-filters", onsubmit: search }, q, speaker, status, since, until,
      h("button", { class: "cg-button cg-primary", type: "submit" }, "查询")),
    results, pager);

  async function load() {
    replace(results, h("p", { class: "cg-muted" }, "加载中…"));
    const started = performance.now();
    try {
      const page = await get(`/bots/${enc(context.bot)}/chats/${enc(chat.chat)}/memories`, filters);
      results.dataset.ms = String(Math.round(performance.now() - started));
      render(page);
    } catch (error) {
      replace(results, h("p", { class: "cg-error", role: "alert" }, error.message));
    }
  }

  function render(page) {
    if (!page.items.length) {
      replace(results, h("p", { class: "cg-empty" }, "没有符合条件的记忆。"));
    } else {
      replace(results, h("ol", { class: "cg-memories" }, page.items.map((item) => memoryRow(item))));
    }
    // the first screen is on the page: bench/webui_page.py reads this mark
    if (!performance.getEntriesByName("cognition:first-screen").length) performance.mark("cognition:first-screen");
    const pages = Math.max(1, Math.ceil(page.total / page.size));
    replace(pager,
      h("button", { class: "cg-button", disabled: page.page <= 1, onclick: () => { filters.page -= 1; load(); } }, "上一页"),
      h("span", { class: "cg-muted" }, `第 ${page.page} / ${pages} 页，共 ${page.total} 条`),
      h("button", { class: "cg-button", disabled: page.page >= pages, onclick: () => { filters.page += 1; load(); } }, "下一页"));
  }

  function memoryRow(item) {
    const detail = h("div", { class: "cg-detail" });
    return h("li", { class: `cg-memory cg-status-${item.status}`, "data-id": item.id },
      h("div", { class: "cg-memory-head" },
        h("span", { class: "cg-id" }, `#${item.id}`),
        h("span", { class: "cg-badge" }, STATUS[item.status] || item.status),
        h("span", { class: "cg-muted" }, `${item.speaker.name || item.speaker.id || "未知"} · 记录于 ${when(item.recorded_at)}`)),
      h("p", { class: "cg-text" }, item.text),
      h("p", { class: "cg-muted cg-small" }, [item.how, item.supersedes.length ? `更正过 ${item.supersedes.length} 次` : ""].filter(Boolean).join(" · ")),
      memoryActions(item, context, detail, load),
      detail);
  }

  if (firstPage) render(firstPage);
  else load();
}
