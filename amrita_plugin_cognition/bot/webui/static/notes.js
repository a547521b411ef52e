// A chat's pinned memo (with its kept versions: restore one) and its pins.

import { enc, get, post } from "./api.js";
import { ask, h, notify, replace, when } from "./dom.js";

export async function notesPanel(box, context, chat) {
  replace(box, h("p", { class: "cg-muted" }, "加载中…"));
  const path = `/bots/${enc(context.bot)}/chats/${enc(chat.chat)}`;
  try {
    const notes = await get(`${path}/notes`);
    replace(box,
      h("h4", {}, "置顶备忘录"),
      h("pre", { class: "cg-pre" }, notes.memo || "（空）"),
      notes.revisions.length ? h("h4", {}, "旧版本") : null,
      h("ul", { class: "cg-list" }, notes.revisions.map((revision) => h("li", {},
        h("div", { class: "cg-muted" }, `#${revision.id} · 写于 ${when(revision.written_at)}（${revision.written_by || "未知"}）· 被替换于 ${when(revision.replaced_at)}`),
        h("pre", { class: "cg-pre" }, revision.content),
        h("button", { class: "cg-button", onclick: async () => {
          if (!(await ask("恢复这个版本？", h("p", {}, "当前的备忘录会先存为旧版本。"), "恢复", false))) return;
          try {
            notify(context.root, (await post(`${path}/memo/restore`, { revision_id: revision.id })).message, "ok");
            notesPanel(box, context, chat);
          } catch (error) {
            notify(context.root, error.message, "error");
          }
        } }, "恢复此版本")))),
      h("h4", {}, "提醒事项"),
      notes.pins.length
        ? h("ul", { class: "cg-list" }, notes.pins.map((pin) => h("li", { class: "cg-pin" }, h("span", { class: "cg-id" }, `#${pin.id}`), " ", pin.content,
          h("span", { class: "cg-muted" }, ` · ${when(pin.updated_at)}`), " ",
          h("button", { class: "cg-button cg-danger", onclick: async () => {
            if (!(await ask("删除这条提醒？", h("blockquote", { class: "cg-quote" }, pin.content), "确认删除"))) return;
            try {
              notify(context.root, (await post(`${path}/pins/${pin.id}/delete`, { confirm: true })).message, "ok");
              notesPanel(box, context, chat);
            } catch (error) {
              notify(context.root, error.message, "error");
            }
          } }, "删除"))))
        : h("p", { class: "cg-empty" }, "没有提醒事项。"));
  } catch (error) {
    replace(box, h("p", { class: "cg-error", role: "alert" }, error.message));
  }
}
