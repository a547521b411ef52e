// A line diff (longest common subsequence) of two texts, shown as lines marked + / - / space.

import { h } from "./dom.js";

export function lineDiff(before, after) {
  const a = String(before || "").split("\n");
  const b = String(after || "").split("\n");
  const rows = a.length + 1;
  const cols = b.length + 1;
  const table = Array.from({ length: rows }, () => new Uint16Array(cols));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i += 1; j += 1; }
    else if (table[i + 1][j] >= table[i][j + 1]) { out.push(["-", a[i]]); i += 1; }
    else { out.push(["+", b[j]]); j += 1; }
  }
  while (i < a.length) { out.push(["-", a[i]]); i += 1; }
  while (j < b.length) { out.push(["+", b[j]]); j += 1; }
  return out;
}

export function diffView(before, after) {
  return h("pre", { class: "cg-diff" }, lineDiff(before, after).map(([mark, line]) =>
    h("span", { class: mark === "+" ? "cg-add" : mark === "-" ? "cg-del" : "cg-same" }, `${mark} ${line}\n`)));
}

export function cardText(card) {
  return [`名称：${card.name}`, `标签：${(card.tags || []).join("、")}`, "评价：", card.evaluation, "正文：", card.body, "吐槽：", card.roast].join("\n");
}
