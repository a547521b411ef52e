// What can be done to one memory: why it is remembered (the chain), correct, forget (asked
// first, as in chat), restore an expired one.

import { enc, get, post } from "./api.js";
import { ask, h, notify, replace } from "./dom.js";

export function memoryActions(item, context, detail, reload) {
  const path = `/bots/${enc(context.bot)}/memories/${item.id}`;
  const buttons = [h("button", { class: "cg-button cg-why", onclick: () => showWhy(detail, context, path) }, "为什么记得？")];
  if (item.status === "active") {
    buttons.push(h("button", { class: "cg-button", onclick: () => correct(detail, context, path, item, reload) }, "更正"));
  }
  if (item.status === "expired") {
    buttons.push(h("button", { class: "cg-button", onclick: () => run(context, reload, post(`${path}/restore`, {})) }, "恢复"));
  }
  if (item.status === "active" || item.status === "expired") {
    buttons.push(h("button", { class: "cg-button cg-danger cg-forget", onclick: () => forget(context, path, item, reload) }, "删除"));
  }
  return h("div", { class: "cg-actions" }, buttons);
}

async function run(context, reload, request) {
  try {
    const answer = await request;
    notify(context.root, answer.message || "完成", "ok");
    await reload();
  } catch (error) {
    notify(context.root, error.message, "error");
  }
}

async function forget(context, path, item, reload) {
  const agreed = await ask("删除这条记忆？",
    [h("p", {}, "删除后它和它的所有旧版本都会被永久遗忘，机器人不会再想起，也不能恢复："),
      h("blockquote", { class: "cg-quote" }, item.text)],
    "确认删除");
  if (agreed) await run(context, reload, post(`${path}/forget`, { confirm: true }));
}

function correct(detail, context, path, item, reload) {
  const input = h("textarea", { class: "cg-input cg-area", maxlength: 2000, rows: 3, name: "text" });
  input.value = item.text;
  replace(detail, h("form", { class: "cg-correct", onsubmit: (event) => {
    event.preventDefault();
    run(context, reload, post(`${path}/correct`, { text: input.value }));
  } },
  h("label", {}, "更正为（旧版本会保留在历史里）："), input,
  h("div", { class: "cg-actions" },
    h("button", { class: "cg-button", type: "button", onclick: () => replace(detail) }, "取消"),
    h("button", { class: "cg-button cg-primary", type: "submit" }, "保存更正"))));
}

async function showWhy(detail, context, path) {
  replace(detail, h("p", { class: "cg-muted" }, "加载中…"));
  try {
    const chain = await get(`${path}/why`);
    replace(detail, h("div", { class: "cg-why-chain", role: "region", "aria-label": "为什么记得" },
      h("div", { class: "cg-why-head" },
        h("strong", {}, `为什么记得 #${chain.memory.id}`),
        h("button", { class: "cg-button", onclick: () => replace(detail) }, "收起")),
      h("ol", { class: "cg-steps" }, chain.steps.map((step) => h("li", { class: `cg-step cg-step-${step.stage}` },
        h("div", { class: "cg-step-title" }, step.title),
        h("dl", {}, step.items.map((entry) => [h("dt", {}, entry.label), h("dd", {}, entry.text)])))))));
  } catch (error) {
    replace(detail, h("p", { class: "cg-error", role: "alert" }, error.message));
  }
}
