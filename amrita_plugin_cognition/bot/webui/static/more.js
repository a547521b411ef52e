// 画像, 任务, 知识库, 用户数据: the rest of one bot account's memory.

import { enc, get, post } from "./api.js";
import { cardText, diffView } from "./diff.js";
import { ask, h, notify, replace, when } from "./dom.js";

const failed = (box) => (error) => replace(box, h("p", { class: "cg-error", role: "alert" }, error.message));

export async function cardsView(body, context) {
  const page = await get(`/bots/${enc(context.bot)}/cards`);
  const detail = h("section", { class: "cg-main" });
  replace(body, h("div", { class: "cg-columns" },
    h("aside", { class: "cg-side" }, h("h3", {}, `画像（${page.total}）`),
      h("ul", { class: "cg-chat-list" }, page.items.map((card) => h("li", {},
        h("button", { class: "cg-chat", onclick: () => cardDetail(detail, context, card).catch(failed(detail)) },
          h("span", { class: "cg-chat-name" }, card.label),
          h("span", { class: "cg-chat-counts" }, `${card.name || "—"} · ${card.revisions} 个旧版本`)))))),
    detail));
  if (!page.items.length) replace(detail, h("p", { class: "cg-empty" }, "还没有画像。"));
}

async function cardDetail(box, context, card) {
  const path = `/bots/${enc(context.bot)}/cards/${card.entity_type}/${enc(card.entity_id)}`;
  const data = await get(path);
  const current = Object.fromEntries(data.parts.map((part) => [part.part, part]));
  replace(box,
    h("h3", {}, `${card.entity_type === "user" ? "用户" : "群"} ${card.entity_id} 的画像`),
    data.parts.map((part) => h("div", { class: "cg-card" }, h("h4", {}, part.label), h("pre", { class: "cg-pre" }, cardText(part)))),
    h("h4", {}, "旧版本（与当前版本的差异）"),
    data.revisions.length ? h("ul", { class: "cg-list" }, data.revisions.map((revision) => h("li", {},
      h("div", { class: "cg-muted" }, `#${revision.id} · ${revision.card.label} · ${revision.written_by || "未知"} 写于 ${when(revision.card.updated_at)}，被替换于 ${when(revision.replaced_at)}`),
      diffView(cardText(revision.card), current[revision.card.part] ? cardText(current[revision.card.part]) : ""),
      h("button", { class: "cg-button", onclick: async () => {
        if (!(await ask("恢复这个版本？", h("p", {}, "当前版本会先存为旧版本。"), "恢复", false))) return;
        try {
          notify(context.root, (await post(`${path}/restore`, { revision_id: revision.id, part: revision.card.part })).message, "ok");
          await cardDetail(box, context, card);
        } catch (error) {
          notify(context.root, error.message, "error");
        }
      } }, "恢复此版本")))) : h("p", { class: "cg-empty" }, "没有旧版本。"));
}

export async function jobsView(body, context) {
  const state = h("select", { class: "cg-select", onchange: () => load() },
    h("option", { value: "" }, "全部"), h("option", { value: "pending" }, "等待中"), h("option", { value: "dead" }, "已放弃（失败）"));
  const list = h("div", {});
  replace(body, h("div", { class: "cg-filters" }, h("label", {}, "状态 ", state)), list);
  const act = async (kind, ids) => {
    if (kind === "drop" && !(await ask("删除这些任务？", h("p", {}, "删除后这些观察不会再被写成记忆。"), "删除"))) return;
    try {
      notify(context.root, (await post(`/bots/${enc(context.bot)}/jobs/${kind}`, { ids })).message, "ok");
      load();
    } catch (error) {
      notify(context.root, error.message, "error");
    }
  };
  async function load() {
    const jobs = await get(`/bots/${enc(context.bot)}/jobs`, { state: state.value });
    replace(list, jobs.length ? h("table", { class: "cg-table" },
      h("thead", {}, h("tr", {}, ["编号", "类型", "状态", "会话", "尝试", "入队", "错误", ""].map((name) => h("th", {}, name)))),
      h("tbody", {}, jobs.map((job) => h("tr", {},
        h("td", {}, `#${job.id}`), h("td", {}, job.kind), h("td", {}, job.state), h("td", {}, job.scope),
        h("td", {}, String(job.attempts)), h("td", {}, when(job.enqueued_at)), h("td", { class: "cg-small" }, job.last_error || ""),
        h("td", {}, job.state === "dead" ? h("button", { class: "cg-button", onclick: () => act("retry", [job.id]) }, "重试") : null,
          job.state !== "processing" ? h("button", { class: "cg-button cg-danger", onclick: () => act("drop", [job.id]) }, "删除") : null)))))
      : h("p", { class: "cg-empty" }, "队列里没有任务。"));
  }
  await load();
}

export async function knowledgeView(body, context) {
  const entries = await get(`/bots/${enc(context.bot)}/knowledge`);
  const detail = h("section", { class: "cg-main" });
  replace(body, h("div", { class: "cg-columns" },
    h("aside", { class: "cg-side" }, h("h3", {}, `知识库（${entries.length}）`),
      h("ul", { class: "cg-chat-list" }, entries.map((entry) => h("li", {},
        h("button", { class: "cg-chat", onclick: () => entryDetail(detail, context, entry.id).catch(failed(detail)) },
          h("span", { class: "cg-chat-name" }, entry.title),
          h("span", { class: "cg-chat-counts" }, `${entry.state === "active" ? "有效" : "待重写"} · 第 ${entry.version} 版`)))))),
    detail));
  if (!entries.length) replace(detail, h("p", { class: "cg-empty" }, "知识库是空的。"));
}

async function entryDetail(box, context, id) {
  const path = `/bots/${enc(context.bot)}/knowledge/${id}`;
  const entry = await get(path);
  replace(box, h("h3", {}, entry.title), h("p", {}, entry.summary), h("pre", { class: "cg-pre" }, entry.body),
    h("p", { class: "cg-muted" }, `来源记忆：${entry.source_ids.map((item) => `#${item}`).join("、") || "无"} · ${entry.updated_by} 更新于 ${when(entry.updated_at)}`),
    entry.history.length ? h("h4", {}, "旧版本") : null,
    entry.history.map((old) => h("div", {}, h("div", { class: "cg-muted" }, `第 ${old.version} 版`), diffView(old.body, entry.body))),
    h("button", { class: "cg-button cg-danger", onclick: async () => {
      if (!(await ask("删除这条知识？", h("blockquote", { class: "cg-quote" }, entry.title), "确认删除"))) return;
      try {
        notify(context.root, (await post(`${path}/delete`, { confirm: true })).message, "ok");
        await knowledgeView(box.parentElement.parentElement, context);
      } catch (error) {
        notify(context.root, error.message, "error");
      }
    } }, "删除"));
}

export async function usersView(body, context) {
  const user = h("input", { class: "cg-input", placeholder: "用户 QQ 号", maxlength: 12, inputmode: "numeric" });
  const out = h("div", {});
  const valid = () => /^\d{5,12}$/.test(user.value.trim()) || (notify(context.root, "请输入 5 到 12 位的 QQ 号", "error"), false);
  const exportUser = async () => {
    if (!valid()) return;
    const id = user.value.trim();
    try {
      const documents = (await post(`/bots/${enc(context.bot)}/users/${id}/export`, {})).data;
      const blob = new Blob([documents.map((item) => JSON.stringify(item)).join("\n") + "\n"], { type: "application/x-ndjson" });
      const link = h("a", { href: URL.createObjectURL(blob), download: `cognition-${context.bot}-${id}.jsonl` }, "下载导出文件");
      replace(out, h("p", {}, `共 ${documents.length - 1} 条记录。`, link));
      link.click();
    } catch (error) {
      notify(context.root, error.message, "error");
    }
  };
  const deleteAll = async () => {
    if (!valid()) return;
    const id = user.value.trim();
    const typed = h("input", { class: "cg-input", placeholder: "再输入一次 QQ 号" });
    if (!(await ask(`删除 ${id} 的全部数据？`, [h("p", {}, "这个账号下关于该用户的记忆、笔记、聊天记录、画像都会被删除，不能恢复。请再输入一次 QQ 号确认："), typed], "全部删除"))) return;
    try {
      const answer = await post(`/bots/${enc(context.bot)}/users/${id}/delete-all`, { confirm_user: typed.value.trim() });
      replace(out, h("p", {}, answer.message), h("ul", { class: "cg-list" },
        Object.entries(answer.data.counts).map(([name, count]) => h("li", {}, `${name}: ${count}`)),
        answer.data.kept.map((line) => h("li", { class: "cg-muted" }, line))));
    } catch (error) {
      notify(context.root, error.message, "error");
    }
  };
  replace(body, h("div", { class: "cg-filters" }, user,
    h("button", { class: "cg-button cg-primary", onclick: exportUser }, "导出"),
    h("button", { class: "cg-button cg-danger", onclick: deleteAll }, "删除全部")), out);
}
